"""``threads``: an executor that runs ``optimize``/``map`` workers as threads of this process.

For I/O-bound ``fn``s (downloads), where processes buy nothing. The first failure stops the
other workers at their next input.
"""

from __future__ import annotations

import queue
import threading
import traceback
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from litdata.core.errors import ProcessingError
from litdata.core.work import (
    Failed,
    Finished,
    Item,
    Job,
    LiveQueue,
    Report,
    ReportedFailure,
    SharedInputs,
    Slices,
    WorkSource,
)

_ENDED = object()  # a worker thread put this last


class ThreadExecutor:
    """Workers are threads."""

    name: ClassVar[str] = "threads"

    def run(
        self, job: Job, source: WorkSource, num_workers: int, on_event: Report
    ) -> list[dict[str, Any]]:
        """Run ``job`` in ``num_workers`` threads; see ``litdata.core.protocols.Executor``."""
        stop = threading.Event()
        events: queue.SimpleQueue[Any] = queue.SimpleQueue()
        shared: queue.SimpleQueue[Item] = queue.SimpleQueue()
        if isinstance(source, SharedInputs):
            for item in source.items:
                shared.put(item)

        def inputs(rank: int) -> Iterator[Item]:
            if isinstance(source, Slices):
                yield from _until(stop, source.slices[rank])
            elif isinstance(source, SharedInputs):
                yield from _drain(stop, shared)
            else:
                yield from _live(stop, source)

        def work(rank: int) -> None:
            try:
                events.put(Finished(rank, job(rank, inputs(rank), events.put)))
            except BaseException as error:  # reported to the caller's thread
                if not isinstance(error, ReportedFailure):
                    message = f"{type(error).__name__}: {error}"
                    events.put(Failed(rank, message, traceback.format_exc()))
            finally:
                events.put(_ENDED)

        threads = [
            threading.Thread(target=work, args=(rank,), daemon=True) for rank in range(num_workers)
        ]
        for thread in threads:
            thread.start()
        summaries: dict[int, dict[str, Any]] = {}
        failure: Failed | None = None
        ended = 0
        while ended < num_workers:
            event = events.get()
            if event is _ENDED:
                ended += 1
            elif isinstance(event, Failed):
                if failure is None:
                    failure, _ = event, stop.set()
            else:
                if isinstance(event, Finished):
                    summaries[event.rank] = event.summary
                on_event(event)
        for thread in threads:
            thread.join()
        if failure is not None:
            where = "a worker"
            if failure.position is not None:
                where = f"input {failure.position} ({failure.item})"
            raise ProcessingError(
                f"Processing failed on {where} in thread {failure.rank}: {failure.message}\n\n"
                f"Original traceback:\n{failure.traceback}"
            )
        return [summaries[rank] for rank in range(num_workers)]


def _drain(stop: threading.Event, shared: queue.SimpleQueue[Item]) -> Iterator[Item]:
    while not stop.is_set():
        try:
            item = shared.get_nowait()
        except queue.Empty:
            return
        yield item


def _until(stop: threading.Event, items: Iterable[Item]) -> Iterator[Item]:
    for item in items:
        if stop.is_set():
            return
        yield item


def _live(stop: threading.Event, source: LiveQueue) -> Iterator[Item]:
    position = 0
    while not stop.is_set():
        try:
            value = source.queue.get(timeout=0.1)
        except queue.Empty:
            continue
        if isinstance(value, type(source.sentinel)) and value == source.sentinel:
            source.queue.put(source.sentinel)
            return
        yield position, value
        position += 1
