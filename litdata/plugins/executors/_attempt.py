"""One attempt of a task, on a worker of a cluster (see ``_cluster``): run the job, report.

The attempt calls ``job(rank, inputs, report)`` on its task's inputs, sends the driver a start
message, its progress so far (twice a second at most) and an end message through the engine's
channel, checks between inputs (once a second) whether the driver stopped the run, and returns
an ``Outcome``: the job's summary, or the failure ``fn`` reported with its input.
"""

from __future__ import annotations

import contextlib
import time
import traceback
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from litdata.core.work import Failed, Item, Job, Progress, ReportedFailure, WorkerEvent

__all__ = ["Channel", "Message", "Outcome", "TaskStopped", "run_task"]

#: ``["start" | "end", attempt, rank]`` or ``["progress", attempt, rank, inputs, samples]``.
Message = list[Any]

_SEND_SECONDS = 0.5  # progress messages per attempt, at most
_STOP_CHECK_SECONDS = 1.0


class TaskStopped(BaseException):
    """Raised in a task when the driver stopped the run (not an ``Exception``: jobs let it by)."""


class Channel(Protocol):
    """How an attempt talks to the driver (picklable; the engine provides one)."""

    def send(self, messages: list[Message]) -> None:
        """Deliver ``messages`` to the driver."""
        ...

    def stopped(self) -> bool:
        """Whether the driver stopped the run."""
        ...


@dataclass(frozen=True)
class Outcome:
    """What one attempt of a task returns: its summary or its failure, and its progress."""

    rank: int
    attempt: str
    summary: dict[str, Any] | None
    failure: Failed | None
    inputs: int
    samples: int


class _Reporter:
    """The ``report`` an attempt's job calls: progress to the driver (twice a second at most)."""

    def __init__(self, rank: int, attempt: str, channel: Channel) -> None:
        self.rank, self.attempt, self.channel = rank, attempt, channel
        self.inputs = self.samples = 0
        self.failure: Failed | None = None
        self.sent = time.monotonic()

    def __call__(self, event: WorkerEvent) -> None:
        if isinstance(event, Failed):
            self.failure = self.failure or event
        elif isinstance(event, Progress):
            self.inputs += event.inputs
            self.samples += event.samples
            if time.monotonic() - self.sent > _SEND_SECONDS:
                self.channel.send([self.progress()])
                self.sent = time.monotonic()

    def progress(self) -> Message:
        return ["progress", self.attempt, self.rank, self.inputs, self.samples]

    def outcome(self, summary: dict[str, Any] | None, failure: Failed | None) -> Outcome:
        return Outcome(self.rank, self.attempt, summary, failure, self.inputs, self.samples)


def _watched(inputs: Iterable[Item], channel: Channel) -> Iterator[Item]:
    """The inputs, until the driver stops the run (checked first, then once a second)."""
    checked = 0.0
    for item in inputs:
        if time.monotonic() - checked > _STOP_CHECK_SECONDS:
            if channel.stopped():
                raise TaskStopped
            checked = time.monotonic()
        yield item


def run_task(job: Job, rank: int, inputs: Sequence[Item], channel: Channel) -> Outcome:
    """Run one attempt of task ``rank`` (on a worker of the cluster)."""
    attempt = uuid.uuid4().hex
    reporter = _Reporter(rank, attempt, channel)
    channel.send([["start", attempt, rank]])
    try:
        summary = job(rank, _watched(inputs, channel), reporter)
    except TaskStopped:
        return reporter.outcome(None, None)
    except Exception as error:  # reported to the driver, whatever it is
        failure = reporter.failure if isinstance(error, ReportedFailure) else None
        text = f"{type(error).__name__}: {error}"
        return reporter.outcome(None, failure or Failed(rank, text, traceback.format_exc()))
    finally:
        with contextlib.suppress(Exception):  # a broken channel must not hide the outcome
            channel.send([reporter.progress(), ["end", attempt, rank]])
    return reporter.outcome(summary, None)
