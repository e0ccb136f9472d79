"""The epoch plan: which items each rank's workers read, in which order. Pure functions.

A dataset is a list of *regions* (the part of a chunk it reads; a whole chunk unless
subsampled). A plan gives every global worker (``rank * num_workers + worker``) a list of
*segments*: runs of a region's items, in the region's item order for the epoch. Ranks and
workers get disjoint items whose union is every item (less what ``drop_last`` drops), and each
worker's share is a whole number of batches, so ranks stay in lockstep.

Resuming replays this: the items each worker consumed are a prefix of its segments; what is
left is either continued by the same workers (same topology) or dealt afresh to a new one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import overload

import numpy as np
import numpy.typing as npt

from litdata.streaming.epoch.shuffles import CheckedShuffle

__all__ = [
    "Segment",
    "Segments",
    "Topology",
    "budgets",
    "epoch_plan",
    "redistribute",
    "skip",
    "worker_plan",
    "worker_sizes",
]

Int64s = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Topology:
    """How many ranks, workers per rank, and items per batch read the dataset."""

    world_size: int = 1
    num_workers: int = 1
    batch_size: int = 1

    @property
    def total_workers(self) -> int:
        """Workers across all ranks."""
        return self.world_size * self.num_workers


@dataclass(frozen=True, slots=True)
class Segment:
    """``count`` items of region ``region``, from position ``offset`` of its item order."""

    region: int
    offset: int
    count: int


Plan = list[list[Segment]]


class Segments(Sequence[Segment]):
    """One worker's segments as three int64 arrays; each ``Segment`` is made when asked for.

    What ``worker_plan`` returns: a worker of a million-chunk epoch gets its share without a
    million objects made before its first batch.
    """

    def __init__(self, regions: Int64s, offsets: Int64s, counts: Int64s) -> None:
        self.regions, self.offsets, self.counts = regions, offsets, counts

    def __len__(self) -> int:
        return len(self.regions)

    @overload
    def __getitem__(self, position: int) -> Segment: ...
    @overload
    def __getitem__(self, position: slice) -> Segments: ...
    def __getitem__(self, position: int | slice) -> Segment | Segments:
        if isinstance(position, slice):
            return Segments(self.regions[position], self.offsets[position], self.counts[position])
        return Segment(
            int(self.regions[position]), int(self.offsets[position]), int(self.counts[position])
        )

    def __iter__(self) -> Iterator[Segment]:
        arrays = (self.regions, self.offsets, self.counts)
        columns = (np.ascontiguousarray(array, np.int64).data for array in arrays)
        for region, offset, count in zip(*columns, strict=True):
            yield Segment(region, offset, count)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # a sequence, compared by value

    def taken(self, order: Sequence[int]) -> Segments:
        """These segments in ``order`` (positions)."""
        at = np.asarray(order, dtype=np.int64)
        return Segments(self.regions[at], self.offsets[at], self.counts[at])


def budgets(total: int, topology: Topology, drop_last: bool) -> list[int]:
    """How many items each global worker reads (LitData's split).

    Every rank gets the same number of whole batches, spread over its workers in the order the
    DataLoader asks them. Without ``drop_last`` the items left over go to the last rank, to the
    worker whose turn comes next; with it they are not read this epoch.
    """
    world, workers, batch = topology.world_size, topology.num_workers, topology.batch_size
    per_rank = total // batch // world
    shares = [
        (per_rank // workers + (1 if worker < per_rank % workers else 0)) * batch
        for _ in range(world)
        for worker in range(workers)
    ]
    leftover = total - batch * world * per_rank
    if leftover and not drop_last:
        shares[(world - 1) * workers + per_rank % workers] += leftover
    return shares


def _deal(pieces: Sequence[Segment], shares: Sequence[int]) -> Plan:
    """Give ``pieces`` to workers in order, splitting them at each worker's share."""
    plan: Plan = [[] for _ in shares]
    worker, room = 0, shares[0] if shares else 0
    for piece in pieces:
        offset, left = piece.offset, piece.count
        while left:
            while room == 0:
                worker += 1
                if worker == len(shares):
                    return plan
                room = shares[worker]
            take = min(left, room)
            plan[worker].append(Segment(piece.region, offset, take))
            offset, left, room = offset + take, left - take, room - take
    return plan


def _cumulative(values: Int64s) -> Int64s:
    """``[0, v0, v0 + v1, ...]`` (``len(values) + 1`` sums)."""
    sums = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=sums[1:])
    return sums


