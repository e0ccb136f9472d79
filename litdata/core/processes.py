"""Whether a process runs: for locks and temporary files whose owner may have died."""

from __future__ import annotations

import os

__all__ = ["running", "started_at"]


def running(pid: int) -> bool:
    """Whether process ``pid`` is running (a zombie, dead but not yet reaped, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):  # no /proc here (macOS), or it ended as we looked
        return True
    return state != b"Z"


def started_at(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), or ``None`` if unknown.

    From ``/proc`` (Linux): its start in clock ticks after boot, and the boot time.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/stat", "rb") as system:
            boot = next(int(line.split()[1]) for line in system if line.startswith(b"btime"))
    except (OSError, IndexError, ValueError, StopIteration):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")
