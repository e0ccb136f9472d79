"""Peak proportional set size (PSS) of a process tree, sampled from ``/proc`` in a thread."""

from __future__ import annotations

import os
import threading
from pathlib import Path

PROC = Path("/proc")


def children_map() -> dict[int, list[int]]:
    """Map every live pid to its child pids (one scan of ``/proc/*/stat``)."""
    tree: dict[int, list[int]] = {}
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            stat = (PROC / entry.name / "stat").read_text()
        except OSError:
            continue
        # The command name may contain spaces/parentheses: fields start after the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def descendants(pid: int) -> list[int]:
    """``pid`` and all of its live descendants."""
    tree = children_map()
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(tree.get(current, []))
    return out


def pss_kib(pid: int) -> int:
    """PSS of one process in KiB (0 if it is gone or unreadable)."""
    try:
        for line in (PROC / str(pid) / "smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return 0


def tree_pss_kib(pid: int) -> int:
    """Total PSS of ``pid``'s process tree in KiB."""
    return sum(pss_kib(p) for p in descendants(pid))


class PeakPss:
    """Samples the tree PSS of ``pid`` every ``interval`` s while entered; see ``peak_mb``.

    One sample costs ~4 ms of CPU per process that has torch loaded (the kernel walks its page
    tables for ``smaps_rollup``), so sampling every 50 ms took up to a quarter of a core from the
    measured children on 2 CPUs; every 200 ms costs a few percent. Short runs can fall between two
    samples, so each child also samples itself once when its action ends (``child.py``).
    """

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        self.pid = pid
        self.interval = interval
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak_kib = max(self.peak_kib, tree_pss_kib(self.pid))
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakPss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak_mb(self) -> float:
        """Peak PSS in MB (10^6 bytes)."""
        return self.peak_kib * 1024 / 1e6
