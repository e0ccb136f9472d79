"""Batch provenance: which samples make each batch of an epoch, from the plan, reading none.

A worker's batches are a pure function of the plan (dataset identity, seed, epoch, topology,
shuffle) and, for a mixture, of its draws; ``batch_plan`` on a dataset replays that without
decoding a sample. The loader takes one batch from each of its workers in turn (a worker that
has no batch left drops out of the turn), which gives every batch its step.
``NamedBatches`` gives ``StreamingDataset`` its ``batch_plan``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

import numpy as np
import numpy.typing as npt
import torch

from litdata.streaming.epoch.plan import Segment, Topology
from litdata.streaming.epoch.regions import RegionIndex
from litdata.streaming.epoch.sample_key import replaying
from litdata.streaming.epoch.schedule import Clock
from litdata.streaming.epoch.shuffles import CheckedShuffle
from litdata.streaming.workers.batching import BatchIds, Ids, single_id_batches

__all__ = [
    "IDS_KEY",
    "NamedBatches",
    "Plannable",
    "clock_of_epoch",
    "id_counts",
    "in_turn",
    "step_plan",
    "unplannable",
    "with_ids",
]

#: The entry a dict batch gets with ``provenance=True``.
IDS_KEY = "__ids__"

T = TypeVar("T")


class Plannable(Protocol):
    """A dataset whose batches can be named without reading them."""

    def batch_plan(
        self, worker: int, topology: Topology, *, rank: int, epoch: int, clock: Clock, fresh: bool
    ) -> tuple[int, Iterator[BatchIds]]:
        """Worker ``worker``'s logical id and the ids of its batches."""
        ...


def unplannable(dataset: object) -> TypeError:
    """The error for a dataset whose batches cannot be named without reading them."""
    return TypeError(
        f"{type(dataset).__name__} cannot name its batches' samples without reading them: "
        f"batch_ids, replay, skip and provenance work with StreamingDataset and "
        f"CombinedStreamingDataset."
    )


def in_turn(plans: Sequence[Iterator[T]]) -> Iterator[tuple[int, T]]:
    """``(worker, item)`` from each worker's iterator in turn, as the DataLoader takes them."""
    live = list(enumerate(plans))
    while live:
        still = []
        for worker, plan in live:
            item = next(plan, None)
            if item is not None:
                still.append((worker, plan))
                yield worker, item
        live = still


def step_plan(
    dataset: Plannable,
    topology: Topology,
    *,
    rank: int,
    epoch: int,
    clock: Clock,
    fresh: bool,
) -> Iterator[tuple[int, BatchIds]]:
    """Each batch of a run of the loader, in step order: ``(logical worker, ids)``.

    Args:
        dataset: The dataset.
        topology: The loader's ranks, workers and batch size.
        rank: The rank whose batches these are.
        epoch: The epoch.
        clock: Where training stood when the run began (a schedule's position).
        fresh: The epoch from its start; otherwise the run a loaded state dict resumes.
    """
    plans = [
        dataset.batch_plan(worker, topology, rank=rank, epoch=epoch, clock=clock, fresh=fresh)
        for worker in range(topology.num_workers)
    ]
    logical = [worker for worker, _ in plans]
    for torch_worker, ids in in_turn([batches for _, batches in plans]):
        yield logical[torch_worker], ids


def with_ids(batch: Any, ids: BatchIds) -> Any:
    """A dict batch with its ids under ``"__ids__"``; any other batch as ``(batch, ids)``.

    The ids are an ``(n, 2)`` int64 tensor: row ``j`` is sample ``j``'s dataset and index.
    """
    carried = torch.from_numpy(ids)
    if isinstance(batch, dict):
        batch[IDS_KEY] = carried
        return batch
    return batch, carried


def id_counts(ids: BatchIds, num_datasets: int) -> list[int]:
    """How many samples of each dataset ``ids`` names."""
    return [int(count) for count in np.bincount(ids[:, 0], minlength=num_datasets)]


