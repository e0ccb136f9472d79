"""Batches from DataLoader worker processes through shared memory, without pickling the payload.

Each worker process keeps a few *slots*, each one file in ``/dev/shm`` that it maps once and
reuses. A finished batch is copied into a free slot (tensors, numpy arrays and ``bytes`` alike;
a list of ``bytes`` as one buffer plus offsets, see ``arena_layout``), and only an
``ArenaBatch``, a descriptor of a few hundred bytes, goes through torch's result queue. The
training process maps each slot once (and unlinks its file at once, so nothing outlives the
processes), and hands out tensors and arrays that view the slot; ``bytes`` are copied out, as
they must be ``bytes``.

A slot is free again only once the consumer has dropped every tensor and array of its batch
(a ``weakref.finalize`` on the object their memory comes from clears the slot's busy byte).
A worker whose slots are all held (the training loop keeps more than ``MAX_SLOTS`` batches
alive) grows no further: its batches travel the pipe, copied, until a slot is released. A
batch with a leaf no slot can hold (a custom ``collate_fn``'s own objects) travels the pipe too.
"""

from __future__ import annotations

import atexit
import mmap
import os
import re
import secrets
import threading
import weakref
from itertools import accumulate
from pathlib import Path
from typing import Any

import numpy as np

from litdata.core.processes import running, started_at
from litdata.streaming.workers.arena.layout import ALIGN, Layout, Spec, owner_of, read, write

__all__ = [
    "MAX_SLOTS",
    "SHM_DIR",
    "InSlot",
    "agree",
    "available",
    "close_session",
    "new_session",
    "open_session",
    "sweep_dead",
    "writer_for",
]

#: Where slots live: a RAM file system every Linux has.
SHM_DIR = Path("/dev/shm")  # noqa: S108  # names carry a random token; files are 0600
#: Slots a worker may hold; once all are held by the consumer, its batches take the pipe.
MAX_SLOTS = 8
#: A new slot is this much larger than the batch that asked for it, so that slightly
#: larger batches later fit without a new slot.
HEADROOM = 1.25

#: Every file of a session is named ``litdata-arena-<training process id>-<token>-...``.
_SESSION_FILE = re.compile(r"litdata-arena-(\d+)-[0-9a-f]+-")
#: A file changed this long before its training process started is not that process's: the
#: id was reused (start times are known to a clock tick).
_REUSED_SLACK = 1.0

_BUSY = 0  # offset of the busy byte: 1 from the worker's write until the consumer's release

_writers: dict[str, _Writer] = {}  # in a worker process: its slots, by session
_readers: dict[str, _Reader] = {}  # in the training process: the mapped slots, by session


class InSlot:
    """Batches in a worker's slot, as they travel the result queue: where each one lies."""

    __slots__ = ("name", "retired", "session", "specs")

    def __init__(self, session: str, name: str, specs: tuple[tuple[int, Spec], ...]) -> None:
        self.session = session
        self.name = name
        self.specs = specs  # (offset in the slot, spec) of each batch
        self.retired: tuple[str, ...] = ()  # slots of this worker it no longer uses

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.session, self.name, self.specs, self.retired)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.session, self.name, self.specs, self.retired = state

    def open(self) -> list[Any]:
        """The batches, viewing their slot (in the training process, while its session is open)."""
        reader = _readers.get(self.session)
        if reader is None:
            raise RuntimeError(
                f"Batches in shared-memory slot {self.name} arrived after their loader's epoch "
                f"ended; they cannot be read any more."
            )
        return reader.open(self)


class _Slot:
    """One shared-memory file of a worker, mapped once."""

    __slots__ = ("capacity", "data", "map", "name")

    def __init__(self, name: str, capacity: int) -> None:
        path = SHM_DIR / name
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:  # reserve the pages now: a full /dev/shm fails here, not with SIGBUS later
            os.posix_fallocate(descriptor, 0, capacity)
            self.map = mmap.mmap(descriptor, capacity)
        except OSError:
            os.unlink(path)
            raise
        finally:
            os.close(descriptor)
        self.name = name
        self.capacity = capacity - ALIGN
        self.data = np.frombuffer(self.map, dtype=np.uint8, offset=ALIGN)

    @property
    def free(self) -> bool:
        return self.map[_BUSY] == 0


