"""Processes sharing a chunk cache: a waiting reader uses a chunk as soon as it is published."""

import threading
import time

import pytest

import litdata as ld
from litdata.core.chunks.names import decompressed_filename
from litdata.core.index import DatasetConfig, DatasetIndex
from litdata.engine.boundary.resolve import resolve
from litdata.engine.cache import chunk_cache as chunks
from litdata.engine.cache.chunk_cache import ChunkCache
from litdata.engine.cache.directory import LOCKS, version_dir
from litdata.engine.cache.locks import ChunkLock
from litdata.plugins.formats.chunks.format import ChunksFormat


def test_a_chunk_published_while_its_fetcher_holds_it_is_used_at_once(tmp_path, monkeypatch):
    # A compressed dataset is fetched (decompressed) into the cache, under the chunk locks.
    monkeypatch.setattr(chunks, "WAIT_SECONDS", 5.0)
    samples = [{"id": i} for i in range(20)]
    location = resolve(
        ld.write_dataset(samples, tmp_path / "ds", chunk_size=10, compression="zstd")
    )
    index = ChunksFormat().read_index(location)
    cache = ChunkCache(location, index)
    target = cache.directory / decompressed_filename(index.chunks[0].filename, "zstd")
    # Another reader fetches the chunk, publishes it and reads it (holding it shared) just
    # after this one found it missing: this one must not wait for that reader to finish.
    other = ChunkLock(cache.directory, target.name)
    other.acquire("shared")
    publish = threading.Timer(0.3, target.write_bytes, args=(b"published",))
    publish.start()
    started = time.monotonic()
    try:
        assert cache.hold(0) == str(target)
    finally:
        publish.join()
        other.release()
    assert time.monotonic() - started < 3


def test_a_fetch_stuck_in_another_process_is_a_chunk_wait_timeout(tmp_path, monkeypatch):
    monkeypatch.setenv("LITDATA_CHUNK_TIMEOUT", "1")
    location = resolve(
        ld.write_dataset([{"id": 1}], tmp_path / "ds", chunk_size=1, compression="zstd")
    )
    index = ChunksFormat().read_index(location)
    cache = ChunkCache(location, index)
    target = cache.directory / decompressed_filename(index.chunks[0].filename, "zstd")
    stuck = ChunkLock(cache.directory, target.name)  # another fetcher that never publishes
    stuck.acquire("exclusive")
    try:
        with pytest.raises(
            ld.ChunkWaitTimeoutError, match=r"Raise LITDATA_CHUNK_TIMEOUT"
        ) as caught:
            cache.hold(0)
    finally:
        stuck.release()
    assert caught.value.path == str(target)
    assert isinstance(caught.value, FileNotFoundError)


def test_a_new_version_keeps_the_locks_of_the_dataset_folder(tmp_path):
    home = tmp_path / "home"
    (home / LOCKS).mkdir(parents=True)
    (home / LOCKS / "index.json.lock").touch()  # held by a rank opening the dataset now
    (home / "0.5").mkdir()  # an older version's folder
    version_dir(home, DatasetIndex(DatasetConfig(), (), updated_at="1.5"))
    assert (home / LOCKS / "index.json.lock").exists()
    assert not (home / "0.5").exists()