def _stripes(sizes: Int64s, workers: int) -> Int64s:
    """The worker of each region: contiguous runs of whole regions, balanced by item count.

    A region goes to the next worker when its middle lies past that worker's boundary
    (``(worker + 1) * total / workers``), at most one worker further per region, and every
    worker's run starts with a region. Dealt one by one that is ``w[r] = min(f[r], w[r-1] + 1)``
    for ``f[r]`` the boundaries below region ``r``'s middle (``f`` never decreases), whose
    solution is a running minimum: no Python loop over regions.
    """
    count = len(sizes)
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    total = int(sizes.sum())
    middles = _cumulative(sizes)[:-1].astype(np.float64) + sizes / 2
    boundaries = np.arange(1, workers, dtype=np.int64) * total / workers
    below = np.searchsorted(boundaries, middles, side="left").astype(np.int64)
    below[0] = 0
    steps = np.arange(count, dtype=np.int64)
    return np.minimum.accumulate(below - steps) + steps


def _lockstep(totals: Sequence[int], topology: Topology) -> list[int]:
    """What each worker keeps of its stripe: whole batches, as many items on every rank."""
    batch, workers = topology.batch_size, topology.num_workers
    keep = [total // batch * batch for total in totals]
    ranks = [keep[rank * workers : (rank + 1) * workers] for rank in range(topology.world_size)]
    cap = min(sum(rank) for rank in ranks)
    for rank in ranks:
        excess = sum(rank) - cap
        for worker in reversed(range(workers)):
            cut = min(excess, rank[worker])
            rank[worker] -= cut
            excess -= cut
    return [count for rank in ranks for count in rank]


class _Stripes:
    """The whole-chunk plan: each worker's stripe of regions, trimmed under ``drop_last``."""

    def __init__(self, sizes: Int64s, topology: Topology, drop_last: bool) -> None:
        self.sizes = sizes
        workers = np.arange(topology.total_workers, dtype=np.int64)
        owner = _stripes(sizes, topology.total_workers)
        self.first = np.searchsorted(owner, workers, side="left")
        self.end = np.searchsorted(owner, workers, side="right")
        sums = _cumulative(sizes)
        self.totals: list[int] = (sums[self.end] - sums[self.first]).tolist()
        self.keep = _lockstep(self.totals, topology) if drop_last else None

    def segments(self, worker: int) -> Segments:
        first, end = int(self.first[worker]), int(self.end[worker])
        counts = self.sizes[first:end]
        regions = np.arange(first, end, dtype=np.int64)
        if self.keep is not None:  # trimmed: each segment gets what is left of the keep
            left = self.keep[worker] - (np.cumsum(counts) - counts)
            kept = left > 0
            regions, counts = regions[kept], np.minimum(counts[kept], left[kept])
        return Segments(regions, np.zeros(len(regions), dtype=np.int64), counts)

    def shares(self) -> list[int]:
        return self.totals if self.keep is None else self.keep


class _Dealt:
    """The dealt plan: regions in the strategy's order, cut at each worker's share."""

    def __init__(self, sizes: Int64s, shares: Sequence[int], order: Int64s) -> None:
        self.order = order
        self.sizes = sizes[order]
        self.sums = _cumulative(self.sizes)
        self.bounds = _cumulative(np.asarray(shares, dtype=np.int64))

    def segments(self, worker: int) -> Segments:
        begin, end = int(self.bounds[worker]), int(self.bounds[worker + 1])
        if begin == end:
            return Segments(*(np.zeros(0, dtype=np.int64) for _ in range(3)))
        first = int(np.searchsorted(self.sums, begin, side="right")) - 1
        last = int(np.searchsorted(self.sums, end, side="left"))
        # Whole regions but the two ends: one copy of their sizes, no pass per operation
        # (a worker of a 10^7-chunk epoch holds arrays of 80 MB).
        regions, counts = self.order[first:last], self.sizes[first:last].copy()
        offsets = np.zeros(len(counts), dtype=np.int64)
        offsets[0] = begin - int(self.sums[first])
        counts[0] -= offsets[0]
        counts[-1] -= int(self.sums[last]) - end
        if counts.all():
            return Segments(regions, offsets, counts)
        some = counts > 0  # empty regions, or an end cut to nothing
        return Segments(regions[some], offsets[some], counts[some])


def _planner(
    sizes: Sequence[int] | Int64s,
    topology: Topology,
    *,
    seed: int,
    epoch: int,
    drop_last: bool,
    strategy: CheckedShuffle,
) -> Callable[[int], Segments]:
    """A function of a global worker giving its segments of the epoch (computed on arrays)."""
    array = np.asarray(sizes, dtype=np.int64)
    strategy = CheckedShuffle(strategy)  # as given, or a bare strategy (a test's, a contract's)
    planned: _Stripes | _Dealt
    if strategy.whole_chunks:
        planned = _Stripes(array, topology, drop_last)
    else:
        order = strategy.chunk_permutation(len(array), seed, epoch)
        planned = _Dealt(array, budgets(int(array.sum()), topology, drop_last), order)

    def segments(worker: int) -> Segments:
        found = planned.segments(worker)
        order = strategy.worker_chunk_order(range(len(found)), seed, epoch, worker)
        return found if order == range(len(found)) else found.taken(order)

    return segments


def worker_sizes(
    sizes: Sequence[int] | Int64s, topology: Topology, drop_last: bool, whole_chunks: bool
) -> list[int]:
    """How many items each global worker reads in an epoch ``epoch_plan`` makes.

    Args:
        sizes: The number of items of each region of the dataset.
        topology: Ranks, workers per rank and batch size.
        drop_last: Read only whole batches, equally many on every rank.
        whole_chunks: Whether the shuffle strategy gives workers whole chunks.
    """
    array = np.asarray(sizes, dtype=np.int64)
    if whole_chunks:
        return _Stripes(array, topology, drop_last).shares()
    return budgets(int(array.sum()), topology, drop_last)


def epoch_plan(
    sizes: Sequence[int] | Int64s,
    topology: Topology,
    *,
    seed: int,
    epoch: int,
    drop_last: bool,
    strategy: CheckedShuffle,
) -> Plan:
    """Every global worker's segments for one epoch.

    Args:
        sizes: The number of items of each region of the dataset.
        topology: Ranks, workers per rank and batch size.
        seed: The shuffle seed.
        epoch: The epoch (from 1).
        drop_last: Read only whole batches, equally many on every rank.
        strategy: How chunks and items are ordered.
    """
    segments = _planner(
        sizes, topology, seed=seed, epoch=epoch, drop_last=drop_last, strategy=strategy
    )
    return [list(segments(worker)) for worker in range(topology.total_workers)]


def worker_plan(
    sizes: Sequence[int] | Int64s,
    topology: Topology,
    worker: int,
    *,
    seed: int,
    epoch: int,
    drop_last: bool,
    strategy: CheckedShuffle,
) -> Segments:
    """``epoch_plan(...)[worker]``, without making any other worker's segments.

    The plan is computed on arrays (a sort, cumulative sums, searches), so its cost grows with
    the number of regions in numpy, and with this worker's share in Python.
    """
    segments = _planner(
        sizes, topology, seed=seed, epoch=epoch, drop_last=drop_last, strategy=strategy
    )
    return segments(worker)


def skip(segments: Sequence[Segment], consumed: int) -> list[Segment]:
    """``segments`` without their first ``consumed`` items."""
    left: list[Segment] = []
    for segment in segments:
        if consumed >= segment.count:
            consumed -= segment.count
            continue
        left.append(Segment(segment.region, segment.offset + consumed, segment.count - consumed))
        consumed = 0
    return left


def redistribute(plan: Plan, topology: Topology, drop_last: bool) -> Plan:
    """Deal what is left of ``plan`` to the workers of a new ``topology``.

    The remaining segments are interleaved across the old workers (keeping the mix the old
    plan served), then split at the new workers' shares. Each remaining item goes to exactly
    one new worker; with ``drop_last`` the items that do not fill a batch on every rank are
    dropped, as at the end of any epoch.
    """
    pieces = [segment for group in zip_longest(*plan) for segment in group if segment is not None]
    total = sum(piece.count for piece in pieces)
    return _deal(pieces, budgets(total, topology, drop_last))