class _Writer:
    """A worker process's slots."""

    def __init__(self, session: str) -> None:
        self._session = session
        self._slots: list[_Slot] = []
        self._retired: list[str] = []
        self._made = 0
        self._failed = False  # no more slots could be made (a full /dev/shm)

    def send(self, layouts: list[Layout]) -> InSlot | None:
        """Copy batches into one free slot: where they lie, or ``None`` (send them by pipe)."""
        starts = list(accumulate((layout.size for layout in layouts), initial=0))
        slot = None if self._failed else self._slot_for(starts[-1])
        if slot is None:
            return None
        slot.map[_BUSY] = 1
        for start, layout in zip(starts, layouts, strict=False):
            write(slot.data[start:], layout)
        specs = tuple((start, layout.spec) for start, layout in zip(starts, layouts, strict=False))
        sent = InSlot(self._session, slot.name, specs)
        sent.retired, self._retired = tuple(self._retired), []
        return sent

    def _slot_for(self, size: int) -> _Slot | None:
        free = [slot for slot in self._slots if slot.free]
        fitting = [slot for slot in free if slot.capacity >= size]
        if fitting:
            return min(fitting, key=lambda slot: slot.capacity)
        if free:  # replace the largest free slot by a larger one
            victim = max(free, key=lambda slot: slot.capacity)
            self._slots.remove(victim)
            self._retired.append(victim.name)
        elif len(self._slots) >= MAX_SLOTS:
            return None
        capacity = -(-(ALIGN + int(size * HEADROOM)) // mmap.PAGESIZE) * mmap.PAGESIZE
        try:
            slot = _Slot(f"{self._session}-{os.getpid()}-{self._made}", capacity)
        except OSError:
            self._failed = True
            return None
        self._made += 1
        self._slots.append(slot)
        return slot


def _release(segment: mmap.mmap) -> None:
    segment[_BUSY] = 0


class _Reader:
    """The training process's mappings of one session's slots."""

    def __init__(self) -> None:
        self._maps: dict[str, mmap.mmap] = {}
        self._lock = threading.Lock()  # the pinning thread reads batches too

    def open(self, batch: InSlot) -> list[Any]:
        with self._lock:
            for name in batch.retired:
                self._maps.pop(name, None)
            segment = self._maps.get(batch.name)
            if segment is None:
                segment = self._maps[batch.name] = _map_and_unlink(SHM_DIR / batch.name)
        owner = owner_of(segment, ALIGN)
        weakref.finalize(owner, _release, segment)
        slot = np.frombuffer(owner, dtype=np.uint8)
        return [read(spec, slot[start:]) for start, spec in batch.specs]

    def clear(self) -> None:
        with self._lock:
            self._maps.clear()


def _map_and_unlink(path: Path) -> mmap.mmap:
    descriptor = os.open(path, os.O_RDWR)
    try:
        return mmap.mmap(descriptor, 0)
    finally:
        os.close(descriptor)
        os.unlink(path)  # the mappings keep the memory; no file is left behind


def writer_for(session: str) -> _Writer:
    """This worker process's slots of ``session`` (made on first use)."""
    writer = _writers.get(session)
    if writer is None:
        writer = _writers[session] = _Writer(session)
    return writer


def agree(session: str, key: str, proposal: int) -> int:
    """The value of ``key`` every worker of ``session`` uses: the first proposal made.

    The first worker to propose links a file holding its value into place (atomically);
    the others read that file.
    """
    path = SHM_DIR / f"{session}-{key}"
    draft = SHM_DIR / f"{session}-{key}-{os.getpid()}"
    draft.write_text(str(proposal))
    try:
        os.link(draft, path)
    except FileExistsError:
        proposal = int(path.read_text())
    finally:
        draft.unlink()
    return proposal


def new_session() -> str:
    """A new session's name, carrying this (the training) process's id."""
    return f"litdata-arena-{os.getpid()}-{secrets.token_hex(4)}"


def _orphaned(path: Path, pid: int) -> bool:
    """Whether the session file ``path`` belongs to training process ``pid``, which is gone."""
    if not running(pid):
        return True
    started = started_at(pid)
    try:
        changed = path.stat().st_ctime
    except FileNotFoundError:
        return False
    return started is not None and started > changed + _REUSED_SLACK


def sweep_dead() -> list[Path]:
    """Remove the files of sessions whose training process is gone; the files removed.

    A training process killed outright (the OOM killer's ``SIGKILL``) never closes its
    sessions: the slots its workers filled, and their group file, would hold RAM in
    ``/dev/shm`` until the machine restarts. Each new session of any process sweeps them.
    """
    removed = []
    for path in SHM_DIR.glob("litdata-arena-*"):
        found = _SESSION_FILE.match(path.name)
        if found is not None and _orphaned(path, int(found.group(1))):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def open_session(session: str) -> None:
    """Get ready, in the training process, to read the slots of ``session``.

    A session still open when the process exits (an epoch's iterator never closed) is closed
    then. The files of sessions whose training process died are removed first.
    """
    sweep_dead()
    if not _readers:
        atexit.unregister(_close_all)
        atexit.register(_close_all)
    _readers[session] = _Reader()


def _close_all() -> None:
    for session in list(_readers):
        close_session(session)


def close_session(session: str) -> None:
    """Forget ``session``'s slots, and remove the files of those that no batch reached.

    Batches already handed out stay valid.
    """
    reader = _readers.pop(session, None)
    if reader is not None:
        reader.clear()
    for path in SHM_DIR.glob(f"{session}-*"):
        path.unlink(missing_ok=True)


def available() -> bool:
    """Whether slots can be made here (Linux's ``/dev/shm``)."""
    return SHM_DIR.is_dir() and os.access(SHM_DIR, os.W_OK)
