"""What an executor runs: a picklable job, the inputs each worker gets, and worker events.

An executor starts ``num_workers`` workers, calls ``job(rank, inputs, report)`` in each, feeds
each worker its inputs as ``(position, input)`` pairs, and passes every event a worker
``report``s to the driver's callback, in the driver's process. The rank names what a worker
writes (its chunk files, its checkpoint), so no two workers of a run share one; a cluster
executor that runs a worker again (its machine was lost) runs it with the same rank and inputs,
and what it writes replaces what the lost attempt wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from litdata.core.errors import ProcessingError

__all__ = [
    "Failed",
    "Finished",
    "Job",
    "LiveQueue",
    "Progress",
    "Report",
    "ReportedFailure",
    "SharedInputs",
    "Slices",
    "WorkSource",
    "WorkerEvent",
]

Item = tuple[int, Any]


class ReportedFailure(Exception):
    """Raised by a job that has already reported its failure (with the input) to the driver."""


@dataclass(frozen=True)
class Slices:
    """Ordered mode: worker ``r`` processes ``slices[r]``, in order."""

    slices: Sequence[Sequence[Item]]


@dataclass(frozen=True)
class SharedInputs:
    """Shared-queue mode: workers take the next input as they become free."""

    items: Sequence[Item]


@dataclass(frozen=True)
class LiveQueue:
    """A user's ``multiprocessing`` queue, ended by one ``sentinel`` put by its producer."""

    queue: Any
    sentinel: Any


WorkSource = Slices | SharedInputs | LiveQueue


@dataclass(frozen=True)
class Progress:
    """A worker finished ``inputs`` more inputs, which produced ``samples`` more samples."""

    rank: int
    inputs: int
    samples: int


@dataclass(frozen=True)
class Finished:
    """A worker processed all its inputs; ``summary`` is what it returned."""

    rank: int
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Failed:
    """A worker failed; ``position`` and ``item`` name the input when one was being processed."""

    rank: int
    message: str
    traceback: str
    position: int | None = None
    item: str | None = None

    def as_error(self) -> ProcessingError:
        """The error the driver raises: where it failed, and the worker's traceback."""
        where = f"worker {self.rank}"
        if self.position is not None:
            where = f"input {self.position} ({self.item}) in {where}"
        return ProcessingError(
            f"We found the following error on {where}: {self.message}\n\nOriginal traceback "
            f"(in the worker):\n{self.traceback}"
        )


WorkerEvent = Progress | Finished | Failed
Report = Callable[[WorkerEvent], None]


class Job(Protocol):
    """The work of one worker. Must pickle (workers may be spawned)."""

    def __call__(self, rank: int, inputs: Iterable[Item], report: Report) -> dict[str, Any]:
        """Process ``inputs``, reporting progress; return a summary."""
        ...
