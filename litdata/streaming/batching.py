"""Batches made inside the workers, labelled with who made them and what they contain."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from litdata.streaming.transport import pack

__all__ = [
    "BatchIds",
    "Envelope",
    "Ids",
    "LoaderProgress",
    "as_pairs",
    "batches",
    "deliver",
    "id_batches",
    "in_worker",
    "single_id_batches",
]

#: What a batch holds: the ``(dataset index, sample index)`` of each of its samples, in order.
Ids = list[tuple[int, int]]
#: The same as an ``(n, 2)`` array of int64 (how plans carry them: cheap to make and log).
BatchIds = npt.NDArray[np.int64]


class Envelope(NamedTuple):
    """A batch from one worker, with how many samples of each dataset it holds.

    ``StreamingDataLoader`` counts these to know exactly what each worker has delivered.
    """

    worker: int
    counts: tuple[int, ...]
    data: Any


@dataclass(frozen=True)
class LoaderProgress:
    """Where a ``StreamingDataLoader`` stands in its epoch, for its dataset's ``loader_state``.

    Attributes:
        counts: For each worker, how many samples of each dataset it delivered.
        num_workers: The loader's workers (0 means the main process).
        batch_size: The loader's batch size.
        next_worker: The worker whose batch the loader would take next.
        batches: For each worker, how many batches it delivered.
    """

    counts: Sequence[Sequence[int]]
    num_workers: int
    batch_size: int
    next_worker: int
    batches: Sequence[int]


def in_worker() -> bool:
    """Whether this code runs in a DataLoader worker process."""
    from torch.utils.data import get_worker_info

    return get_worker_info() is not None


def batches(
    runs: Iterable[tuple[int, list[Any]]],
    batch_size: int,
    collate: Callable[[list[Any]], Any],
    worker: int,
    num_datasets: int,
    *,
    whole_runs: bool = False,
) -> Iterator[Envelope]:
    """Group runs of samples, ``(dataset index, samples)``, into collated batches.

    A batch may take samples from several runs, unless ``whole_runs`` (each run is a batch).
    Batches leaving a worker process are packed for a cheap trip (see ``transport``).
    """
    finish = (lambda items: pack(collate(items))) if in_worker() else collate
    if whole_runs:
        for source, run in runs:
            counts = [0] * num_datasets
            counts[source] = len(run)
            yield Envelope(worker, tuple(counts), finish(run))
        return
    pending: list[Any] = []
    counts = [0] * num_datasets
    for source, run in runs:
        start = 0
        while start < len(run):
            part = run[start : start + batch_size - len(pending)]
            pending.extend(part)
            counts[source] += len(part)
            start += len(part)
            if len(pending) == batch_size:
                yield Envelope(worker, tuple(counts), finish(pending))
                pending, counts = [], [0] * num_datasets
    if pending:
        yield Envelope(worker, tuple(counts), finish(pending))


def deliver(
    runs: Iterable[tuple[int, list[Any]]],
    batch_size: int,
    collate: Callable[[list[Any]], Any] | None,
    worker: int,
    num_datasets: int,
    *,
    whole_runs: bool = False,
) -> Iterator[Any]:
    """The samples of ``runs`` one by one, or their ``Envelope`` batches (``collate`` set).

    A loader sets ``collate`` only while it iterates; see ``batches``.
    """
    if collate is None:
        for _, run in runs:
            yield from run
    else:
        yield from batches(runs, batch_size, collate, worker, num_datasets, whole_runs=whole_runs)


def id_batches(
    runs: Iterable[tuple[int, Ids]], batch_size: int, num_datasets: int, *, whole_runs: bool = False
) -> Iterator[BatchIds]:
    """The ids of each batch that ``batches`` makes of the same runs (of ids, not samples)."""
    for envelope in batches(runs, batch_size, list, 0, num_datasets, whole_runs=whole_runs):
        yield np.asarray(envelope.data, dtype=np.int64).reshape(-1, 2)


def single_id_batches(
    runs: Iterable[npt.NDArray[np.int64]], batch_size: int, block: int = 64
) -> Iterator[BatchIds]:
    """The ids of each batch of one dataset's runs of sample indices (as ``batches`` cuts them).

    Runs are gathered into arrays of about ``block`` batches, which are yielded as views.
    """
    pending: list[npt.NDArray[np.int64]] = []
    size = 0
    for run in runs:
        pending.append(run)
        size += len(run)
        if size >= block * batch_size:
            ids = _of_dataset_zero(pending)
            whole = len(ids) - len(ids) % batch_size
            yield from (ids[start : start + batch_size] for start in range(0, whole, batch_size))
            pending, size = [ids[whole:, 1]], len(ids) - whole
    ids = _of_dataset_zero(pending)
    yield from (ids[start : start + batch_size] for start in range(0, len(ids), batch_size))


def _of_dataset_zero(parts: list[npt.NDArray[np.int64]]) -> BatchIds:
    indices = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    ids = np.zeros((len(indices), 2), dtype=np.int64)
    ids[:, 1] = indices
    return ids


def as_pairs(ids: BatchIds) -> Ids:
    """``(dataset index, sample index)`` tuples of an ``(n, 2)`` array."""
    return [(int(d), int(i)) for d, i in ids.tolist()]
