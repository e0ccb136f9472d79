"""``ds[i]`` of a remote chunk that is not cached: the ranged read is verified before use."""

from __future__ import annotations

import json

import numpy as np
import pytest

import litdata as ld
from litdata.core.errors import ChunkCorruptError
from litdata.engine.boundary.resolve import resolve

COUNT = 600


def _sample(i: int, blob: int) -> dict:
    return {"pair": np.array([i, i + 1], dtype=np.int64), "blob": bytes(blob)}


@pytest.fixture(params=[30_000, 10], ids=["block table", "one block"])
def remote(request, tmp_path, s3_server):
    """A dataset on the S3 server whose sample 561 has a flipped payload byte; its URL."""
    blob = request.param
    local = ld.write_dataset(
        (_sample(i, blob) for i in range(COUNT)), tmp_path / "src", chunk_size=50
    )
    index = json.loads((local / "index.json").read_text())
    chunk = index["chunks"][561 // 50]
    path = local / chunk["filename"]
    data = bytearray(path.read_bytes())
    position = 4 + 4 * (561 % 50)
    start = int.from_bytes(data[position : position + 4], "little")
    data[start + 8 + 1] ^= 0x10  # a byte of pair[0] (after the two u32 leaf sizes)
    path.write_bytes(bytes(data))
    url = s3_server.url(s3_server.new_bucket(), "ds")
    target = resolve(url, storage_options=s3_server.storage_options)
    for item in local.iterdir():
        target.storage.upload(str(item), target.join(item.name))
    return url, s3_server.storage_options, chunk["filename"]


@pytest.mark.fault("ds[i] of an uncached remote chunk with a flipped payload byte")
def test_a_ranged_read_is_verified(remote, tmp_path, record, request):
    record.fault += f" ({request.node.callspec.id})"
    url, options, name = remote
    data = ld.StreamingDataset(url, storage_options=options, cache_dir=str(tmp_path / "cache"))
    assert data[549]["pair"].tolist() == [549, 550]
    record.start()
    with pytest.raises(ChunkCorruptError, match=name) as error:
        data[561]
    record.failed()
    assert "block checksum" in str(error.value)
    assert data[0]["pair"].tolist() == [0, 1]  # other chunks still read
    record("ChunkCorruptError naming the chunk URL and the bytes; no wrong sample")


def test_litdata_verify_checks_the_block_checksums(tmp_path):
    """A table that disagrees with its chunk (the whole-file checksum passing) is reported."""
    import subprocess
    import sys

    from litdata.core.chunks.blocks import BLOCK_KEY

    folder = ld.write_dataset(
        (_sample(i, 30_000) for i in range(100)), tmp_path / "ds", chunk_size=50
    )
    index = json.loads((folder / "index.json").read_text())
    table = index["chunks"][1][BLOCK_KEY]
    index["chunks"][1][BLOCK_KEY] = table[:-8] + ("A" if table[-8] != "A" else "B") + table[-7:]
    (folder / "index.json").write_text(json.dumps(index))
    result = subprocess.run(
        [sys.executable, "-m", "litdata", "verify", str(folder), "--quiet"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "chunk-0-1.bin" in result.stdout
    assert "block checksum" in result.stdout
