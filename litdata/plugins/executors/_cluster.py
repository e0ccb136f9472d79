"""What the cluster executors (``dask``, ``ray``) share: the driver's side of a run of tasks.

A run is a list of tasks. Task ``r`` is worker ``r`` of the job, as the core sees it: it calls
``job(r, inputs, report)`` on a fixed list of inputs, writes chunk files named after ``r``, and
returns a summary. The engine schedules the tasks on its workers as they free up (the balance),
and runs a task again when the worker running it is lost. Every attempt of a task writes the same
files, each published whole (renamed into place, or one object PUT), so a rerun replaces what a
lost attempt wrote and the driver's final index lists each task's chunks once.

Attempts (``_attempt``) send messages to the driver (started, progress so far, ended) through
the engine's own channel; the driver shows each task's progress once, however often it ran,
and at a failure stops the tasks (they check between inputs) and waits for the running ones to
end. A task whose ``fn`` raised can run again a few times first (``retries``), for errors that
may not recur.
"""

from __future__ import annotations

import abc
import contextlib
import logging
import queue
import time
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

from litdata.core.errors import ProcessingError
from litdata.core.work import (
    Finished,
    Item,
    LiveQueue,
    Progress,
    Report,
    SharedInputs,
    Slices,
    WorkSource,
)
from litdata.plugins.executors._attempt import Message, Outcome

__all__ = ["ClusterRunner", "Engine", "drive", "task_count", "wait_for_nodes"]

logger = logging.getLogger(__name__)

_POLL_SECONDS = 0.1
_STOP_WAIT_SECONDS = 10.0
_LIVE_BATCH = 64  # inputs from a live queue per task, at most
_LIVE_WAIT_SECONDS = 0.5  # how long an input from a live queue waits for others


class Engine(Protocol):
    """The driver's side of one run on one engine."""

    def submit(self, rank: int, inputs: list[Item]) -> None:
        """Schedule task ``rank``."""
        ...

    def messages(self) -> list[Message]:
        """The messages attempts sent since the last call."""
        ...

    def completed(self, timeout: float) -> list[tuple[int, Outcome | BaseException]]:
        """Tasks that ended (waiting up to ``timeout`` for one): outcomes, or engine errors."""
        ...

    def stop(self) -> None:
        """Tell running attempts to stop, and cancel the tasks not started."""
        ...

    def close(self) -> None:
        """Release what the run holds on the cluster (its channel, the job)."""
        ...


class _Tracker:
    """The driver's view of a run: tasks, running attempts, progress shown, summaries."""

    def __init__(self, on_event: Report, retries: int) -> None:
        self.on_event, self.retries = on_event, retries
        self.tasks = 0
        self.reruns: dict[int, int] = {}
        self.summaries: dict[int, dict[str, Any]] = {}
        self.shown: dict[int, tuple[int, int]] = {}
        self.running: dict[str, int] = {}

    def add(self) -> int:
        self.tasks += 1
        return self.tasks - 1

    def receive(self, message: Message) -> None:
        kind, attempt, rank = message[:3]
        if kind == "start":
            self.running[attempt] = rank
        elif kind == "end":
            self.running.pop(attempt, None)
        elif rank not in self.summaries:
            self._show(rank, message[3], message[4])

    def _show(self, rank: int, inputs: int, samples: int) -> None:
        """Show what an attempt did beyond what earlier attempts of its task showed."""
        shown_inputs, shown_samples = self.shown.get(rank, (0, 0))
        more_inputs, more_samples = max(0, inputs - shown_inputs), max(0, samples - shown_samples)
        if more_inputs or more_samples:
            self.shown[rank] = (shown_inputs + more_inputs, shown_samples + more_samples)
            self.on_event(Progress(rank, more_inputs, more_samples))

    def complete(self, rank: int, result: Outcome | BaseException) -> bool:
        """Record a task's end; ``False`` when ``fn`` failed and the task is to run again."""
        if isinstance(result, BaseException):
            raise ProcessingError(
                f"Task {rank} could not run on the cluster: {type(result).__name__}: {result}\n"
                f"A task is run again when its worker is lost, a few times: if its worker died "
                f"every time, it may run out of memory. If fn's module is missing there, "
                f"install it on the workers (or define fn in the script that runs optimize)."
            ) from result
        self.running.pop(result.attempt, None)
        if result.failure is not None and self.reruns.get(rank, 0) < self.retries:
            self.reruns[rank] = self.reruns.get(rank, 0) + 1
            logger.warning(
                "task %d failed (%s); running it again (%d of %d)",
                rank,
                result.failure.message,
                self.reruns[rank],
                self.retries,
            )
            return False
        if result.failure is not None:
            raise result.failure.as_error()
        if result.summary is None:
            raise ProcessingError(f"Task {rank} was stopped before it finished.")
        self._show(rank, result.inputs, result.samples)
        self.summaries[rank] = result.summary
        self.on_event(Finished(rank, result.summary))
        return True

    def wait_stopped(self, engine: Engine) -> None:
        """Wait (a few seconds at most) until every attempt still running has ended."""
        deadline = time.monotonic() + _STOP_WAIT_SECONDS
        with contextlib.suppress(Exception):
            while self.running and time.monotonic() < deadline:
                for message in engine.messages():
                    self.receive(message)
                for _, result in engine.completed(_POLL_SECONDS):
                    if isinstance(result, Outcome):
                        self.running.pop(result.attempt, None)


