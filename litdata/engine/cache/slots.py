"""``ConnectionSlots``: the connection budget of a node, shared by every process on it.

Ranks and DataLoader workers of one machine share its network link. Each request to a store
holds one of ``count`` slot files in the cache root's ``.connections`` folder, locked
exclusive, so at most ``count`` requests are in flight on the node however many processes
read. The locks are POSIX record locks (``lockf``), which a forked DataLoader worker does not
inherit (a ``flock`` held by the parent at the fork would stay held by the child's copy of the
descriptor); the kernel drops a dead process's locks, so a killed worker frees its slots.

While every slot is taken, one thread per process looks for a free one (every 2 ms, then
less often, up to 8 ms); the process's other waiting threads wait for it without spending
CPU. Each of them polling every slot file every 2 ms had cost two DataLoader workers
reading one 256 MB chunk each a third of a core.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from litdata.core import config
from litdata.engine.cache.directory import make_folder

__all__ = ["ConnectionSlots", "node_slots"]

_POLL_SECONDS = 0.002
#: The longest wait between two looks while every slot stays taken.
_MOST_POLL_SECONDS = 0.008
#: A slot whose file cannot be written: it bounds this process's requests only.
_UNSHARED = -1


class ConnectionSlots:
    """``count`` node-wide slots in ``folder``.

    Args:
        folder: The folder of the slot files (created on first use).
        count: How many slots.
        mode: The files' permission bits (the cache's).
    """

    def __init__(self, folder: Path, count: int, mode: int | None = None) -> None:
        self.count = count
        self.folder = folder
        self.mode = config.cache_mode() if mode is None else mode
        self._descriptors: dict[int, int] = {}
        self._free = list(range(count))
        self._guard = threading.Lock()
        #: Held by the one thread of this process looking for a slot; the others wait on it
        #: (without spending CPU) instead of each polling every slot file.
        self._looking = threading.Lock()
        self._next = 0

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one slot (waiting until another process or thread frees one)."""
        number = self._take()
        try:
            yield
        finally:
            descriptor = self._descriptors[number]
            if descriptor != _UNSHARED:
                fcntl.lockf(descriptor, fcntl.LOCK_UN)
            with self._guard:
                self._free.append(number)

    def _take(self) -> int:
        with self._looking:  # one looker per process: a thread behind it waits its turn
            pause = _POLL_SECONDS
            while True:
                with self._guard:
                    free = list(self._free)
                start = self._next
                for number in sorted(free, key=lambda n: (n - start) % self.count):
                    with self._guard:
                        if number not in self._free:
                            continue
                        self._free.remove(number)
                    if self._lock(number):
                        self._next = (number + 1) % self.count
                        return number
                    with self._guard:
                        self._free.append(number)
                time.sleep(pause)
                pause = min(2 * pause, _MOST_POLL_SECONDS)

    def _lock(self, number: int) -> bool:
        descriptor = self._descriptors.get(number)
        if descriptor is None:
            path = self.folder / f"slot-{number}.lock"
            try:
                make_folder(self.folder, self.mode)
                descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, self.mode)
            except OSError:  # a read-only cache, or another user's slot: this process's only
                descriptor = _UNSHARED
            self._descriptors[number] = descriptor
        if descriptor == _UNSHARED:
            return True
        try:
            fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another process holds it
            return False
        return True


_SLOTS: dict[tuple[int, str], ConnectionSlots] = {}
_SLOTS_LOCK = threading.Lock()


def node_slots(root: Path, mode: int | None = None) -> ConnectionSlots:
    """This process's handle on the node's slots under the cache root ``root``."""
    key = (os.getpid(), str(root))
    with _SLOTS_LOCK:
        found = _SLOTS.get(key)
        if found is None:
            budget = config.connection_budget()
            found = _SLOTS[key] = ConnectionSlots(root / ".connections", budget, mode)
        return found
