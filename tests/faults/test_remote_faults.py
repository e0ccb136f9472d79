"""Faults of remote storage, against a real S3 server (moto) on loopback."""

from __future__ import annotations

import contextlib
import logging
import threading
import time

import numpy as np
import pytest
from support.servers import both_s3_servers  # noqa: F401  # s3_server: moto, SeaweedFS

import litdata as ld
from litdata.core.errors import ChunkCorruptError, StorageError
from litdata.engine.boundary.resolve import resolve

SAMPLES = 240


def _sample(i):
    return {"id": i, "value": np.full(2000, i % 251, dtype=np.uint8)}


def _wrong(sample) -> bool:
    return not (np.asarray(sample["value"]) == int(sample["id"]) % 251).all()


@pytest.fixture
def s3_dataset(s3_server, monkeypatch):
    """A 12-chunk dataset in a fresh bucket; its URL and storage options."""
    monkeypatch.setenv("LITDATA_STORAGE_ATTEMPTS", "4")
    return s3_server.url(s3_server.new_bucket(), "ds"), s3_server.storage_options


def _write(url, options, tmp_path):
    """Write the dataset locally, upload its files: 12 chunks of 20 samples."""
    local = ld.write_dataset((_sample(i) for i in range(SAMPLES)), tmp_path / "src", chunk_size=20)
    remote = resolve(url, storage_options=options)
    for path in sorted(local.iterdir()):
        remote.storage.upload(str(path), remote.join(path.name))
    return remote


def _cached_bytes(cache):
    total = 0
    for path in cache.rglob("*.bin"):
        with contextlib.suppress(FileNotFoundError):  # evicted as we look
            total += path.stat().st_size
    return total


def _accounting(seen):
    ids = [int(sample["id"]) for sample in seen]
    return {"duplicated": len(ids) - len(set(ids)), "wrong": sum(map(_wrong, seen))}


@pytest.mark.fault("S3 server stopped mid-epoch")
def test_a_server_that_stops_mid_epoch_is_an_error_naming_the_url(
    s3_server, s3_dataset, tmp_path, record
):
    url, options = s3_dataset
    _write(url, options, tmp_path)
    ds = ld.StreamingDataset(url, storage_options=options, cache_dir=str(tmp_path / "cache"))
    seen = []
    try:
        with pytest.raises(StorageError, match=rf"{url}/chunk-0-\d+\.bin failed 4 times"):
            for sample in ds:
                seen.append(sample)
                if len(seen) == 30:
                    s3_server.stop()
                    record.start()
        record.failed()
    finally:
        s3_server.start()
    assert record.seconds is not None
    assert record.seconds < 30
    record("StorageError naming the chunk's URL after the retries; no hang", **_accounting(seen))


@pytest.mark.fault("S3 server stopped, then back, mid-epoch")
def test_a_server_that_comes_back_is_retried(s3_server, s3_dataset, tmp_path, record):
    url, options = s3_dataset
    _write(url, options, tmp_path)
    ds = ld.StreamingDataset(url, storage_options=options, cache_dir=str(tmp_path / "cache"))
    seen = []
    for sample in ds:
        seen.append(sample)
        if len(seen) == 30:
            s3_server.stop()
            threading.Timer(0.5, s3_server.start).start()
    time.sleep(0.1)
    lost = SAMPLES - len({int(sample["id"]) for sample in seen})
    record(
        "the retries succeed once it is back; the epoch is whole", lost=lost, **_accounting(seen)
    )


@pytest.mark.fault("S3 chunk object overwritten with garbage")
def test_a_garbled_object_is_fetched_again_then_an_error(s3_dataset, tmp_path, record, caplog):
    url, options = s3_dataset
    remote = _write(url, options, tmp_path)
    garbage = tmp_path / "garbage"
    size = len(remote.read("chunk-0-3.bin"))
    garbage.write_bytes(bytes(size))
    remote.storage.upload(str(garbage), remote.join("chunk-0-3.bin"))

    reader = ld.DatasetReader(url, storage_options=options, cache_dir=str(tmp_path / "c"))
    reader._ranges_allowed = False  # whole chunks: the path streaming takes
    record.start()
    corrupt = r"chunk-0-3.bin is corrupt: its checksum"
    with (
        caplog.at_level(logging.WARNING, logger="litdata.engine.cache.chunk_cache"),
        pytest.raises(ChunkCorruptError, match=corrupt),
    ):
        reader[65]
    record.failed()
    assert "failed its check; downloading it again" in caplog.text
    assert reader[59]["id"] == 59  # the rest still reads
    assert not any(path.name == "chunk-0-3.bin" for path in (tmp_path / "c").rglob("*.bin"))
    record("fetched twice, then ChunkCorruptError; nothing of it cached or returned")


@pytest.mark.fault("S3 chunk object missing")
def test_a_missing_object(s3_dataset, tmp_path, record):
    url, options = s3_dataset
    remote = _write(url, options, tmp_path)
    remote.storage.delete(remote.join("chunk-0-2.bin"))
    ds = ld.StreamingDataset(url, storage_options=options, cache_dir=str(tmp_path / "cache"))
    seen = []
    record.start()
    with pytest.raises(FileNotFoundError, match=rf"{url}/chunk-0-2.bin listed in index.json"):
        seen.extend(ds)
    record.failed()
    assert record.seconds is not None
    assert record.seconds < 10
    record("FileNotFoundError naming the object, at once", **_accounting(seen))


@pytest.mark.fault("S3 bucket that does not exist")
def test_a_missing_bucket(s3_server, record):
    record.start()
    with pytest.raises(FileNotFoundError, match="no-such-bucket-here"):
        ld.StreamingDataset(
            "s3://no-such-bucket-here/ds", storage_options=s3_server.storage_options
        )
    record.failed()
    record("FileNotFoundError naming the bucket, at once")


@pytest.mark.fault("S3 dataset 4x the cache budget")
@pytest.mark.parametrize("num_workers", [0, 2])
def test_the_cache_stays_within_its_budget(s3_dataset, tmp_path, record, num_workers):
    record.fault += f", {num_workers} workers"
    url, options = s3_dataset
    remote = _write(url, options, tmp_path)
    chunk = len(remote.read("chunk-0-0.bin"))
    budget = 3 * chunk  # 12 chunks: 4x the budget
    cache = tmp_path / "cache"
    peak = [0]
    done = threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], _cached_bytes(cache))
            time.sleep(0.002)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        ds = ld.StreamingDataset(
            url, storage_options=options, cache_dir=str(cache), max_cache_size=budget, shuffle=True
        )
        loader = ld.StreamingDataLoader(ds, batch_size=10, num_workers=num_workers, collate_fn=list)
        seen = [sample for batch in loader for sample in batch]
    finally:
        done.set()
        watcher.join()
    readers = max(1, num_workers)
    allowance = readers * (ds.max_pre_download + 1) * chunk
    assert peak[0] <= budget + allowance, (peak[0], budget, allowance)
    lost = SAMPLES - len({int(sample["id"]) for sample in seen})
    record(
        f"peak cache {peak[0] / chunk:.1f} chunks for a budget of 3 (+{allowance // chunk} in use)",
        lost=lost,
        **_accounting(seen),
    )
