"""``local``: workers are processes on this machine (``multiprocessing``), the default.

Inputs reach workers as a static slice each (ordered mode), through one shared, bounded queue
(the default: a slow input never idles the other workers), or from the user's own queue.
Worker events come back on a queue; the first failure stops every worker. Workers also stop by
themselves if this process dies, so none is left behind: between inputs they finish cleanly,
and wherever they are blocked (in ``fn``, a long write, sending events nobody reads) their
``Lifeline`` ends them.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import pickle
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from multiprocessing.process import BaseProcess
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
    WorkerEvent,
    WorkSource,
)
from litdata.engine.lifeline import Lifeline

__all__ = ["LocalExecutor", "default_start_method"]

logger = logging.getLogger(__name__)

_POLL_SECONDS = 0.2
_MAX_BATCH = 64
_STOP_SECONDS = 5.0


def default_start_method() -> str:
    """The start method used when none is given: this platform's default, as DataLoader uses.

    That is ``fork`` on Linux before Python 3.14 (workers start fast and share the inputs),
    ``spawn`` on macOS and Windows, or whatever ``multiprocessing.set_start_method`` chose.
    """
    return multiprocessing.get_start_method()


def _parent_alive() -> bool:
    parent = multiprocessing.parent_process()
    return parent is None or parent.is_alive()


def _orphan_check(items: Iterable[Item]) -> Iterator[Item]:
    """Stop iterating when the driver process is gone (checked at most once a second)."""
    checked = time.monotonic()
    for item in items:
        yield item
        if time.monotonic() - checked > 1.0:
            if not _parent_alive():
                return
            checked = time.monotonic()


def _poll(get: Callable[..., Any]) -> Iterator[Any]:
    """Yield what ``get`` returns, waiting a second at a time, until the driver process is gone."""
    while True:
        try:
            value = get(timeout=1.0)
        except queue.Empty:
            if not _parent_alive():
                return
            continue
        yield value


def _from_queue(work: Any) -> Iterator[Item]:
    """The inputs of the shared work queue, batch by batch, until its ``None``."""
    for batch in _poll(work.get):
        if batch is None:
            return
        yield from batch


def _from_live_queue(source: LiveQueue) -> Iterator[Item]:
    """The user's queue, numbered, until its sentinel (put back so the other workers stop)."""
    for position, value in enumerate(_poll(source.queue.get)):
        if isinstance(value, type(source.sentinel)) and value == source.sentinel:
            source.queue.put(source.sentinel)
            return
        yield position, value


def _worker_main(
    job: Job, rank: int, reader: Callable[[], Iterable[Item]], events: Any, lifeline: Lifeline
) -> None:
    _take_over_signals()
    lifeline.hold()
    report: Report = events.put
    try:
        report(Finished(rank, job(rank, _orphan_check(reader()), report)))
    except BaseException as error:  # reported to the driver, whatever it is
        if not isinstance(error, ReportedFailure):
            report(Failed(rank, f"{type(error).__name__}: {error}", traceback.format_exc()))
        events.close()
        events.join_thread()
        os._exit(1)


