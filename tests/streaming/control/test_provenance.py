"""batch_ids and provenance=True: the samples of every batch, from the plan, reading none."""

import pickle

import pytest
import torch
from support.gloo import run_ranks

import litdata as ld
from litdata.streaming.control.provenance_log import read_log


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """900 and 500 samples; ``id`` is the sample's index, plus 100,000 in the second."""
    a = tmp_path_factory.mktemp("a")
    b = tmp_path_factory.mktemp("b")
    ld.write_dataset(({"id": i} for i in range(900)), a, chunk_size=64)
    ld.write_dataset(({"id": 100_000 + i} for i in range(500)), b, chunk_size=50)
    return a, b


def contents(batch):
    """What a batch holds, as ``(dataset index, sample index)``."""
    return [(1, i - 100_000) if i >= 100_000 else (0, i) for i in batch["id"].tolist()]


def pairs(carried):
    """The ``"__ids__"`` tensor as ``(dataset index, sample index)`` tuples."""
    assert carried.dtype == torch.int64
    return [tuple(row) for row in carried.tolist()]


def build(pair, kind):
    a, b = pair
    if kind == "plain":
        return ld.StreamingDataset(a, shuffle=True, seed=3)
    children = [ld.StreamingDataset(a, shuffle=True), ld.StreamingDataset(b, shuffle=True)]
    options = {
        "mixture": {"weights": [0.3, 0.7], "iterate_over_all": False},
        "all": {},
        "per_stream": {"batching_method": "per_stream"},
        "schedule": {
            "weights": ld.WeightSchedule([(0, [1, 0]), (20, [0.2, 0.8])], unit="steps"),
            "iterate_over_all": False,
        },
    }[kind]
    return ld.CombinedStreamingDataset(children, seed=5, **options)


@pytest.mark.parametrize("kind", ["plain", "mixture", "all", "per_stream", "schedule"])
@pytest.mark.parametrize("workers", [0, 3])
def test_batch_ids_are_what_the_batches_held(pair, kind, workers):
    loader = ld.StreamingDataLoader(build(pair, kind), batch_size=16, num_workers=workers)
    for epoch in (1, 2):
        held = [contents(batch) for batch in loader]
        assert loader.current_epoch == epoch
        assert [loader.batch_ids(step) for step in range(len(held))] == held
        with pytest.raises(IndexError, match=f"no step {len(held)}"):
            loader.batch_ids(len(held))
    again = ld.StreamingDataLoader(build(pair, kind), batch_size=16, num_workers=workers)
    assert again.batch_ids(5, epoch=2) == held[5]  # any epoch, before reading any


def test_batches_carry_their_ids(pair):
    loader = ld.StreamingDataLoader(
        build(pair, "mixture"), batch_size=10, num_workers=2, provenance=True
    )
    batches = list(loader)
    assert all(pairs(batch["__ids__"]) == contents(batch) for batch in batches)
    assert all(isinstance(batch["id"], torch.Tensor) for batch in batches)


def test_a_batch_that_is_no_dict_comes_with_its_ids(pair):
    loader = ld.StreamingDataLoader(
        build(pair, "plain"),
        batch_size=8,
        num_workers=2,
        provenance=True,
        collate_fn=lambda samples: [s["id"] for s in samples],
    )
    for batch, ids in loader:
        assert pairs(ids) == [(0, i) for i in batch]


def test_ids_after_a_resume_are_the_rest(pair):
    def loader(workers):
        return ld.StreamingDataLoader(
            build(pair, "mixture"), batch_size=16, num_workers=workers, provenance=True
        )

    head = loader(2)
    for count, _ in enumerate(head, 1):
        if count == 7:
            break
    for workers in (2, 4):  # the same workers, or more
        resumed = loader(workers)
        resumed.load_state_dict(head.state_dict())
        assert all(pairs(batch["__ids__"]) == contents(batch) for batch in resumed)


def test_bad_steps(pair):
    loader = ld.StreamingDataLoader(build(pair, "plain"), batch_size=16)
    with pytest.raises(ValueError, match="steps count from 0"):
        loader.batch_ids(-1)
    with pytest.raises(ValueError, match="ranks are 0 to 0"):
        loader.batch_ids(0, rank=1)


def noisy(samples, rngs):
    """A zip's transform drawing from every rng it is given."""
    first, second = samples
    return {
        "a": first["id"],
        "b": second["id"],
        "torch": torch.randint(0, 10**6, (1,), generator=rngs["torch"]).item(),
        "numpy": int(rngs["numpy"].integers(0, 10**6)),
        "random": rngs["random"].random(),
    }


