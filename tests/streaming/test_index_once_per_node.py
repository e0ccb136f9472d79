"""A remote dataset's index is fetched once per node, whatever its ranks and workers.

4 ranks (processes with torchrun's environment, one cache) x 2 DataLoader workers open one S3
dataset at the same moment; the S3 server's log (one line per request) shows ``index.json``
fetched once between them, and its existence asked at most once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import litdata as ld

RANKS, WORKERS = 4, 2
RANK = """
import os, sys, time
from pathlib import Path
import litdata as ld

url, folder, endpoint = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
options = {"endpoint_url": endpoint, "aws_access_key_id": "testing",
           "aws_secret_access_key": "testing", "region_name": "us-east-1"}
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
(folder / f"ready-{rank}").touch()
while len(list(folder.glob("ready-*"))) < world:  # every rank opens at the same moment
    time.sleep(0.01)
dataset = ld.StreamingDataset(url, storage_options=OPTIONS)
loader = ld.StreamingDataLoader(dataset, batch_size=5, num_workers=WORKERS)
print("READ", sum(len(batch["id"]) for batch in loader))
"""


def _index_requests(log, key: str) -> list[str]:
    return [line for line in log.read_text(errors="replace").splitlines() if f"/{key} " in line]


def test_four_ranks_of_two_workers_fetch_the_index_once(s3_server, tmp_path):
    bucket = s3_server.new_bucket()
    url = s3_server.url(bucket, "ds")
    samples = ({"id": i} for i in range(400))
    ld.write_dataset(samples, url, chunk_size=20, storage_options=s3_server.storage_options)
    log, key = s3_server.server.log, f"{bucket}/ds/index.json"
    before = len(_index_requests(log, key))
    code = RANK.replace("OPTIONS", repr(s3_server.storage_options)).replace(
        "WORKERS)", f"{WORKERS})"
    )
    ranks = [
        subprocess.Popen(
            [sys.executable, "-c", code, url, str(tmp_path), s3_server.endpoint],
            env={
                **os.environ,
                "RANK": str(rank),
                "WORLD_SIZE": str(RANKS),
                "LOCAL_RANK": str(rank),
                "LOCAL_WORLD_SIZE": str(RANKS),
            },
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(RANKS)
    ]
    outputs = [rank.communicate(timeout=240) for rank in ranks]
    assert [rank.returncode for rank in ranks] == [0] * RANKS, [err[-2000:] for _, err in outputs]
    assert sum(int(out.split()[-1]) for out, _ in outputs) == 400, "each item read once"
    time.sleep(0.2)  # the server's last log lines
    requests = _index_requests(log, key)[before:]
    assert sum('"GET ' in line for line in requests) == 1, requests
    assert len(requests) <= 2, requests  # and at most one look whether it exists
