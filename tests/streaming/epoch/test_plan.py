"""The epoch plan is a pure function: checked exhaustively here, without processes."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litdata.engine.cache.prefetch import uses
from litdata.plugins.shuffle.full import FullShuffle
from litdata.plugins.shuffle.none import NoShuffle
from litdata.plugins.shuffle.window import WindowShuffle
from litdata.streaming.epoch.plan import (
    Segment,
    Topology,
    _deal,
    _stripes,
    budgets,
    epoch_plan,
    redistribute,
    skip,
    worker_plan,
    worker_sizes,
)

STRATEGIES = {"none": NoShuffle(), "full": FullShuffle(), "window": WindowShuffle(4)}


def items(plan, sizes, strategy, seed=0, epoch=1):
    """Every (region, item) each worker reads, in order."""
    out = []
    for segments in plan:
        worker = []
        for s in segments:
            order = strategy.item_order(s.region, sizes[s.region], seed, epoch)
            worker.extend((s.region, order[i]) for i in range(s.offset, s.offset + s.count))
        out.append(worker)
    return out


topologies = st.builds(Topology, st.integers(1, 4), st.integers(1, 4), st.integers(1, 8))
datasets = st.lists(st.integers(0, 40), min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(datasets, topologies, st.sampled_from(sorted(STRATEGIES)), st.booleans(), st.integers(0, 5))
def test_disjoint_and_complete(sizes, topology, name, drop_last, seed):
    strategy = STRATEGIES[name]
    plan = epoch_plan(sizes, topology, seed=seed, epoch=1, drop_last=drop_last, strategy=strategy)
    assert len(plan) == topology.total_workers
    read = [item for worker in items(plan, sizes, strategy, seed) for item in worker]
    counts = Counter(read)
    assert all(count == 1 for count in counts.values()), "an item is read twice"
    everything = {(region, i) for region, size in enumerate(sizes) for i in range(size)}
    assert set(read) <= everything
    total = sum(sizes)
    if not drop_last:
        assert set(read) == everything
    elif not strategy.whole_chunks:
        per_rank = total // topology.batch_size // topology.world_size
        assert len(read) == per_rank * topology.batch_size * topology.world_size
    if drop_last:  # ranks in lockstep: the same number of items each, in whole batches
        per_rank = [
            sum(
                sum(s.count for s in plan[r * topology.num_workers + w])
                for w in range(topology.num_workers)
            )
            for r in range(topology.world_size)
        ]
        assert len(set(per_rank)) == 1
        for segments in plan:
            assert sum(s.count for s in segments) % topology.batch_size == 0


@given(datasets, topologies, st.integers(0, 9), st.integers(1, 5))
def test_same_seed_and_epoch_same_order(sizes, topology, seed, epoch):
    strategy = FullShuffle()
    first = epoch_plan(sizes, topology, seed=seed, epoch=epoch, drop_last=False, strategy=strategy)
    again = epoch_plan(sizes, topology, seed=seed, epoch=epoch, drop_last=False, strategy=strategy)
    assert items(first, sizes, strategy, seed, epoch) == items(again, sizes, strategy, seed, epoch)


@pytest.mark.parametrize("name", ["full", "window"])
def test_next_epoch_is_a_different_order(name):
    strategy, sizes, topology = STRATEGIES[name], [50] * 20, Topology(2, 2, 4)
    one = items(
        epoch_plan(sizes, topology, seed=3, epoch=1, drop_last=False, strategy=strategy),
        sizes,
        strategy,
        3,
        1,
    )
    two = items(
        epoch_plan(sizes, topology, seed=3, epoch=2, drop_last=False, strategy=strategy),
        sizes,
        strategy,
        3,
        2,
    )
    assert one != two
    assert sorted(i for w in one for i in w) == sorted(i for w in two for i in w)


def test_no_shuffle_is_litdatas_example():
    # 101 items in chunks of 10, two ranks, one worker each, batch 1
    plan = epoch_plan(
        [10] * 10 + [1], Topology(2, 1, 1), seed=0, epoch=1, drop_last=False, strategy=NoShuffle()
    )
    flat = [
        [r * 10 + i for s in w for r in [s.region] for i in range(s.offset, s.offset + s.count)]
        for w in plan
    ]
    assert flat[0] == list(range(50))
    assert flat[1] == list(range(50, 101))
    assert budgets(101, Topology(2, 1, 1), drop_last=True) == [50, 50]


def test_window_shuffle_keeps_whole_chunks_in_stripes():
    sizes = [10] * 8
    plan = epoch_plan(
        sizes, Topology(1, 2, 1), seed=0, epoch=1, drop_last=False, strategy=WindowShuffle(2)
    )
    assert all(s.offset == 0 and s.count == 10 for w in plan for s in w)
    assert sorted(s.region for s in plan[0]) == [0, 1, 2, 3]
    assert sorted(s.region for s in plan[1]) == [4, 5, 6, 7]


@settings(max_examples=200, deadline=None)
@given(datasets, topologies, topologies, st.booleans(), st.data())
def test_redistributed_remainder_is_exactly_the_unseen_items(sizes, old, new, drop_last, data):
    strategy = FullShuffle()
    plan = epoch_plan(sizes, old, seed=1, epoch=1, drop_last=False, strategy=strategy)
    consumed = [data.draw(st.integers(0, sum(s.count for s in w))) for w in plan]
    seen = [
        item
        for w, c in zip(items(plan, sizes, strategy, 1), consumed, strict=True)
        for item in w[:c]
    ]
    left = [skip(w, c) for w, c in zip(plan, consumed, strict=True)]
    unseen = Counter(item for w in items(left, sizes, strategy, 1) for item in w)
    new_plan = redistribute(left, new, drop_last)
    after = Counter(item for w in items(new_plan, sizes, strategy, 1) for item in w)
    assert not set(seen) & set(after)
    assert all(count == 1 for count in after.values())
    assert set(after) <= set(unseen)
    if not drop_last:
        assert after == unseen
    else:
        assert sum(unseen.values()) - sum(after.values()) < new.world_size * new.batch_size


# -- the plan on arrays is the plan dealt one region at a time ---------------------------------
def _stripes_one_by_one(sizes, workers):
    """The whole-chunk stripes as first written: one region at a time (the oracle)."""
    total, stripes, worker, prefix = sum(sizes), [[] for _ in range(workers)], 0, 0
    for region, size in enumerate(sizes):
        if stripes[worker] and prefix + size / 2 > (worker + 1) * total / workers:
            worker = min(worker + 1, workers - 1)
        stripes[worker].append(region)
        prefix += size
    return stripes


def _dealt_one_by_one(sizes, topology, drop_last, strategy, seed, epoch):
    order = list(strategy.chunk_order(len(sizes), seed, epoch))
    pieces = [Segment(region, 0, sizes[region]) for region in order]
    return _deal(pieces, budgets(sum(sizes), topology, drop_last))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=1, max_size=40), st.integers(1, 12))
def test_stripes_on_arrays_match_one_by_one(sizes, workers):
    owner = _stripes(np.asarray(sizes, dtype=np.int64), workers).tolist()
    stripes = [[r for r, w in enumerate(owner) if w == worker] for worker in range(workers)]
    assert stripes == _stripes_one_by_one(sizes, workers)


@settings(max_examples=300, deadline=None)
@given(datasets, topologies, st.sampled_from(["none", "full"]), st.booleans(), st.integers(0, 5))
def test_dealt_plan_on_arrays_matches_one_by_one(sizes, topology, name, drop_last, seed):
    strategy = STRATEGIES[name]
    plan = epoch_plan(sizes, topology, seed=seed, epoch=2, drop_last=drop_last, strategy=strategy)
    assert plan == _dealt_one_by_one(sizes, topology, drop_last, strategy, seed, 2)


@settings(max_examples=200, deadline=None)
@given(datasets, topologies, st.sampled_from(sorted(STRATEGIES)), st.booleans())
def test_one_worker_plan_is_its_part_of_the_plan(sizes, topology, name, drop_last):
    strategy = STRATEGIES[name]
    options = {"seed": 3, "epoch": 1, "drop_last": drop_last, "strategy": strategy}
    plan = epoch_plan(sizes, topology, **options)
    for worker in range(topology.total_workers):
        assert worker_plan(np.asarray(sizes), topology, worker, **options) == plan[worker]
    shares = worker_sizes(sizes, topology, drop_last, strategy.whole_chunks)
    assert shares == [sum(s.count for s in segments) for segments in plan]


@pytest.mark.parametrize("spread", [3, 10, 1_000])  # dense chunk ids (a table), sparse (a sort)
def test_uses_marks_each_chunks_first_and_last_read(spread):
    rng = np.random.default_rng(spread)
    for case in range(200):
        count = int(rng.integers(1, 60))
        if case % 2:  # each chunk once (a shuffled epoch's worker)
            chunks = rng.permutation(max(spread, count))[: min(count, spread)].astype(np.int64)
        else:
            chunks = rng.integers(0, spread, count).astype(np.int64)
        first, last = uses(chunks)
        seen = [int(c) for c in chunks]
        assert first.tolist() == [c not in seen[:i] for i, c in enumerate(seen)]
        assert last.tolist() == [c not in seen[i + 1 :] for i, c in enumerate(seen)]
    assert [len(mask) for mask in uses(np.zeros(0, dtype=np.int64))] == [0, 0]
