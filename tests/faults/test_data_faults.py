"""Faults in the data: flipped bytes, truncated files, missing chunks, odd paths."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import litdata as ld
from litdata.core.errors import ChunkCorruptError, DatasetFormatError
from litdata.engine.cache.verified import SETTLED_SECONDS
from litdata.streaming.dataloader import StreamingDataLoader  # noqa: F401  # torch loads now

COUNT = 400


def _samples():
    return ({"id": i, "value": np.full(64, i % 256, dtype=np.uint8)} for i in range(COUNT))


def _wrong(sample) -> bool:
    return not (sample["value"] == sample["id"] % 256).all()


@pytest.fixture
def dataset(tmp_path):
    return ld.write_dataset(_samples(), tmp_path / "ds", chunk_size=50)


def _flip(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0x10
    path.write_bytes(bytes(data))


def _stream(dataset, num_workers=0, **options):
    """Read an epoch until it ends or fails: (samples delivered, the error or None)."""
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(dataset, **options),
        batch_size=10,
        num_workers=num_workers,
        collate_fn=list,
    )
    seen = []
    try:
        for batch in loader:
            seen.extend(batch)
    except Exception as error:  # the fault under test
        return seen, error
    return seen, None


def _accounting(seen, dataset=None, broken=range(0)):
    """Delivered samples twice or wrong, and the samples outside the broken chunk that no
    longer read (the rest of the dataset must be intact)."""
    ids = [sample["id"] for sample in seen]
    lost = 0
    if dataset is not None:
        reader = ld.DatasetReader(dataset)
        for i in range(len(reader)):
            if i in broken:
                continue
            try:
                sample = reader[i]
            except Exception:  # counted
                lost += 1
                continue
            lost += sample["id"] != i or _wrong(sample)
    return {
        "lost": lost,
        "duplicated": len(ids) - len(set(ids)),
        "wrong": sum(_wrong(sample) for sample in seen),
    }


@pytest.mark.fault("flipped payload byte, uncompressed chunk read in place")
@pytest.mark.parametrize("num_workers", [0, 2])
def test_a_flipped_byte_is_an_error_never_a_wrong_sample(dataset, record, num_workers):
    record.fault += f", {num_workers} workers"
    _flip(dataset / "chunk-0-3.bin", -5)  # inside the last item's payload
    record.start()
    with pytest.raises(ChunkCorruptError, match="chunk-0-3.bin is corrupt: its checksum"):
        ld.DatasetReader(dataset)[175]
    seen, error = _stream(dataset, num_workers)
    record.failed()
    assert isinstance(error, ChunkCorruptError), error
    assert "chunk-0-3.bin" in str(error)
    record(
        "ChunkCorruptError naming the chunk; no sample of it returned", **_accounting(seen, None)
    )
    assert not any(150 <= sample["id"] < 200 for sample in seen)


@pytest.mark.fault("flipped byte, compressed chunk")
def test_a_flipped_byte_in_a_compressed_chunk(tmp_path, record):
    dataset = ld.write_dataset(_samples(), tmp_path / "ds", chunk_size=50, compression="zstd")
    _flip(dataset / "chunk-0-1.zstd.bin", 40)
    record.start()
    seen, error = _stream(dataset)
    record.failed()
    assert isinstance(error, ChunkCorruptError)
    assert "chunk-0-1.zstd.bin is corrupt" in str(error)
    record("ChunkCorruptError before decompression", **_accounting(seen, dataset, range(50, 100)))


@pytest.mark.fault("truncated chunk")
def test_a_truncated_chunk(dataset, record):
    path = dataset / "chunk-0-5.bin"
    path.write_bytes(path.read_bytes()[:-100])
    record.start()
    seen, error = _stream(dataset)
    record.failed()
    assert isinstance(error, ChunkCorruptError)
    assert "chunk-0-5.bin is truncated" in str(error)
    record(
        "ChunkCorruptError: truncated, sizes named", **_accounting(seen, dataset, range(250, 300))
    )


@pytest.mark.fault("truncated index.json")
def test_a_truncated_index(dataset, record):
    index = dataset / "index.json"
    index.write_bytes(index.read_bytes()[:-40])
    record.start()
    with pytest.raises(DatasetFormatError, match="index.json is not valid JSON") as caught:
        ld.StreamingDataset(dataset)
    record.failed()
    assert "truncated" in str(caught.value)
    record("DatasetFormatError naming the file, at open")


@pytest.mark.fault("chunk deleted mid-epoch")
def test_a_chunk_deleted_during_an_epoch(dataset, record):
    ds = ld.StreamingDataset(dataset)
    loader = ld.StreamingDataLoader(ds, batch_size=10, num_workers=0, collate_fn=list)
    seen = []
    with pytest.raises(FileNotFoundError, match="chunk-0-6.bin listed in index.json is missing"):
        for batch in loader:
            seen.extend(batch)
            if len(seen) == 100:
                record.start()
                (dataset / "chunk-0-6.bin").unlink()
    record.failed()
    record("FileNotFoundError naming the chunk", **_accounting(seen, dataset, range(300, 350)))


@pytest.mark.fault("corrupt item header (checksum off)")
def test_a_corrupt_item_header_names_the_file_and_item(dataset, record):
    path = dataset / "chunk-0-2.bin"
    data = bytearray(path.read_bytes())
    start = int.from_bytes(data[4 + 4 * 7 : 8 + 4 * 7], "little")  # item 7's offset
    data[start] += 1  # its first leaf's size
    path.write_bytes(bytes(data))
    record.start()
    with pytest.raises(ChunkCorruptError, match=r"chunk-0-2.bin, item 7: .*leaf sizes"):
        ld.DatasetReader(dataset, verify=False)[107]
    record.failed()
    assert ld.DatasetReader(dataset, verify=False)[106]["id"] == 106
    record("ChunkCorruptError naming the file and the item")


@pytest.mark.fault("dataset path with spaces and non-ASCII characters")
def test_a_path_with_spaces_and_non_ascii(tmp_path, record):
    from litdata.cli import main

    folder = tmp_path / "données d'été" / "jeu de données ✓"
    ld.optimize(_square, list(range(60)), str(folder), chunk_size=16, num_workers=2, verbose=False)
    seen, error = _stream(folder, num_workers=2, shuffle=True)
    assert error is None
    assert main(["verify", str(folder), "--quiet"]) == 0
    lost = len(set(range(60)) - {sample["id"] for sample in seen})
    record("optimize, stream (2 workers) and verify work", lost=lost, **_counts(seen))


def _square(i):
    return {"id": i, "value": np.full(64, i % 256, dtype=np.uint8)}


def _counts(seen):
    ids = [sample["id"] for sample in seen]
    return {"duplicated": len(ids) - len(set(ids)), "wrong": sum(map(_wrong, seen))}


@pytest.mark.fault("a file given as the dataset path")
def test_a_file_given_as_the_dataset(dataset, record):
    record.start()
    with pytest.raises(FileNotFoundError, match="is a file, not a dataset directory"):
        ld.StreamingDataset(dataset / "index.json")
    record.failed()
    record("DatasetNotFoundError: the path is a file")


@pytest.mark.fault("empty or foreign state dict")
@pytest.mark.parametrize("state", [{}, {"dataset": {}}], ids=["empty", "no-counts"])
def test_a_state_dict_that_is_not_one(dataset, record, state):
    loader = ld.StreamingDataLoader(ld.StreamingDataset(dataset), batch_size=4)
    record.start()
    with pytest.raises(ValueError, match="needs what StreamingDataLoader.state_dict"):
        loader.load_state_dict(state)
    record.failed()
    record("ValueError saying what it got and what to pass")


@pytest.mark.fault("checksum verified off the reader's path")
def test_verification_runs_ahead_in_a_thread(dataset, record):
    # The background prefetch thread checks the next chunks; the reader never waits long.
    names = set()
    original = threading.Thread.start

    def spy(thread):
        names.add(thread.name)
        original(thread)

    threading.Thread.start = spy  # type: ignore[method-assign]
    try:
        seen, error = _stream(dataset)
    finally:
        threading.Thread.start = original  # type: ignore[method-assign]
    assert error is None
    assert any(name.startswith("litdata-prefetch") for name in names)
    assert sorted(sample["id"] for sample in seen) == list(range(COUNT))
    record("chunks checked by litdata-prefetch threads", **_accounting(seen, dataset))


def test_the_index_records_the_algorithm(dataset):
    index = json.loads((dataset / "index.json").read_text())
    assert {chunk["checksum"].split(":")[0] for chunk in index["chunks"]} == {"xxh3"}


@pytest.mark.fault("flipped byte in a chunk that passed its checksum in an earlier run")
def test_a_flip_after_a_verified_read_is_still_caught(dataset, record):
    time.sleep(SETTLED_SECONDS + 0.1)  # old enough for the passed chunks to be recorded
    seen, error = _stream(dataset)
    assert error is None
    assert len(seen) == COUNT
    _flip(dataset / "chunk-0-3.bin", -5)
    record.start()
    seen, error = _stream(dataset)
    record.failed()
    assert isinstance(error, ChunkCorruptError), error
    assert "chunk-0-3.bin" in str(error)
    record("ChunkCorruptError: the changed file is hashed again", **_accounting(seen, None))
    assert not any(150 <= sample["id"] < 200 for sample in seen)
