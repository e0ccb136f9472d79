"""Small helpers shared by tests."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path


def chunk_files(directory: Path) -> list[str]:
    """The chunk files in a dataset directory, sorted."""
    return sorted(name for name in os.listdir(directory) if name.startswith("chunk-"))


def snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``directory`` with its size and modification time."""
    return {
        str(path.relative_to(directory)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def content_snapshot(directory: Path) -> dict[str, str]:
    """Every file under ``directory`` (hidden ones included) with a hash of its content."""
    import hashlib

    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def _process_stats() -> Iterator[tuple[int, list[str]]]:
    """``(pid, fields of /proc/<pid>/stat after the name)`` of every process, from ``/proc``."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended as we looked
            continue
        yield int(entry.name), fields


def session_processes(session: int) -> list[int]:
    """The running processes (zombies excluded) of session ``session``, from ``/proc``."""
    return [
        pid for pid, fields in _process_stats() if fields[0] != "Z" and int(fields[3]) == session
    ]


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (zombies included), from ``/proc``."""
    return [child for child, fields in _process_stats() if int(fields[1]) == pid]


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(condition, timeout: float = 30.0, what: str = "the condition") -> None:
    """Return as soon as ``condition()`` is true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} did not happen within {timeout} s")


@contextlib.contextmanager
def leaving_no_process(leader: subprocess.Popen) -> Iterator[None]:
    """Kill (by pid) what still runs in the session ``leader`` started, even on failure."""
    try:
        yield
    finally:
        for pid in session_processes(leader.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        leader.wait()


def wait_until_writing_to_a_pipe(pids: list[int]) -> None:
    """Wait until a thread of ``pids`` is blocked writing into a pipe (a second, if hidden)."""
    wait_for(lambda: _writing_to_a_pipe(pids) is not False, what="a write into a full pipe")
    if _writing_to_a_pipe(pids) is None:
        time.sleep(1.0)


def _writing_to_a_pipe(pids: list[int]) -> bool | None:
    """Whether a thread of ``pids`` waits in a pipe write; ``None`` if the kernel hides it."""
    states = [_wchan(task) for pid in pids for task in Path(f"/proc/{pid}/task").iterdir()]
    if all(state in ("", "0") for state in states):
        return None
    return any("pipe_write" in state for state in states)


def _wchan(task: Path) -> str:
    """Where thread ``task`` (a ``/proc/<pid>/task/<tid>`` folder) waits in the kernel."""
    try:
        return (task / "wchan").read_text()
    except OSError:  # it ended as we looked
        return ""