class _LiveBatches:
    """Inputs of a live queue, read in the driver and grouped into tasks as they arrive."""

    def __init__(self, source: LiveQueue) -> None:
        self.source = source
        self.ended = False
        self.pending: list[Item] = []
        self.position = 0
        self.oldest = 0.0

    def poll(self) -> list[list[Item]]:
        """The batches ready now (full, old enough, or the last), after a short wait."""
        batches: list[list[Item]] = []
        deadline = time.monotonic() + _POLL_SECONDS
        while not self.ended and time.monotonic() < deadline:
            try:
                value = self.source.queue.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                break
            if isinstance(value, type(self.source.sentinel)) and value == self.source.sentinel:
                self.source.queue.put(value)  # left for any other reader, as local workers do
                self.ended = True
                break
            if not self.pending:
                self.oldest = time.monotonic()
            self.pending.append((self.position, value))
            self.position += 1
            if len(self.pending) >= _LIVE_BATCH:
                batches.append(self.pending)
                self.pending = []
        waited = time.monotonic() - self.oldest > _LIVE_WAIT_SECONDS
        if self.pending and (self.ended or waited):
            batches.append(self.pending)
            self.pending = []
        return batches


def _parts(source: Slices | SharedInputs, count: int) -> list[list[Item]]:
    """One task per slice; or shared inputs cut into ``count`` contiguous tasks."""
    if isinstance(source, Slices):
        return [list(part) for part in source.slices]
    base, extra = divmod(len(source.items), count)
    parts, start = [], 0
    for rank in range(count):
        size = base + (1 if rank < extra else 0)
        parts.append(list(source.items[start : start + size]))
        start += size
    return parts


def drive(
    engine: Engine, source: WorkSource, num_workers: int, on_event: Report, retries: int = 0
) -> list[dict[str, Any]]:
    """Run every task of ``source`` on ``engine``; return the summaries in rank order.

    A task whose ``fn`` raised runs again, up to ``retries`` times, before the run fails.

    Raises:
        ProcessingError: A task failed, or could not run; the running ones have ended.
    """
    tracker = _Tracker(on_event, retries)
    live = _LiveBatches(source) if isinstance(source, LiveQueue) else None
    parts = [] if isinstance(source, LiveQueue) else _parts(source, num_workers)
    for part in parts:
        engine.submit(tracker.add(), part)
    try:
        while len(tracker.summaries) < tracker.tasks or (live is not None and not live.ended):
            for batch in live.poll() if live is not None else ():
                parts.append(batch)
                engine.submit(tracker.add(), batch)
            for message in engine.messages():
                tracker.receive(message)
            for rank, result in engine.completed(0.0 if live is not None else _POLL_SECONDS):
                if not tracker.complete(rank, result):
                    engine.submit(rank, parts[rank])
    except BaseException:
        with contextlib.suppress(Exception):
            engine.stop()
        tracker.wait_stopped(engine)
        raise
    return [tracker.summaries[rank] for rank in range(tracker.tasks)]


