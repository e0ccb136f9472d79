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

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import zip_longest

from litdata.streaming.shuffles import CheckedShuffle

__all__ = ["Segment", "Topology", "budgets", "epoch_plan", "redistribute", "skip"]


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


def _stripes(sizes: Sequence[int], workers: int) -> list[list[int]]:
    """Contiguous runs of whole regions, balanced by item count."""
    total = sum(sizes)
    stripes: list[list[int]] = [[] for _ in range(workers)]
    worker, prefix = 0, 0
    for region, size in enumerate(sizes):
        boundary = (worker + 1) * total / workers
        if stripes[worker] and prefix + size / 2 > boundary and worker < workers - 1:
            worker += 1
        stripes[worker].append(region)
        prefix += size
    return stripes


def _trim(segments: list[Segment], keep: int) -> list[Segment]:
    kept: list[Segment] = []
    for segment in segments:
        if keep <= 0:
            break
        kept.append(Segment(segment.region, segment.offset, min(segment.count, keep)))
        keep -= segment.count
    return kept


def _whole_chunk_plan(sizes: Sequence[int], topology: Topology, drop_last: bool) -> Plan:
    plan = [
        [Segment(region, 0, sizes[region]) for region in stripe]
        for stripe in _stripes(sizes, topology.total_workers)
    ]
    if not drop_last:
        return plan
    # Whole batches per worker, and the same number of items on every rank (lockstep).
    batch, workers = topology.batch_size, topology.num_workers
    keep = [sum(s.count for s in segments) // batch * batch for segments in plan]
    ranks = [keep[rank * workers : (rank + 1) * workers] for rank in range(topology.world_size)]
    cap = min(sum(rank) for rank in ranks)
    for rank in ranks:
        excess = sum(rank) - cap
        for worker in reversed(range(workers)):
            cut = min(excess, rank[worker])
            rank[worker] -= cut
            excess -= cut
    keep = [count for rank in ranks for count in rank]
    return [_trim(segments, count) for segments, count in zip(plan, keep, strict=True)]


def worker_sizes(
    sizes: Sequence[int], topology: Topology, drop_last: bool, whole_chunks: bool
) -> list[int]:
    """How many items each global worker reads in an epoch ``epoch_plan`` makes.

    Args:
        sizes: The number of items of each region of the dataset.
        topology: Ranks, workers per rank and batch size.
        drop_last: Read only whole batches, equally many on every rank.
        whole_chunks: Whether the shuffle strategy gives workers whole chunks.
    """
    if whole_chunks:
        plan = _whole_chunk_plan(sizes, topology, drop_last)
        return [sum(segment.count for segment in segments) for segments in plan]
    return budgets(sum(sizes), topology, drop_last)


def epoch_plan(
    sizes: Sequence[int],
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
    if strategy.whole_chunks:
        plan = _whole_chunk_plan(sizes, topology, drop_last)
    else:
        order = strategy.chunk_order(len(sizes), seed, epoch)
        pieces = [Segment(region, 0, sizes[region]) for region in order]
        plan = _deal(pieces, budgets(sum(sizes), topology, drop_last))
    reordered = []
    for worker, segments in enumerate(plan):
        order = strategy.worker_chunk_order(range(len(segments)), seed, epoch, worker)
        reordered.append([segments[i] for i in order])
    return reordered


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
