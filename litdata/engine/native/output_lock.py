"""``OutputLock``: one writer per output (``optimize``, ``map``, ``merge_datasets``...).

The lock is a ``.litdata.lock`` file in the output that names its holder (host, PID, what it
runs, since when). Locally it is also held with ``flock`` for the whole run, so a second
writer fails at once, and a holder that died (even by ``kill -9``) leaves a lock anyone may
take over. Object stores have no such primitive: there the file is checked and written
best-effort, and a lock left by a dead process of this host is recovered; one left by another
host must be removed by hand (the message says which file).

A second writer always names the first. A new lock file appears with its record in it and
already locked: it is written and locked unnamed (``O_TMPFILE``), then linked into place.
Where the filesystem makes no unnamed files (NFS), and when a stale lock is taken over, the
record is written just after the lock is taken; a writer refused in that instant reads the
record again (for up to :data:`_SETTLE` seconds) until the file it failed to lock is the one
at the path and the record names a live process.

A run that dies (``kill -9``), or fails and keeps its partial output for a resume, leaves the
file behind: it marks the output's other files as leftovers of a litdata run, which the next
run may clean up or resume. Worker processes forked while the lock is held close their copy of
it, so a dead driver's lock is free even while its workers wind down.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

from litdata.core.errors import OutputLockedError
from litdata.core.location import Location
from litdata.core.processes import running

__all__ = ["LOCK_FILENAME", "LockState", "OutputLock", "describe_holder", "lock_state"]

LOCK_FILENAME = ".litdata.lock"

#: The descriptors of the locks this process holds (closed in forked children).
_HELD: set[int] = set()
#: How long a refused writer waits for the holder's record to name it, in seconds.
_SETTLE = 2.0


def _forget_in_child() -> None:
    for descriptor in _HELD:
        with contextlib.suppress(OSError):
            os.close(descriptor)  # the parent's lock stays held: it keeps its own descriptor
    _HELD.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def _holder(command: str) -> dict[str, Any]:
    return {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "command": command,
        "since": time.time(),
    }


def _publish(path: str, record: bytes) -> int | None:
    """A new lock file at ``path``, locked, with ``record`` in it from its first instant.

    Returns its descriptor; ``None`` when a file is already there, or the filesystem makes no
    unnamed files (``O_TMPFILE``: not on NFS, nor outside Linux).
    """
    unnamed = getattr(os, "O_TMPFILE", 0)
    if not unnamed:
        return None
    folder, name = os.path.split(path)
    try:
        directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:  # the caller's own open says why
        return None
    try:
        descriptor = os.open(".", unnamed | os.O_RDWR, 0o644, dir_fd=directory)
    except OSError:
        os.close(directory)
        return None
    try:
        os.pwrite(descriptor, record, 0)
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # nobody else can see it yet
        # linkat(AT_SYMLINK_FOLLOW): a directory descriptor makes os.link follow /proc's link
        os.link(f"/proc/self/fd/{descriptor}", name, dst_dir_fd=directory)
    except OSError:  # a lock file is there already (or no /proc to link from)
        os.close(descriptor)
        return None
    finally:
        os.close(directory)
    return descriptor


def _at(path: str, descriptor: int) -> bool:
    """Whether the file open as ``descriptor`` is the one at ``path``."""
    try:
        return os.stat(path).st_ino == os.fstat(descriptor).st_ino
    except FileNotFoundError:
        return False


def _alive(holder: dict[str, Any]) -> bool:
    """Whether a lock record names a process that runs (or may: one of another host)."""
    pid, host = holder.get("pid"), holder.get("host")
    if not isinstance(pid, int) or not isinstance(host, str):
        return False
    return host != socket.gethostname() or running(pid)


def _remote_record(location: Location) -> dict[str, Any]:
    """The record of an object store's lock file (``{}`` when gone or unreadable)."""
    try:
        record = json.loads(location.read(LOCK_FILENAME))
    except (ValueError, FileNotFoundError):
        return {}
    return record if isinstance(record, dict) else {}


def _remote_live(holder: dict[str, Any]) -> bool:
    """Whether an object store's lock record stands.

    It does while active, unless left by a dead process of this host; an unreadable record
    stands (it must be removed by hand).
    """
    if not holder.get("active", True):
        return False
    return holder.get("host") != socket.gethostname() or _alive(holder)


def describe_holder(holder: dict[str, Any]) -> str:
    """Who holds (or held) a lock, for messages (the record may come from anyone)."""
    pid, host, since = holder.get("pid"), holder.get("host"), holder.get("since")
    if pid is None and host is None:
        return "a writer whose lock record is empty or unreadable"
    when = ""
    if isinstance(since, int | float) and not isinstance(since, bool):
        with contextlib.suppress(OverflowError, OSError, ValueError):
            when = f", since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(since))}"
    return f"{holder.get('command', 'a litdata run')} (PID {pid} on host {host}{when})"


