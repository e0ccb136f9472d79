"""A large remote chunk fetched in parallel ranged parts: a garbled part is never used."""

from __future__ import annotations

import json

import numpy as np
import pytest

import litdata as ld
from litdata.core.errors import ChunkCorruptError
from litdata.engine.boundary.resolve import resolve

COUNT = 600
BLOB = 16_000


def _upload(local, store):
    url = store.url(store.new_bucket(), "ds")
    target = resolve(url, storage_options=store.storage_options)
    for item in local.iterdir():
        target.storage.upload(str(item), target.join(item.name))
    return url


@pytest.mark.fault("a byte flipped in a later ranged part of a large remote chunk")
@pytest.mark.parametrize("direct", ["0", "1"], ids=["buffered", "direct"])
def test_a_corrupt_part_is_an_error_and_no_sample_of_it_is_returned(
    tmp_path, s3_server, record, monkeypatch, direct
):
    monkeypatch.setenv("LITDATA_DIRECT_CACHE", direct)  # the chunk landed in memory, or not
    samples = ({"id": i, "blob": np.full(BLOB, i % 251, dtype=np.uint8)} for i in range(COUNT))
    local = ld.write_dataset(samples, tmp_path / "src", chunk_bytes="8MB")
    index = json.loads((local / "index.json").read_text())
    name = index["chunks"][0]["filename"]
    path = local / name
    data = bytearray(path.read_bytes())
    flipped = 5_000_000  # past the first (1 MiB) part: items before it are served early
    data[flipped] ^= 0x01
    path.write_bytes(bytes(data))
    url = _upload(local, s3_server)
    ds = ld.StreamingDataset(
        url, storage_options=s3_server.storage_options, cache_dir=str(tmp_path / "cache")
    )
    delivered = []
    record.start()
    with pytest.raises(ChunkCorruptError, match=name) as error:
        delivered.extend(ds)
    record.failed()
    assert "block checksum" in str(error.value)
    assert f"{flipped - flipped % 65536:,}" in str(error.value)  # the block that failed
    wrong = sum(int(not (s["blob"] == s["id"] % 251).all()) for s in delivered)
    ids = [s["id"] for s in delivered]
    assert len(set(ids)) == len(ids)
    assert not list((tmp_path / "cache").rglob(name))  # nothing of it was published
    record(
        f"ChunkCorruptError naming {name} and the block, after {len(delivered)} verified "
        f"samples of the parts before it",
        wrong=wrong,
        duplicated=len(ids) - len(set(ids)),
    )
