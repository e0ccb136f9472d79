"""Per-chunk file locks, shared by every process on the machine (``flock``).

A reader holds a chunk's lock *shared* while it uses the chunk, so no other process evicts it;
a downloader holds it *exclusive* while it fetches the chunk, so no one fetches it twice. The
kernel drops a dead process's locks, so a ``kill -9`` never leaves a chunk pinned or blocked.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path

from litdata.core import config
from litdata.core.registry import hooks
from litdata.engine.cache.directory import LOCKS, make_folder

__all__ = ["ChunkLock", "LockTimeoutError"]

_POLL_SECONDS = 0.01


class LockTimeoutError(TimeoutError):
    """A lock was not granted in time."""


class ChunkLock:
    """The lock of one cached file (``.locks/<name>.lock`` beside it).

    Args:
        directory: The cache version folder.
        name: The cached file's name.
        file_mode: The lock file's permission bits (the cache's); ``None``: the configured
            cache mode.
    """

    __slots__ = ("_descriptor", "_file_mode", "mode", "path")

    def __init__(self, directory: Path, name: str, file_mode: int | None = None) -> None:
        self.path = directory / LOCKS / f"{name}.lock"
        self._descriptor: int | None = None
        self._file_mode = file_mode
        #: ``"shared"``, ``"exclusive"`` or ``None`` when not held.
        self.mode: str | None = None

    def _open(self) -> int:
        if self._descriptor is None:
            mode = config.cache_mode() if self._file_mode is None else self._file_mode
            make_folder(self.path.parent, mode)
            # Read-only is enough to flock, and works for the users a shared cache admits.
            descriptor = os.open(self.path, os.O_RDONLY | os.O_CREAT, mode)
            with contextlib.suppress(OSError):  # another user's lock file in a shared cache
                os.fchmod(descriptor, mode)  # whatever the umask
            self._descriptor = descriptor
        return self._descriptor

    def acquire(self, mode: str, timeout: float | None = None) -> bool:
        """Take the lock ``"shared"`` or ``"exclusive"`` (or convert a held one).

        Args:
            mode: The lock mode.
            timeout: Seconds to wait; ``0`` tries once, ``None`` waits for ever.

        Returns:
            Whether the lock was granted.
        """
        asked = time.perf_counter()
        granted = self._acquire(mode, timeout)
        name = self.path.name.removesuffix(".lock")
        hooks.lock_waited(name, mode, granted, time.perf_counter() - asked)
        return granted

    def _acquire(self, mode: str, timeout: float | None) -> bool:
        operation = fcntl.LOCK_SH if mode == "shared" else fcntl.LOCK_EX
        descriptor = self._open()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(descriptor, operation | fcntl.LOCK_NB)
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    return False
                time.sleep(_POLL_SECONDS)
                continue
            self.mode = mode
            return True

    def release(self) -> None:
        """Give the lock up (closing its file)."""
        if self._descriptor is not None:
            os.close(self._descriptor)  # closing drops the flock
            self._descriptor = None
        self.mode = None

    def __del__(self) -> None:
        self.release()