@dataclass(frozen=True)
class LockState:
    """An output's lock file, as another process sees it.

    Attributes:
        holder: What its holder wrote: ``host``, ``pid``, ``command``, ``since``.
        live: Whether its holder still runs (else the file is what a finished, failed or
            killed run left).
    """

    holder: dict[str, Any]
    live: bool


def lock_state(location: Location) -> LockState | None:
    """The lock of the output at ``location``, without taking it; ``None`` when there is none.

    A local lock is live while a process holds its ``flock``; a remote one unless it was left
    inactive, or by a process of this host that is gone.
    """
    local = location.local_path
    if local is None:
        if not location.storage.exists(location.join(LOCK_FILENAME)):
            return None
        holder = _remote_record(location)
        return LockState(holder, _remote_live(holder))
    try:
        descriptor = os.open(os.path.join(local, LOCK_FILENAME), os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return LockState(OutputLock._read_local(descriptor), live=True)
        holder = OutputLock._read_local(descriptor)
        return LockState(holder, live=False) if holder else None  # empty: nothing left
    finally:
        os.close(descriptor)  # releases the shared flock, if it was taken


class OutputLock:
    """The lock of one output location.

    Args:
        location: The output.
        command: What takes it (``"optimize"``), named to the next writer.
    """

    def __init__(self, location: Location, command: str) -> None:
        self.location = location
        self.command = command
        self._descriptor: int | None = None
        #: Whether a previous run left its lock behind (its files are leftovers).
        self.found_stale = False

    def acquire(self) -> None:
        """Take the lock, or fail at once naming the holder.

        Raises:
            OutputLockedError: Another live writer holds it.
        """
        local = self.location.local_path
        if local is not None:
            self._acquire_local(os.path.join(local, LOCK_FILENAME))
        else:
            self._acquire_remote()

    def _refuse(self, holder: dict[str, Any], path: str) -> OutputLockedError:
        return OutputLockedError(
            f"{self.location.url} is being written by {describe_holder(holder)}: one writer per "
            f"output. Wait for it to finish, or write elsewhere. If that run is dead, remove "
            f"{path}."
        )

    def _acquire_local(self, path: str) -> None:
        record = json.dumps(_holder(self.command)).encode()
        settled = time.monotonic() + _SETTLE
        while True:
            descriptor = _publish(path, record)
            if descriptor is not None:
                break
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder, current = self._read_local(descriptor), _at(path, descriptor)
                os.close(descriptor)
                if (current and _alive(holder)) or time.monotonic() > settled:
                    raise self._refuse(holder, path) from None
                time.sleep(0.005)  # the holder is writing its record, or replacing the file
                continue
            if _at(path, descriptor):
                self.found_stale = os.fstat(descriptor).st_size > 0
                os.ftruncate(descriptor, 0)
                os.pwrite(descriptor, record, 0)
                break
            os.close(descriptor)  # another writer removed the file meanwhile: take the new one
        self._descriptor = descriptor
        _HELD.add(descriptor)

    @staticmethod
    def _read_local(descriptor: int) -> dict[str, Any]:
        try:
            return dict(json.loads(os.pread(descriptor, 4096, 0) or b"{}"))
        except ValueError:
            return {}

    def _acquire_remote(self) -> None:
        url = self.location.join(LOCK_FILENAME)
        if self.location.storage.exists(url):
            holder = _remote_record(self.location)
            if _remote_live(holder):
                raise self._refuse(holder, url)
            self.found_stale = True
        mark = {**_holder(self.command), "active": True}
        self.location.write(LOCK_FILENAME, json.dumps(mark).encode())

    def release(self, *, keep_marker: bool = False) -> None:
        """Give the lock up, and remove its file unless ``keep_marker``.

        Args:
            keep_marker: Leave the file (unlocked) to mark the output's files as a run's
                leftovers (a partial output kept for a resume).
        """
        local = self.location.local_path
        if local is not None:
            if self._descriptor is None:
                return
            path = os.path.join(local, LOCK_FILENAME)
            if not keep_marker and _at(path, self._descriptor):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)
            _HELD.discard(self._descriptor)
            os.close(self._descriptor)
            self._descriptor = None
            return
        if not keep_marker:
            self.location.storage.delete(self.location.join(LOCK_FILENAME))
        else:
            mark = {**_holder(self.command), "active": False}
            self.location.write(LOCK_FILENAME, json.dumps(mark).encode())