def zipped(pair, kind):
    a, b = pair
    children = [ld.StreamingDataset(a, shuffle=True, seed=1), ld.StreamingDataset(b, shuffle=True)]
    options = {
        "shortest": {},
        "cycled": {"length": 700, "transform": noisy},
        "cycled-fresh": {"length": 1100, "resume": False, "transform": noisy},
    }[kind]
    return ld.ParallelStreamingDataset(children, seed=9, **options)


def split(batch):
    """A zip batch with ``provenance=True``: its samples' two id columns, and its ids."""
    if isinstance(batch, dict):
        first, second, ids = batch["a"], batch["b"], batch["__ids__"]
    else:
        (first, second), ids = batch
        first, second = first["id"], second["id"]
    rows = []
    for x, y in zip(first.tolist(), second.tolist(), strict=True):
        rows += [(0, x), (1, y - 100_000)]
    return rows, pairs(ids)


def same(left, right):
    """Whether two batches hold equal tensors and values, leaf by leaf."""
    if isinstance(left, torch.Tensor):
        return torch.equal(left, right)
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple):
        return len(left) == len(right) and all(map(same, left, right))
    return left == right


@pytest.mark.parametrize("kind", ["shortest", "cycled", "cycled-fresh"])
@pytest.mark.parametrize("workers", [0, 3])
def test_a_zip_names_replays_and_skips_its_batches(pair, kind, workers):
    def loader():
        return ld.StreamingDataLoader(
            zipped(pair, kind), batch_size=16, num_workers=workers, provenance=True
        )

    first = loader()
    for _ in (1, 2):
        batches = list(first)
        held = [split(batch) for batch in batches]
        assert all(rows == ids for rows, ids in held)  # each batch carries its ids
        assert [first.batch_ids(step) for step in range(len(held))] == [ids for _, ids in held]
        for step in (0, len(held) // 2, len(held) - 1):
            assert same(first.replay(step), batches[step])  # the same draws of every rng
    resumed = loader()
    resumed.load_state_dict(first.state_dict())  # the next epoch
    whole = [split(batch)[1] for batch in resumed]
    skipping = loader()
    skipping.load_state_dict(first.state_dict())
    assert skipping.skip(5) == 5
    assert [split(batch)[1] for batch in skipping] == whole[5:]


TRAINER = """
import pickle, sys
import torch.distributed as dist
import litdata as ld

port, rank, world, a, b, out, logs = sys.argv[1:8]
rank, world = int(rank), int(world)
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
try:
    mixture = ld.CombinedStreamingDataset(
        [ld.StreamingDataset(a, shuffle=True), ld.StreamingDataset(b, shuffle=True)],
        weights=[0.4, 0.6], iterate_over_all=False, seed=9)
    loader = ld.StreamingDataLoader(mixture, batch_size=16, num_workers=2, provenance=True,
                                    provenance_dir=logs)
    epochs = []
    for epoch in (1, 2):
        batches = [(batch["id"].tolist(), [tuple(r) for r in batch["__ids__"].tolist()])
                   for batch in loader]
        planned = [[loader.batch_ids(s, epoch=epoch, rank=r) for s in range(len(batches))]
                   for r in range(world)]
        epochs.append({"batches": batches, "planned": planned})
    dist.barrier()
    with open(out.format(rank), "wb") as handle:
        pickle.dump(epochs, handle)
finally:
    dist.destroy_process_group()
"""


def test_two_ranks_two_workers_two_epochs(pair, tmp_path):
    a, b = pair
    run_ranks(TRAINER, 2, str(a), str(b), str(tmp_path / "rank{}.pkl"), str(tmp_path / "ids"))
    ranks = [pickle.loads((tmp_path / f"rank{r}.pkl").read_bytes()) for r in range(2)]
    for rank, epochs in enumerate(ranks):
        logged = [r.ids for r in read_log(tmp_path / "ids" / f"rank-{rank}.ids")]
        assert logged == [carried for epoch in epochs for _, carried in epoch["batches"]]
        for number, epoch in enumerate(epochs):
            held = [contents({"id": torch.tensor(ids)}) for ids, _ in epoch["batches"]]
            assert [carried for _, carried in epoch["batches"]] == held
            assert epoch["planned"][rank] == held  # this rank's plan
            assert ranks[1 - rank][number]["planned"][rank] == held  # the other rank's plan of it
    assert ranks[0][0]["batches"] != ranks[0][1]["batches"]  # two epochs, two orders
