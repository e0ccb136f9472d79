"""Datasets on S3 cross between litdata and the real LitData 0.2.76, both ways.

Runs when ``LITDATA_PEER_PYTHON`` points at a python with LitData installed (``bench/peers.py``
builds one), against the session's moto server. LitData's optional obstore client cannot
reach a plain-http endpoint, so the peer's venv has it uninstalled (LitData then uses boto3).
"""

import json
from pathlib import Path

import numpy as np
from peer import MARKS, run_peer

import litdata as ld

pytestmark = MARKS
SCRIPT = Path(__file__).with_name("s3_with_litdata.py")


def _peer(*args):
    return run_peer(SCRIPT, *args, cwd=SCRIPT.parent)


def test_litdata_streams_what_we_wrote_to_s3(s3_server):
    url = s3_server.url(s3_server.new_bucket(), "ours")
    samples = ({"id": i, "name": f"n{i}", "x": np.full(4, i, dtype=np.float32)} for i in range(95))
    ld.write_dataset(samples, url, chunk_size=10, storage_options=s3_server.storage_options)
    rows = [json.loads(line) for line in _peer("read", url, s3_server.endpoint).splitlines()]
    assert sorted(row["id"] for row in rows) == list(range(95))
    assert all(row["name"] == f"n{row['id']}" and row["x"] == [row["id"]] * 4 for row in rows)


def test_we_stream_what_litdata_wrote_to_s3(s3_server):
    url = s3_server.url(s3_server.new_bucket(), "theirs")
    _peer("write", url, s3_server.endpoint, "95")
    options = s3_server.storage_options
    dataset = ld.StreamingDataset(url, storage_options=options, shuffle=True)
    loader = ld.StreamingDataLoader(dataset, batch_size=7, num_workers=2)
    seen = []
    for batch in loader:
        assert batch["name"] == [f"n{i}" for i in batch["id"].tolist()]
        assert (batch["x"][:, 0] == batch["id"].float()).all()
        seen += batch["id"].tolist()
    assert sorted(seen) == list(range(95))
    assert ld.DatasetReader(url, storage_options=options)[0]["name"].startswith("n")
