"""Two real processes with torch.distributed (gloo on 127.0.0.1)."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]
TRAINER = """
import json, sys
import torch.distributed as dist
import litdata as ld

path, port, rank, out, seed = sys.argv[1:6]
rank, seed = int(rank), int(seed)
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
try:
    loader = ld.StreamingDataLoader(ld.StreamingDataset(path, shuffle=True, seed=seed),
                                    batch_size=32, num_workers=2)
    batches = [[int(i) for i in batch["id"]] for batch in loader]
    dist.barrier()
    with open(out, "w") as handle:
        json.dump({"batches": batches, "len": len(loader)}, handle)
finally:
    dist.destroy_process_group()
"""


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _train(path, tmp_path, seeds):
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("WORLD_SIZE", None)
    env.pop("RANK", None)
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                TRAINER,
                str(path),
                str(port),
                str(rank),
                str(tmp_path / f"rank{rank}.json"),
                str(seeds[rank]),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(2)
    ]
    results = [process.communicate(timeout=180) for process in processes]
    return [process.returncode for process in processes], [err for _, err in results]


def test_two_ranks_read_disjoint_complete_equal_shares(numbers, tmp_path):
    codes, errors = _train(numbers, tmp_path, seeds=[5, 5])
    assert codes == [0, 0], errors
    ranks = [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in range(2)]
    ids = [[i for batch in rank["batches"] for i in batch] for rank in ranks]
    assert not set(ids[0]) & set(ids[1])
    assert len(ranks[0]["batches"]) == len(ranks[1]["batches"]) == ranks[0]["len"]
    assert all(len(batch) == 32 for rank in ranks for batch in rank["batches"])  # drop_last
    assert len(ids[0]) + len(ids[1]) == 1000 // 64 * 64  # 15 whole batches of 32 per rank


def test_ranks_that_disagree_fail_fast_naming_the_ranks(numbers, tmp_path):
    codes, errors = _train(numbers, tmp_path, seeds=[5, 6])
    assert codes[0] != 0
    assert codes[1] != 0
    for error in errors:
        assert "Ranks [1] read a different dataset than rank 0" in error
        assert "seed=6" in error
