"""Datasets that cannot be read in place (``memory://``) go through the cache, end to end."""

import contextlib
import os
import uuid

import numpy as np
import pytest

import litdata as ld
from litdata.core.errors import DatasetExistsError
from litdata.core.location import resolve


def _samples(count):
    return [{"id": i, "data": np.full(2000, i % 251, dtype=np.uint8)} for i in range(count)]


@pytest.fixture
def url():
    return f"memory://remote-{uuid.uuid4().hex[:8]}/ds"


def test_write_read_and_stream_a_remote_dataset(url, tmp_path):
    assert ld.write_dataset(_samples(100), url, chunk_size=10) == url
    names = resolve(url).storage.list(url)
    assert "index.json" in names
    assert "chunk-0-9.bin" in names
    assert not any(name.endswith(".index.json") for name in names)  # merged, then removed
    cache = tmp_path / "cache"
    ds = ld.StreamingDataset(url, cache_dir=str(cache), shuffle=True)
    assert ds[42]["id"] == 42
    assert (ds[42]["data"] == 42).all()
    loader = ld.StreamingDataLoader(ds, batch_size=8, num_workers=2)  # fork: workers see it
    ids = sorted(int(i) for batch in loader for i in batch["id"])
    assert ids == list(range(100))
    cached = [name for _, _, files in os.walk(cache) for name in files if name.endswith(".bin")]
    assert len(cached) == 10


def test_a_remote_dataset_is_not_written_twice(url):
    ld.write_dataset(_samples(5), url, chunk_size=10)
    with pytest.raises(DatasetExistsError, match="already holds a dataset"):
        ld.write_dataset(_samples(5), url, chunk_size=10)


def test_a_failed_remote_write_leaves_nothing(url):
    def samples():
        yield from _samples(25)
        raise RuntimeError("the source broke")

    with pytest.raises(RuntimeError, match="the source broke"):
        ld.write_dataset(samples(), url, chunk_size=10)
    assert resolve(url).storage.list(url) == []


def _cached_bytes(cache):
    total = 0
    for root, _, files in os.walk(cache):
        for name in files:
            if name.endswith(".bin"):
                with contextlib.suppress(FileNotFoundError):  # evicted while we look
                    total += os.path.getsize(os.path.join(root, name))
    return total


def test_the_cache_budget_evicts_chunks_nobody_reads(url, tmp_path):
    ld.write_dataset(_samples(200), url, chunk_size=10)  # 20 chunks of ~20 KB
    size = len(resolve(url).read("chunk-0-0.bin"))
    cache = tmp_path / "cache"
    ds = ld.StreamingDataset(url, cache_dir=str(cache), max_cache_size=5 * size)
    seen = []
    peak = 0
    for sample in ds:
        seen.append(sample["id"])
        on_disk = _cached_bytes(cache)
        peak = max(peak, on_disk)
    assert seen == list(range(200))
    # The budget, plus what a reader holds and prefetches (max_pre_download=2) at once.
    assert peak <= 5 * size + 3 * size, (peak, size)
    left = [name for _, _, files in os.walk(cache) for name in files if name.endswith(".bin")]
    assert 5 <= len(left) <= 8  # chunks were evicted as the epoch went on
