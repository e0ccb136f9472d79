"""Batches made inside the workers, labelled with who made them and what they contain."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from litdata.streaming.workers.transport import pack

__all__ = [
    "BatchIds",
    "Envelope",
    "IdTaker",
    "Ids",
    "LoaderProgress",
    "as_pairs",
    "batches",
    "deliver",
    "id_row_batches",
    "in_worker",
    "labelled",
    "mixed_id_batches",
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
    #: The ``(dataset index, sample index)`` of the batch's samples, when the loader asked.
    ids: BatchIds | None = None


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
    ids: Iterator[BatchIds] | None = None,
    packed: bool = True,
) -> Iterator[Envelope]:
    """Group runs of samples, ``(dataset index, samples)``, into collated batches.

    A batch may take samples from several runs, unless ``whole_runs`` (each run is a batch).
    Batches leaving a worker process are packed for a cheap trip (see ``transport``), unless
    not ``packed``. With ``ids`` (the batches' ids, as the plan cuts them) each envelope
    carries its batch's ids.
    """
    finish = (lambda items: pack(collate(items))) if packed and in_worker() else collate

    def envelope(counts: Sequence[int], items: list[Any]) -> Envelope:
        named = None if ids is None else next(ids)
        return Envelope(worker, tuple(counts), finish(items), named)

    if whole_runs:
        for source, run in runs:
            counts = [0] * num_datasets
            counts[source] = len(run)
            yield envelope(counts, run)
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
                yield envelope(counts, pending)
                pending, counts = [], [0] * num_datasets
    if pending:
        yield envelope(counts, pending)


def deliver(
    runs: Iterable[tuple[int, list[Any]]],
    batch_size: int,
    collate: Callable[[list[Any]], Any] | None,
    worker: int,
    num_datasets: int,
    *,
    whole_runs: bool = False,
    ids: Iterator[BatchIds] | None = None,
) -> Iterator[Any]:
    """The samples of ``runs`` one by one, or their ``Envelope`` batches (``collate`` set).

    A loader sets ``collate`` (and asks for ``ids``) only while it iterates; see ``batches``.
    A ``collate`` with a ``group`` method (the arena's) sends a worker process's batches on
    its own.
    """
    if collate is None:
        for _, run in runs:
            yield from run
        return
    group = getattr(collate, "group", None) if in_worker() else None
    made = batches(
        runs,
        batch_size,
        collate,
        worker,
        num_datasets,
        whole_runs=whole_runs,
        ids=ids,
        packed=not group,
    )
    yield from made if group is None else group(made)


def id_row_batches(blocks: Iterable[BatchIds], batch_size: int) -> Iterator[BatchIds]:
    """Batches of ``batch_size`` rows (the last one shorter) of ``blocks`` of ids, as views."""
    carry = np.zeros((0, 2), dtype=np.int64)
    for block in blocks:
        rows = np.concatenate((carry, block)) if len(carry) else block
        whole = len(rows) - len(rows) % batch_size
        yield from (rows[start : start + batch_size] for start in range(0, whole, batch_size))
        carry = rows[whole:]
    if len(carry):
        yield carry


def labelled(dataset: int, indices: npt.NDArray[np.int64]) -> BatchIds:
    """The ids of sample ``indices`` of dataset ``dataset``."""
    ids = np.empty((len(indices), 2), dtype=np.int64)
    ids[:, 0] = dataset
    ids[:, 1] = indices
    return ids


def single_id_batches(runs: Iterable[npt.NDArray[np.int64]], batch_size: int) -> Iterator[BatchIds]:
    """The ids of each batch of one dataset's runs of sample indices (as ``batches`` cuts them)."""
    return id_row_batches((labelled(0, run) for run in runs), batch_size)


class IdTaker:
    """Takes sample indices off a dataset's runs of them, so many at a time.

    Args:
        runs: The dataset's sample indices, in reading order, in runs.
    """

    def __init__(self, runs: Iterator[npt.NDArray[np.int64]]) -> None:
        self._runs = runs
        self._buffer = np.zeros(0, dtype=np.int64)

    def take(self, count: int) -> npt.NDArray[np.int64]:
        """The next ``count`` indices (fewer if the runs end)."""
        parts = []
        while count:
            if not len(self._buffer):
                run = next(self._runs, None)
                if run is None:
                    break
                self._buffer = run
            part = self._buffer[:count]
            self._buffer = self._buffer[count:]
            parts.append(part)
            count -= len(part)
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def mixed_id_batches(
    drawn: Iterable[npt.NDArray[np.int64]], takers: Sequence[IdTaker], batch_size: int
) -> Iterator[BatchIds]:
    """The ids of each batch of a mixture's one-sample draws (blocks of their datasets)."""

    def blocks() -> Iterator[BatchIds]:
        for sources in drawn:
            ids = np.empty((len(sources), 2), dtype=np.int64)
            ids[:, 0] = sources
            for dataset, taker in enumerate(takers):
                mask = sources == dataset
                ids[mask, 1] = taker.take(int(mask.sum()))
            yield ids

    return id_row_batches(blocks(), batch_size)


def as_pairs(ids: BatchIds) -> Ids:
    """``(dataset index, sample index)`` tuples of an ``(n, 2)`` array."""
    return [(int(d), int(i)) for d, i in ids.tolist()]
