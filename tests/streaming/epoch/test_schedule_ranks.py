"""A scheduled mixture read by two gloo ranks, then resumed on one rank."""

import pickle

import pytest
from support.gloo import run_ranks

import litdata as ld

TRAINER = """
import pickle, sys
import torch.distributed as dist
import litdata as ld

port, rank, world, a, b, out = sys.argv[1:7]
rank, world, out = int(rank), int(world), out.format(rank)
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
try:
    schedule = ld.WeightSchedule([(0, [1, 0]), (640, [0, 1])], unit="samples")
    mixture = ld.CombinedStreamingDataset(
        [ld.StreamingDataset(a, shuffle=True), ld.StreamingDataset(b, shuffle=True)],
        weights=schedule, iterate_over_all=True)
    loader = ld.StreamingDataLoader(mixture, batch_size=16, num_workers=2)
    batches = []
    for batch in loader:
        batches.append([int(i) for i in batch["id"]])
        if len(batches) == 25:
            break
    state = loader.state_dict()
    dist.barrier()
    with open(out, "wb") as handle:
        pickle.dump({"batches": batches, "state": state}, handle)
finally:
    dist.destroy_process_group()
"""


@pytest.fixture(scope="module")
def even(tmp_path_factory):
    """1,280 and 640 samples: whole batches of 16 on each of two ranks, nothing dropped."""
    a = tmp_path_factory.mktemp("even_a")
    b = tmp_path_factory.mktemp("even_b")
    ld.write_dataset(({"id": i} for i in range(1280)), a, chunk_size=64)
    ld.write_dataset(({"id": 100_000 + i} for i in range(640)), b, chunk_size=64)
    return a, b


def test_two_ranks_follow_the_schedule_and_resume_on_one(even, tmp_path):
    a, b = even
    run_ranks(TRAINER, 2, str(a), str(b), str(tmp_path / "rank{}.pkl"))
    ranks = [pickle.loads((tmp_path / f"rank{r}.pkl").read_bytes()) for r in range(2)]
    # 32 global samples per step: the breakpoint at 640 samples is step 20, on both ranks.
    for result in ranks:
        assert all(i < 100_000 for batch in result["batches"][:20] for i in batch)
        assert all(i >= 100_000 for batch in result["batches"][20:] for i in batch)
    state = ranks[0]["state"]
    assert state["clock"] == {"step": 25, "samples": 800}
    # One rank now, one worker: the rest of dataset 1 first (the schedule is past 640), then 0.
    resumed = ld.StreamingDataLoader(
        ld.CombinedStreamingDataset(
            [ld.StreamingDataset(a, shuffle=True), ld.StreamingDataset(b, shuffle=True)],
            weights=ld.WeightSchedule([(0, [1, 0]), (640, [0, 1])], unit="samples"),
            iterate_over_all=True,
        ),
        batch_size=16,
    )
    resumed.load_state_dict(state)
    rest = [int(i) for batch in resumed for i in batch["id"]]
    seen = [i for result in ranks for batch in result["batches"] for i in batch]
    assert len(seen + rest) == len(set(seen + rest))  # no sample twice
    assert sorted(seen + rest) == [*range(1280), *range(100_000, 100_640)]  # none lost
    from_b = sum(1 for i in rest if i >= 100_000)
    assert from_b == 640 - 2 * 5 * 16
    assert all(i >= 100_000 for i in rest[:from_b])
