"""The node's connection budget holds across processes, and frees a killed process's slots."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

from litdata.engine.cache.slots import ConnectionSlots


def _hold(folder: str, log: str, seconds: float, start) -> None:
    slots = ConnectionSlots(Path(folder), 2)
    start.wait(60)  # all four ask at once
    for _ in range(2):
        with slots.slot():
            began = time.monotonic()
            time.sleep(seconds)
            with open(log, "a") as handle:
                handle.write(f"{began} {time.monotonic()}\n")


def _most_at_once(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    running = most = 0
    for _, step in events:
        running += step
        most = max(most, running)
    return most


def test_processes_together_hold_at_most_the_budget(tmp_path):
    log = tmp_path / "log"
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(4)
    workers = [
        context.Process(target=_hold, args=(str(tmp_path / "slots"), str(log), 0.3, start))
        for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0] * 4
    intervals = [tuple(map(float, line.split())) for line in log.read_text().splitlines()]
    assert len(intervals) == 8
    assert _most_at_once(intervals) == 2  # type: ignore[arg-type]


def _grab(folder: str, ready) -> None:
    slots = ConnectionSlots(Path(folder), 1)
    with slots.slot():
        ready.set()
        time.sleep(60)


def test_a_killed_process_frees_its_slot(tmp_path):
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    holder = context.Process(target=_grab, args=(str(tmp_path / "slots"), ready))
    holder.start()
    assert ready.wait(60)
    holder.kill()
    holder.join(10)
    with ConnectionSlots(tmp_path / "slots", 1).slot():  # would wait for ever otherwise
        pass