def clock_of_epoch(  # noqa: PLR0917  # one call site, in the loader
    dataset: Plannable,
    topology: Topology,
    rank: int,
    epoch: int,
    known: Mapping[int, Clock],
    scheduled: bool,
) -> Clock:
    """Where training stood as ``epoch`` began: a ``known`` one, or counted from one.

    Only a schedule needs it (otherwise the zero clock). The steps of the epochs after the
    last known one are counted from their plans.
    """
    if not scheduled:
        return Clock()
    start = max((e for e in known if e <= epoch), default=1)
    clock = known.get(start, Clock())
    for earlier in range(start, epoch):
        plan = step_plan(dataset, topology, rank=rank, epoch=earlier, clock=clock, fresh=True)
        clock = clock.after(sum(1 for _ in plan), topology.batch_size, topology.world_size)
    return clock


class NamedBatches:
    """What a streaming dataset adds to name its batches' samples without reading them.

    Needs the dataset's items (``_regions``), its ``seed`` and shuffle ``strategy``, its
    workers' segments (``worker_segments``), the resumed run's ``rotation`` and ``ds[i]``.
    """

    _regions: RegionIndex
    seed: int

    if TYPE_CHECKING:

        @property
        def strategy(self) -> CheckedShuffle:
            """The dataset's shuffle strategy."""
            ...

        def worker_segments(
            self,
            logical: int,
            topology: Topology,
            *,
            rank: int | None = None,
            epoch: int | None = None,
            fresh: bool = False,
        ) -> Sequence[Segment]:
            """The segments worker ``logical`` of a rank reads in an epoch."""
            ...

        def rotation(self, topology: Topology) -> int:
            """How far a resumed run rotates the worker ids."""
            ...

        def __getitem__(self, index: int) -> Any:
            """The sample at dataset position ``index``."""
            ...

    def segment_ids(
        self, segments: Sequence[Segment], epoch: int
    ) -> Iterator[npt.NDArray[np.int64]]:
        """The dataset positions (``ds[i]``) of ``segments``' items in ``epoch``, reading none."""
        strategy, regions = self.strategy, self._regions
        for segment in segments:
            size = int(regions.sizes[segment.region])
            order = strategy.item_permutation(segment.region, size, self.seed, epoch)
            first = segment.offset
            yield regions.first(segment.region) + order[first : first + segment.count]

    #: ``batch_plan`` names the batches' samples.
    plannable: ClassVar[bool] = True

    def batch_plan(
        self, worker: int, topology: Topology, *, rank: int, epoch: int, clock: Clock, fresh: bool
    ) -> tuple[int, Iterator[BatchIds]]:
        """The ids of the batches DataLoader worker ``worker`` of ``rank`` makes, reading none.

        Args:
            worker: The DataLoader worker (torch's id).
            topology: Ranks, workers and batch size.
            rank: The rank.
            epoch: The epoch.
            clock: Where training stood when the run began (unused: no schedule here).
            fresh: The epoch from its start; otherwise the run a loaded state dict resumes.

        Returns:
            The worker's logical id (its batches' ``Envelope.worker``) and its batches' ids.
        """
        del clock
        logical = (worker + (0 if fresh else self.rotation(topology))) % topology.num_workers
        segments = self.worker_segments(logical, topology, rank=rank, epoch=epoch, fresh=fresh)
        runs = self.segment_ids(segments, epoch)
        return logical, single_id_batches(runs, topology.batch_size)

    def batch_counts(self, ids: BatchIds) -> list[int]:
        """What a batch of ``ids`` counts for: its samples."""
        return [len(ids)]

    def read_ids(
        self, ids: Ids, *, worker: int = 0, first_step: int = 0, epoch: int = 1
    ) -> list[Any]:
        """The samples ``ids`` name (every dataset index is 0), as streaming returns them.

        Where they were read (``worker``, ``first_step``) does not change them; ``epoch`` is
        the key random transforms draw from (``sample_key``), so they draw as they did then.
        """
        del worker, first_step
        with replaying(epoch):
            return [self[index] for _, index in ids]