def task_count(inputs: int, per_node: int | None, nodes: int, slots: int, per_slot: int) -> int:
    """How many tasks to make of ``inputs`` inputs: ``per_slot`` per worker slot.

    The slots are ``per_node`` on each of ``nodes`` machines when the user says so, else the
    cluster's. Several tasks per slot let the engine even out slow inputs and slow machines,
    and make a lost task cheap to rerun; each task also ends with a partial chunk, so more are
    not better.
    """
    parallel = slots if per_node is None else per_node * nodes
    return max(1, min(inputs, per_slot * max(1, parallel)))


def wait_for_nodes(count: Callable[[], int], wanted: int, seconds: float, cluster: str) -> None:
    """Return once ``count()`` reaches ``wanted`` machines.

    Raises:
        ValueError: It did not within ``seconds``.
    """
    deadline = time.monotonic() + seconds
    while (have := count()) < wanted:
        if time.monotonic() >= deadline:
            raise ValueError(
                f"num_nodes={wanted}: the {cluster} has {have} machine(s) after {seconds:g} s. "
                f"Start workers on more machines, lower num_nodes, or wait longer "
                f"(executor_options={{'wait_seconds': ...}})."
            )
        time.sleep(_POLL_SECONDS)


class ClusterRunner(abc.ABC):
    """What the ``dask`` and ``ray`` executors share: sizing the tasks, driving a run.

    A subclass says how to reach its cluster (:meth:`_session`), how many machines and worker
    slots it has, and makes the engine of a run.

    Attributes:
        cluster: How errors name the cluster (``"Dask cluster"``).
        tasks_per_slot: Tasks per worker slot (see :func:`task_count`).
        wait_seconds: How long to wait for ``num_nodes`` machines.
        retries: Reruns of a task whose ``fn`` raised, before the run fails.
    """

    cluster: ClassVar[str]
    tasks_per_slot: int
    wait_seconds: float
    retries: int

    @abc.abstractmethod
    def _session(self) -> contextlib.AbstractContextManager[Any]:
        """The connection to the cluster, for one call."""

    @abc.abstractmethod
    def _machines(self, session: Any) -> int:
        """The machines the cluster has now."""

    @abc.abstractmethod
    def _slots(self, session: Any) -> int:
        """The worker slots (threads, CPUs) the cluster has now."""

    @abc.abstractmethod
    def _engine(self, session: Any, job: Any) -> Engine:
        """The engine of one run of ``job``."""

    def tasks(self, inputs: int, num_workers: int | None, num_nodes: int) -> int:
        """Wait for ``num_nodes`` machines; then ``tasks_per_slot`` tasks per worker slot.

        Raises:
            ValueError: The cluster did not reach ``num_nodes`` machines in time.
        """
        with self._session() as session:
            wait_for_nodes(
                lambda: self._machines(session), num_nodes, self.wait_seconds, self.cluster
            )
            slots = self._slots(session)
        return task_count(inputs, num_workers, num_nodes, slots, self.tasks_per_slot)

    def run(
        self, job: Any, source: WorkSource, num_workers: int, on_event: Report
    ) -> list[dict[str, Any]]:
        """Run the job's tasks on the cluster; see ``litdata.core.protocols.Executor``.

        Raises:
            ProcessingError: A task failed, or could not run; the running ones have ended.
        """
        with self._session() as session:
            engine = self._engine(session, job)
            try:
                return drive(engine, source, num_workers, on_event, self.retries)
            finally:
                engine.close()
