"""Sizes and counts a dataset states: bounded by the bytes that hold them, in bounded memory."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hostile import forge

import litdata as ld
from litdata.core.errors import ChunkCorruptError, DatasetFormatError
from litdata.engine.boundary.resolve import resolve

#: The address space a reader of a hostile dataset may use (torch alone maps ~650 MB).
MEMORY_LIMIT = 1536 << 20

READER = """
import resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
import litdata as ld
from litdata.core.errors import LitdataError
start = time.monotonic()
try:
    data = ld.StreamingDataset(sys.argv[1]{options})
    loader = ld.StreamingDataLoader(data, batch_size=10, num_workers={workers}, collate_fn=list)
    count = sum(len(batch) for batch in loader)
    print("READ", count)
except LitdataError as error:
    print("ERROR", type(error).__name__, time.monotonic() - start, error)
"""


def _read_bounded(folder: Path, record, *, options: str = "", workers: int = 0) -> str:
    """Stream ``folder`` in a process whose memory is capped; what it printed.

    The time to the error is the reader's own (from opening the dataset), not the process's.
    """
    code = READER.format(limit=MEMORY_LIMIT, options=options, workers=workers)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    output = result.stdout.strip()
    if output.startswith("ERROR"):
        record.seconds = float(output.split()[2])
    return output


@pytest.mark.fault("chunk_size absurd for its chunk_bytes (memory capped at 1.5 GiB)")
@pytest.mark.parametrize("count", [2**28, 2**40])
def test_an_absurd_chunk_size_is_refused_in_bounded_memory(tmp_path, record, count):
    record.fault += f": {count:,}"
    folder = forge.dataset(tmp_path / "ds")
    forge.edit_index(folder, lambda index: index["chunks"][0].update(chunk_size=count))
    output = _read_bounded(folder, record, options=", shuffle=True", workers=2)
    assert output.startswith("ERROR DatasetFormatError"), output
    assert "chunk_size" in output
    assert f"{count}" in output
    assert "index" in output
    record("DatasetFormatError at open naming the field and value; no allocation")


def _tokens(folder: Path) -> Path:
    blocks = (np.arange(64, dtype=np.uint16) + i for i in range(40))
    return Path(ld.write_dataset(blocks, folder, chunk_size=640, item_loader=ld.TokensLoader()))


@pytest.mark.fault("TokensLoader dim negative or absurd")
@pytest.mark.parametrize("dim", [-7, 0, 2**40])
def test_a_token_dim_must_fit_its_chunk(tmp_path, record, dim):
    record.fault += f": {dim:,}"
    folder = _tokens(tmp_path / "tokens")
    forge.edit_index(folder, lambda index: index["chunks"][0].update(dim=dim))
    output = _read_bounded(folder, record, options=", item_loader=ld.TokensLoader(block_size=16)")
    assert output.startswith("ERROR DatasetFormatError"), output
    assert "dim" in output
    assert str(dim) in output
    record("DatasetFormatError naming the chunk's dim")


def test_litdata_verify_reports_a_negative_dim(tmp_path):
    folder = _tokens(tmp_path / "tokens")
    forge.edit_index(folder, lambda index: index["chunks"][0].update(dim=-7))
    result = subprocess.run(
        [sys.executable, "-m", "litdata", "verify", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "dim" in result.stdout + result.stderr


@pytest.mark.fault("chunk without checksum whose item offsets run past its end")
def test_offsets_past_the_end_name_the_chunk(tmp_path, record):
    folder = forge.dataset(tmp_path / "ds")
    forge.unsealed(folder)  # as LitData writes it: nothing to verify but the layout
    name = forge.read_index(folder)["chunks"][1]["filename"]
    path = folder / name
    data = bytearray(path.read_bytes())
    (count,) = struct.unpack_from("<I", data)
    struct.pack_into("<I", data, 4 + 4 * (count // 2), len(data) + 4096)  # item 24 ends past EOF
    path.write_bytes(bytes(data))
    data_set = ld.StreamingDataset(str(folder))
    record.start()
    with pytest.raises(ChunkCorruptError, match=name):
        [data_set[i] for i in range(len(data_set))]
    record.failed()
    record("ChunkCorruptError naming the chunk and the item, before any of its samples")


@pytest.mark.fault("MDS shard says it holds more samples than its bytes can")
def test_mds_samples_are_bounded_by_the_shard(tmp_path, record):
    from support.mds_fixtures import write_shards

    rows = [[json.dumps({"n": i}).encode()] for i in range(8)]
    folder = write_shards(tmp_path / "mds", {"doc": "json"}, rows)
    index = json.loads((folder / "index.json").read_text())
    index["shards"][0]["samples"] = 2**36
    (folder / "index.json").write_text(json.dumps(index))
    output = _read_bounded(folder, record)
    assert output.startswith("ERROR DatasetFormatError"), output
    assert "samples" in output
    record("DatasetFormatError naming shards[0].samples")


def _padded(folder: Path, size: int) -> None:
    """``folder``'s index rewritten as ``size`` bytes of valid JSON (whitespace after it)."""
    index = folder / "index.json"
    data = index.read_bytes()
    index.write_bytes(data + b" " * (size - len(data)))


@pytest.mark.fault("index.json of 3 GB (sparse; memory capped at 1.5 GiB)")
def test_a_huge_index_is_refused_unread(tmp_path, record):
    folder = forge.dataset(tmp_path / "ds")
    with open(folder / "index.json", "r+b") as index:
        index.truncate(3 << 30)
    output = _read_bounded(folder, record, workers=2)
    assert output.startswith("ERROR DatasetFormatError"), output
    assert f"{3 << 30:,} bytes" in output
    assert "LITDATA_MAX_METADATA_BYTES" in output
    record("DatasetFormatError at open naming the file, its size and the setting; nothing read")


@pytest.mark.fault("remote index.json over LITDATA_MAX_METADATA_BYTES")
def test_a_remote_index_over_the_limit_names_its_url(tmp_path, s3_server, monkeypatch, record):
    local = forge.dataset(tmp_path / "src")
    _padded(local, 1 << 20)
    url = s3_server.url(s3_server.new_bucket(), "ds")
    remote = resolve(url, storage_options=s3_server.storage_options)
    for path in local.iterdir():
        remote.storage.upload(str(path), remote.join(path.name))
    options = {"cache_dir": str(tmp_path / "cache"), "storage_options": s3_server.storage_options}
    monkeypatch.setenv("LITDATA_MAX_METADATA_BYTES", str(1 << 16))
    record.start()
    with pytest.raises(DatasetFormatError, match="LITDATA_MAX_METADATA_BYTES") as error:
        ld.StreamingDataset(url, **options)
    record.failed()
    assert f"{url}/index.json is {1 << 20:,} bytes" in str(error.value)
    # Only metadata is bounded so: a raw dataset's sample file of that size is read whole.
    assert remote.read_file("index.json") == (local / "index.json").read_bytes()
    monkeypatch.setenv("LITDATA_MAX_METADATA_BYTES", str(1 << 20))
    assert len(ld.StreamingDataset(url, **options)) == len(ld.StreamingDataset(str(local)))
    record("DatasetFormatError naming the URL and its size; read once the limit allows it")
