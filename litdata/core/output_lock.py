"""``OutputLock``: one writer per output (``optimize``, ``map``, ``merge_datasets``...).

The lock is a ``.litdata.lock`` file in the output that names its holder (host, PID, what it
runs, since when). Locally it is also held with ``flock`` for the whole run, so a second
writer fails at once, and a holder that died (even by ``kill -9``) leaves a lock anyone may
take over. Object stores have no such primitive: there the file is checked and written
best-effort, and a lock left by a dead process of this host is recovered; one left by another
host must be removed by hand (the message says which file).

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
from litdata.core.lifeline import running
from litdata.core.storage.location import Location

__all__ = ["LOCK_FILENAME", "LockState", "OutputLock", "describe_holder", "lock_state"]

LOCK_FILENAME = ".litdata.lock"

#: The descriptors of the locks this process holds (closed in forked children).
_HELD: set[int] = set()


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
        url = location.join(LOCK_FILENAME)
        if not location.storage.exists(url):
            return None
        try:
            holder = dict(json.loads(location.read(LOCK_FILENAME)))
        except (ValueError, FileNotFoundError):
            holder = {}
        gone = holder.get("host") == socket.gethostname() and not running(int(holder.get("pid", 0)))
        return LockState(holder, bool(holder.get("active", True)) and not gone)
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


def describe_holder(holder: dict[str, Any]) -> str:
    """Who holds (or held) a lock, for messages: its command, PID, host and start time."""
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(holder.get("since", 0))))
    return (
        f"{holder.get('command', 'a litdata run')} (PID {holder.get('pid')} on host "
        f"{holder.get('host')}, since {since})"
    )


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
        while True:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = self._read_local(descriptor)
                os.close(descriptor)
                raise self._refuse(holder, path) from None
            if os.path.exists(path) and os.stat(path).st_ino == os.fstat(descriptor).st_ino:
                break
            os.close(descriptor)  # another writer removed the file meanwhile: take the new one
        self.found_stale = os.fstat(descriptor).st_size > 0
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, json.dumps(_holder(self.command)).encode(), 0)
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
            try:
                holder = dict(json.loads(self.location.read(LOCK_FILENAME)))
            except (ValueError, FileNotFoundError):
                holder = {}
            mine = holder.get("host") == socket.gethostname()
            if not (mine and not running(int(holder.get("pid", 0)))) and holder.get("active", True):
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
            if not keep_marker:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(os.path.join(local, LOCK_FILENAME))
            _HELD.discard(self._descriptor)
            os.close(self._descriptor)
            self._descriptor = None
            return
        if not keep_marker:
            self.location.storage.delete(self.location.join(LOCK_FILENAME))
        else:
            mark = {**_holder(self.command), "active": False}
            self.location.write(LOCK_FILENAME, json.dumps(mark).encode())