def batch_size_for(count: int, workers: int) -> int:
    """How many inputs go in one queue message.

    One when there are few inputs (the best balance), up to 64 when there are many: a message
    costs tens of microseconds, more than many inputs take.
    """
    return max(1, min(_MAX_BATCH, count // (workers * _MAX_BATCH)))


class _Feeder(threading.Thread):
    """Puts the shared inputs on the bounded work queue in batches, then one end per worker."""

    def __init__(self, work: Any, items: Sequence[Item], workers: int) -> None:
        super().__init__(name="litdata-feeder", daemon=True)
        self.work, self.workers = work, workers
        size = batch_size_for(len(items), workers)
        self.batches = [items[start : start + size] for start in range(0, len(items), size)]
        self.stopped = threading.Event()

    def _put(self, value: Any) -> bool:
        while not self.stopped.is_set():
            try:
                self.work.put(value, timeout=_POLL_SECONDS)
            except queue.Full:
                continue
            return True
        return False

    def run(self) -> None:
        for batch in self.batches:
            if not self._put(batch):
                return
        for _ in range(self.workers):
            self._put(None)


class LocalExecutor:
    """Runs workers as local processes.

    Args:
        start_method: ``"fork"``, ``"spawn"`` or ``"forkserver"``; by default the platform's.
    """

    name: ClassVar[str] = "local"

    def __init__(self, start_method: str | None = None) -> None:
        if start_method is not None and start_method not in multiprocessing.get_all_start_methods():
            raise ValueError(
                f"start_method={start_method!r} is not available here; choose one of "
                f"{multiprocessing.get_all_start_methods()}."
            )
        self.start_method = start_method

    def run(
        self, job: Job, source: WorkSource, num_workers: int, on_event: Report
    ) -> list[dict[str, Any]]:
        """Run ``job`` in ``num_workers`` processes; see ``litdata.core.protocols.Executor``.

        Raises:
            ProcessingError: A worker failed or died; every worker has been stopped.
        """
        context: Any = multiprocessing.get_context(self.start_method or default_start_method())
        events = context.Queue()
        feeder: _Feeder | None = None
        readers: list[Callable[[], Iterable[Item]]]  # how each worker gets its inputs
        if isinstance(source, SharedInputs):
            work = context.Queue(maxsize=max(16, 4 * num_workers))
            feeder = _Feeder(work, source.items, num_workers)
            readers = [partial(_from_queue, work)] * num_workers
        elif isinstance(source, Slices):
            readers = [partial(iter, part) for part in source.slices]
        else:
            readers = [partial(_from_live_queue, source)] * num_workers
        # This thread starts the workers and waits for them: it outlives them (see Lifeline).
        lifeline = Lifeline(os.getpid())
        processes = [
            context.Process(
                target=_worker_main,
                args=(job, rank, reader, events, lifeline),
                name=f"litdata-worker-{rank}",
            )
            for rank, reader in enumerate(readers)
        ]
        try:
            self._start(processes, context)
            if feeder is not None:
                feeder.start()
            return _Collector(processes, events, on_event).run()
        finally:
            if feeder is not None:
                feeder.stopped.set()
            _stop(processes)
            events.close()
            events.cancel_join_thread()

    @staticmethod
    def _start(processes: list[BaseProcess], context: Any) -> None:
        try:
            with _signals_held(context.get_start_method()):
                for process in processes:
                    process.start()
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            if "pickle" not in str(error).lower():
                raise
            raise ProcessingError(
                f"The workers could not be started with start_method="
                f"{context.get_start_method()!r}: {error}. With 'spawn', fn must be importable: "
                f"define it at module level (not a lambda or a nested function), and guard "
                f"scripts with `if __name__ == '__main__':`."
            ) from error


class _Collector:
    """Receives worker events in the driver until every worker has finished."""

    def __init__(self, processes: list[BaseProcess], events: Any, on_event: Report) -> None:
        self.processes, self.events, self.on_event = processes, events, on_event
        self.summaries: dict[int, dict[str, Any]] = {}

    def _handle(self, event: WorkerEvent) -> None:
        if isinstance(event, Failed):
            raise event.as_error()
        if isinstance(event, Finished):
            self.summaries[event.rank] = event.summary
        self.on_event(event)

    def _receive(self, timeout: float) -> bool:
        try:
            event: WorkerEvent = self.events.get(timeout=timeout)
        except queue.Empty:
            return False
        self._handle(event)
        return True

    def run(self) -> list[dict[str, Any]]:
        checked = time.monotonic()
        while len(self.summaries) < len(self.processes):
            received = self._receive(_POLL_SECONDS)
            if not received or time.monotonic() - checked > _POLL_SECONDS:
                # A dead worker is noticed even while the others keep reporting.
                self._check_alive()
                checked = time.monotonic()
        return [self.summaries[rank] for rank in range(len(self.processes))]

    def _check_alive(self) -> None:
        for rank, process in enumerate(self.processes):
            if rank in self.summaries or process.exitcode is None:
                continue
            deadline = time.monotonic() + 2.0  # its last events may still be in flight
            while rank not in self.summaries and time.monotonic() < deadline:
                self._receive(_POLL_SECONDS)
            if rank in self.summaries:
                continue
            code = process.exitcode
            signal = f" (killed by signal {-code}; out of memory?)" if code < 0 else ""
            raise ProcessingError(
                f"Worker {rank} died with exit code {code}{signal} without reporting an error."
            )


#: Signals held while workers are forked (POSIX): see ``_signals_held``.
_HELD = (
    {signal.SIGINT, signal.SIGTERM} if hasattr(signal, "pthread_sigmask") else set[signal.Signals]()
)
#: The driver's own handlers of the held signals while workers are forked (a worker forked
#: then puts the driver's ``SIGINT`` handler back, as it would have had it).
_DRIVER_HANDLERS: dict[int, Any] = {}


@contextlib.contextmanager
def _signals_held(start_method: str) -> Iterator[None]:
    """Hold ``SIGINT`` and ``SIGTERM`` while workers are forked; they arrive after.

    A worker forked a moment ago still has the driver's handlers until it replaces them: a
    signal then (Ctrl-C or a scheduler signalling the whole job, or the driver stopping the
    workers after an early failure) would unwind its copy of the driver's stack, running the
    driver's cleanup (removing the output) in the worker. Held, it waits in the worker until
    ``_worker_main`` has put the worker's own handling in place. Spawned workers (and a fork
    server, which would keep the mask for later users) start without the driver's handlers:
    nothing is held for them.

    The driver itself only notes them meanwhile, and acts on them once the workers are
    forked: another of its threads may take the signal (blocked in this one), and CPython runs
    the handler at this thread's next bytecode, maybe inside an ``os.register_at_fork`` hook,
    which drops what it raises: Ctrl-C then did nothing, and the run went on.
    """
    if not _HELD or start_method != "fork":
        yield
        return
    noted: list[int] = []
    replaced: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():  # where handlers are set
        for signum in _HELD:
            handler = signal.getsignal(signum)
            if handler is not None:  # None: set outside Python, cannot be put back
                replaced[signum] = handler
                signal.signal(signum, lambda number, frame: noted.append(number))
    _DRIVER_HANDLERS.update(replaced)
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # what this thread held: noted
        for number, handler in replaced.items():
            signal.signal(number, handler)
            del _DRIVER_HANDLERS[number]
        for number in dict.fromkeys(noted):
            signal.raise_signal(number)  # the driver's own handler, here and now


def _take_over_signals() -> None:
    """In a worker: ``SIGTERM`` ends it, then the signals held since the fork arrive.

    The driver's handler, forked with the worker, must not run here.
    """
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if signal.SIGINT in _DRIVER_HANDLERS:  # forked while the driver noted signals
        signal.signal(signal.SIGINT, _DRIVER_HANDLERS[signal.SIGINT])
    if _HELD:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)


def _stop(processes: list[BaseProcess]) -> None:
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + _STOP_SECONDS
    for process in processes:
        if process.pid is None:
            continue
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()
