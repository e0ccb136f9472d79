"""Datasets that cannot be read in place (``memory://``) go through the cache, end to end."""

import contextlib
import os
import uuid

import numpy as np
import pytest

import litdata as ld
from litdata.core.errors import DatasetExistsError
from litdata.engine.boundary.resolve import resolve
from litdata.plugins.storage.memory import MemoryStorage


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


class FlakyStorage(MemoryStorage):
    """The memory backend, which can be taken offline."""

    name = "flaky"
    offline = False

    def _check(self):
        if FlakyStorage.offline:
            raise ConnectionError("the network is down")

    def download(self, url, local_path):
        self._check()
        super().download(url, local_path)

    def exists(self, url):
        self._check()
        return super().exists(url)

    def list(self, url):
        self._check()
        return super().list(url)


@pytest.fixture
def flaky(monkeypatch):
    from litdata.core.registry import kinds

    monkeypatch.setenv("LITDATA_STORAGE_ATTEMPTS", "1")
    with kinds.storage.isolated():
        kinds.storage.register("flaky", FlakyStorage)
        FlakyStorage.offline = False
        yield f"flaky://warm-{uuid.uuid4().hex[:8]}/ds"
        FlakyStorage.offline = False


def test_a_warm_cache_needs_no_network(flaky, tmp_path):
    ld.write_dataset(_samples(50), flaky, chunk_size=10)
    cache = str(tmp_path / "cache")
    assert sorted(s["id"] for s in ld.StreamingDataset(flaky, cache_dir=cache)) == list(range(50))
    FlakyStorage.offline = True
    ds = ld.StreamingDataset(flaky, cache_dir=cache, shuffle=True)
    assert sorted(s["id"] for s in ds) == list(range(50))
    assert ds[7]["id"] == 7
    # A cold cache offline is a clear error naming the URL.
    with pytest.raises(OSError, match=rf"{flaky}.*failed 1 times.*the network is down"):
        ld.StreamingDataset(flaky, cache_dir=str(tmp_path / "cold"))
