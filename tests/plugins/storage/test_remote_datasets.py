"""A dataset written to each real object store by ``optimize`` streams back whole."""

import numpy as np
import pytest
import torch
from support.fns import record

import litdata as ld
from litdata.engine.boundary.resolve import resolve


@pytest.mark.parametrize(
    "server", ["s3_server", "seaweedfs_server", "gcs_server", "azurite_server"]
)
def test_optimize_to_a_bucket_then_stream_it_back(request, server):
    store = request.getfixturevalue(server)
    url = store.url(store.new_bucket(), "ds")
    options = store.storage_options
    ld.optimize(
        record,
        range(200),
        url,
        chunk_bytes="1KB",
        num_workers=2,
        storage_options=options,
        verbose=False,
    )
    chunks = [
        n for n in resolve(url, storage_options=options).storage.list(url) if n.endswith(".bin")
    ]
    assert len(chunks) > 4  # several chunks from each worker

    ds = ld.StreamingDataset(url, storage_options=options)
    assert len(ds) == 200
    ids = []
    for index in range(200):  # the workers shared the inputs: any order, each input once
        sample = ds[index]
        i = sample["id"]
        assert sample["name"] == f"n{i}"
        np.testing.assert_array_equal(sample["x"], np.full(3, i, dtype=np.float32))
        ids.append(i)
    assert sorted(ids) == list(range(200))

    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(url, storage_options=options, shuffle=True),
        batch_size=16,
        num_workers=2,
    )
    seen = []
    for batch in loader:
        assert torch.equal(batch["x"][:, 0], batch["id"].float())
        assert batch["name"] == [f"n{i}" for i in batch["id"].tolist()]
        seen += batch["id"].tolist()
    assert sorted(seen) == list(range(200))


def test_opening_a_remote_dataset_fetches_its_index_once(s3_server):
    # Every installed format looks at index.json while the dataset is opened; one GET serves all.
    url = s3_server.url(s3_server.new_bucket(), "ds")
    options = s3_server.storage_options
    ld.write_dataset(range(10), url, chunk_size=5, storage_options=options)
    log = s3_server.server.log
    before = len(log.read_text().splitlines())
    assert len(ld.StreamingDataset(url, storage_options=options, cache_dir=None)) == 10
    requests = [line for line in log.read_text().splitlines()[before:] if "index.json" in line]
    assert sum('"GET ' in line for line in requests) == 1, requests
    assert len(requests) <= 2, requests  # at most one HEAD besides
