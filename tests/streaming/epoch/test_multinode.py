"""Several "nodes" (processes with torchrun's environment, gloo on 127.0.0.1) read one S3 dataset.

Each node has 2 DataLoader workers. A 2-node epoch is disjoint, complete and even; an epoch cut
short on 2 nodes resumes on 1, and one cut short on 1 node resumes on 3, yielding exactly the
items not seen yet. Without a process group, ranks that disagree on the seed still fail.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import litdata as ld
from litdata.core.errors import LitdataWarning

ITEMS, BATCH, WORKERS = 600, 10, 2
TRAINER = """
import json, os, sys
import torch.distributed as dist
import litdata as ld

plan = json.loads(sys.argv[1])
rank = int(os.environ["RANK"])
dist.init_process_group("gloo")  # env://: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE
dataset = ld.StreamingDataset(plan["url"], shuffle=True, storage_options=plan["options"])
loader = ld.StreamingDataLoader(dataset, batch_size=10, num_workers=2)
if plan.get("resume"):
    with open(plan["resume"]) as handle:
        loader.load_state_dict(json.load(handle))
result = {"len": len(loader), "epochs": []}
for stop in plan["epochs"]:  # read whole epochs (None), or stop after that many batches
    batches = []
    for batch in loader:
        batches.append([int(i) for i in batch["id"]])
        if len(batches) == stop:
            with open(f"{plan['out']}-state-{rank}.json", "w") as handle:
                json.dump(loader.state_dict(), handle)
            break
    result["epochs"].append(batches)
dist.barrier()
with open(f"{plan['out']}-{rank}.json", "w") as handle:
    json.dump(result, handle)
dist.destroy_process_group()
"""


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _nodes(world, plan, tmp_path, name, env=None):
    """Run ``world`` nodes of TRAINER; return each rank's result."""
    port = _free_port()
    plan = {**plan, "out": str(tmp_path / name)}
    processes = []
    for rank in range(world):
        torchrun = {"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": "0"}
        torchrun |= {"LOCAL_WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
        processes.append(
            subprocess.Popen(
                [sys.executable, "-c", TRAINER, json.dumps(plan)],
                env={**os.environ, **torchrun, **(env or {})},
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    errors = [process.communicate(timeout=180)[1] for process in processes]
    assert [process.returncode for process in processes] == [0] * world, errors
    return [json.loads((tmp_path / f"{name}-{rank}.json").read_text()) for rank in range(world)]


def _ids(batches):
    return [i for batch in batches for i in batch]


def _exactly_the_unseen(seen, rest, dropped_at_most):
    """``rest`` repeats nothing of ``seen`` (or itself), and both miss fewer than allowed."""
    assert len(set(seen) | set(rest)) == len(seen) + len(rest)
    assert len(set(range(ITEMS)) - set(seen) - set(rest)) <= dropped_at_most


@pytest.fixture(scope="module")
def s3_dataset(s3_server):
    url = s3_server.url(s3_server.new_bucket(), "ds")
    samples = ({"id": i} for i in range(ITEMS))
    ld.write_dataset(samples, url, chunk_size=50, storage_options=s3_server.storage_options)
    return {"url": url, "options": s3_server.storage_options}


def test_nodes_read_disjoint_complete_shares_and_resume_elastically(s3_dataset, tmp_path):
    # 2 nodes: a whole epoch, then 6 batches of the next one.
    two = _nodes(2, {**s3_dataset, "epochs": [None, 6]}, tmp_path, "two")
    whole = [_ids(node["epochs"][0]) for node in two]
    assert not set(whole[0]) & set(whole[1])
    assert len(two[0]["epochs"][0]) == len(two[1]["epochs"][0]) == two[0]["len"]
    assert sorted(whole[0] + whole[1]) == list(range(ITEMS))  # 600: 15 batches per worker
    # ... resumed on 1 node (from rank 0's state, as trainers do): exactly the rest, then 4
    # batches of the next epoch
    seen = _ids(two[0]["epochs"][1]) + _ids(two[1]["epochs"][1])
    resume = str(tmp_path / "two-state-0.json")
    (one,) = _nodes(1, {**s3_dataset, "epochs": [None, 4], "resume": resume}, tmp_path, "one")
    _exactly_the_unseen(seen, _ids(one["epochs"][0]), 0)  # one rank: no drop_last
    # ... resumed on 3 nodes: together they read the rest, in equal numbers of batches (what
    # does not fill a batch on every rank is dropped)
    resume = str(tmp_path / "one-state-0.json")
    three = _nodes(3, {**s3_dataset, "epochs": [None], "resume": resume}, tmp_path, "three")
    rest = [i for node in three for i in _ids(node["epochs"][0])]
    _exactly_the_unseen(_ids(one["epochs"][1]), rest, 3 * BATCH * WORKERS - 1)
    assert len({len(node["epochs"][0]) for node in three}) == 1


ALONE = """
import json, os, sys, time
from pathlib import Path
import litdata as ld

path, folder, seed = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])

def everyone(stage):  # a barrier through files: every rank alive at once
    (folder / f"{stage}-{rank}").touch()
    while len(list(folder.glob(f"{stage}-*"))) < world:
        time.sleep(0.02)

everyone("ready")
try:
    loader = ld.StreamingDataLoader(ld.StreamingDataset(path, shuffle=True, seed=seed),
                                    batch_size=10)
    next(iter(loader))
finally:
    everyone("done")  # stay alive (with its note) until every rank has checked
"""


def test_ranks_without_a_process_group_that_disagree_fail(numbers, tmp_path):
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", ALONE, str(numbers), str(tmp_path), str(seed)],
            env={**os.environ, "RANK": str(rank), "WORLD_SIZE": "2"},
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank, seed in enumerate([5, 6])
    ]
    errors = [process.communicate(timeout=120)[1] for process in processes]
    failed = [err for proc, err in zip(processes, errors, strict=True) if proc.returncode != 0]
    assert failed, errors  # the rank that checked last saw the other's note
    for error in failed:
        assert "read a different dataset than rank" in error
        assert "seed=" in error


def test_ranks_on_several_machines_without_a_process_group_are_warned(numbers, monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "1")
    loader = ld.StreamingDataLoader(ld.StreamingDataset(numbers), batch_size=10)
    with pytest.warns(LitdataWarning, match="init_process_group"):
        next(iter(loader))


def test_no_note_is_left_behind(numbers, tmp_path):
    script = "import sys, litdata as ld; next(iter(ld.StreamingDataLoader(ld.StreamingDataset(sys.argv[1]))))"  # noqa: E501
    env = {**os.environ, "RANK": "1", "WORLD_SIZE": "2", "LITDATA_RANKS_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", script, str(numbers)], env=env, check=True)
    assert not [path for path in Path(tmp_path).rglob("*") if path.is_file()]
