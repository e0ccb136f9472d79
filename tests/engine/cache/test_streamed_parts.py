"""Parts of a large chunk streamed piece by piece: written and checked as they arrive."""

from __future__ import annotations

import contextlib
import json
import threading
import uuid

import numpy as np
import pytest

import litdata as ld
from litdata.core.errors import ChunkCorruptError, DatasetFormatError, StorageError
from litdata.core.registry import kinds
from litdata.engine.cache.copies import record_of
from litdata.engine.cache.memory import memory_supported
from litdata.plugins.storage.memory import MemoryStorage

pytestmark = pytest.mark.usefixtures("fresh_plugins")

#: What the store does: pieces' size, how many answers to cut or garble, what it was asked.
PLAN: dict[str, int] = {"piece": 10_000, "cut": 0, "garble": 0}
ASKED: dict[str, list[tuple[str, int, int]]] = {"whole": [], "ranges": [], "streams": []}
GUARD = threading.Lock()


class StreamStore(MemoryStorage):
    """The memory backend, streaming ranges in pieces; it cuts or garbles answers on request."""

    name = "streamstore"

    def read_range(self, url, start, end):
        ASKED["ranges"].append((url, start, end))
        return super().read_range(url, start, end)

    def read_range_into(self, url, start, end, sink):
        data = super().read_range(url, start, end)
        with GUARD:
            ASKED["streams"].append((url, start, end))
            cut = PLAN["cut"] > 0 and end - start > PLAN["piece"]
            garble = not cut and PLAN["garble"] > 0 and end - start > PLAN["piece"]
            PLAN["cut"] -= cut
            PLAN["garble"] -= garble
        if garble:
            data = bytearray(data)
            data[len(data) // 2] ^= 0xFF
        step = PLAN["piece"]
        for at in range(0, len(data), step):
            if cut and at >= len(data) // 2:
                raise ConnectionError(f"{url}: the connection was reset")
            sink(start + at, memoryview(data)[at : at + step])


@pytest.fixture
def url():
    kinds.storage.register("streamstore", StreamStore)
    PLAN.update(piece=10_000, cut=0, garble=0)
    for calls in ASKED.values():
        calls.clear()
    return f"streamstore://streamed-{uuid.uuid4().hex[:8]}/ds"


def _write(url, count=400, blob=16_000):
    samples = ({"id": i, "blob": np.full(blob, i % 251, dtype=np.uint8)} for i in range(count))
    ld.write_dataset(samples, url, chunk_bytes="4MB")
    store = StreamStore()
    return json.loads(store.fs.cat_file(store.path(f"{url}/index.json")))["chunks"]


def _epoch(url, tmp_path):
    ds = ld.StreamingDataset(url, cache_dir=str(tmp_path / "cache"))
    samples = list(ds)
    assert sorted(int(s["id"]) for s in samples) == list(range(len(ds)))
    for sample in samples:
        assert (sample["blob"] == int(sample["id"]) % 251).all()
    return ds


def test_large_chunks_stream_their_parts_and_record_the_index_checksum(url, tmp_path):
    chunks = _write(url)
    _epoch(url, tmp_path)
    large = [c for c in chunks if c["chunk_bytes"] > 2 << 20]
    assert large
    for chunk in large:  # every part streamed, none read whole into memory
        streamed = [(s, e) for u, s, e in ASKED["streams"] if u.endswith("/" + chunk["filename"])]
        assert len(streamed) > 1
        assert not [r for r in ASKED["ranges"] if r[0].endswith("/" + chunk["filename"])]
        # the copy's record is the index's checksum, known without hashing the copy again
        (copy,) = (tmp_path / "cache").rglob(chunk["filename"])
        assert record_of(copy).read_text() == chunk["checksum"]


@pytest.mark.parametrize("direct", ["0", "1"])
def test_a_part_cut_midway_starts_over_and_the_chunk_is_right(url, tmp_path, monkeypatch, direct):
    _write(url)
    monkeypatch.setenv("LITDATA_DIRECT_CACHE", direct)
    PLAN["cut"] = 3
    _epoch(url, tmp_path)
    assert PLAN["cut"] == 0


@pytest.mark.parametrize("direct", ["0", "1"])
def test_a_garbled_part_fails_its_block_and_the_chunk_is_fetched_again(
    url, tmp_path, monkeypatch, direct
):
    _write(url)
    monkeypatch.setenv("LITDATA_DIRECT_CACHE", direct)
    PLAN["garble"] = 1
    _epoch(url, tmp_path)
    assert PLAN["garble"] == 0


def test_a_part_garbled_every_time_is_an_error_not_samples(url, tmp_path):
    _write(url)
    PLAN["garble"] = 10_000
    ds = ld.StreamingDataset(url, cache_dir=str(tmp_path / "cache"))
    with pytest.raises(ChunkCorruptError, match="block checksum"):
        list(ds)


def _memory_files():
    """The memfd files this process has open (``/proc/self/fd`` links to ``/memfd:...``)."""
    import os

    found = []
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{name}").startswith("/memfd:chunk-"):
                found.append(name)
    return found


@pytest.mark.skipif(not memory_supported(), reason="no memfd_create here")
def test_no_cache_keeps_chunks_in_memory_while_read_and_writes_nothing(url, tmp_path):
    _write(url)
    cache = tmp_path / "cache"
    ds = ld.StreamingDataset(url, cache_dir=str(cache), max_cache_size=0, shuffle=True)
    assert ds.max_cache_size == 0
    loader = ld.StreamingDataLoader(ds, batch_size=16, num_workers=0)
    ids = []
    for batch in loader:
        ids.extend(int(i) for i in batch["id"])
        assert (batch["blob"][:, 0].numpy() == batch["id"].numpy() % 251).all()
        assert len(_memory_files()) <= 4  # the chunk read and the ones fetched ahead
    assert sorted(ids) == list(range(400))
    assert not [p for p in cache.rglob("chunk-*") if p.is_file()]  # no chunk on disk
    assert not _memory_files()  # each let go once read
    assert ASKED["streams"]  # the parts still streamed and checked


@pytest.mark.skipif(not memory_supported(), reason="no memfd_create here")
def test_no_cache_refetches_a_garbled_chunk_and_serves_random_access(url, tmp_path):
    _write(url)
    PLAN["garble"] = 1
    ds = ld.StreamingDataset(url, cache_dir=str(tmp_path / "cache"), max_cache_size=0)
    assert sorted(int(s["id"]) for s in ds) == list(range(400))
    assert PLAN["garble"] == 0
    assert int(ds[123]["id"]) == 123
    PLAN["garble"] = 10_000
    fresh = ld.StreamingDataset(url, cache_dir=str(tmp_path / "cache2"), max_cache_size=0)
    with pytest.raises(ChunkCorruptError, match="block checksum"):
        list(fresh)
    assert not _memory_files()


@pytest.mark.skipif(not memory_supported(), reason="no memfd_create here")
def test_chunks_held_in_memory_stay_with_their_process_when_pickled(url, tmp_path):
    import pickle

    _write(url)
    ds = ld.StreamingDataset(url, cache_dir=str(tmp_path / "cache"), max_cache_size=0)
    reader = ld.DatasetReader(url, cache_dir=str(tmp_path / "cache"), max_cache_size=0)
    path = reader.cache.hold(0)
    assert reader.cache.cached(0)
    copy = pickle.loads(pickle.dumps(reader.cache))  # a spawned worker's
    assert not copy.cached(0)
    reader.cache.release(0)
    assert not reader.cache.cached(0)
    assert len(pickle.loads(pickle.dumps(ds))) == 400
    assert path.startswith("/proc/self/fd/")


def _resident_pages(path):
    """How many of the file's pages are in the system's file cache (``mincore``)."""
    import ctypes
    import mmap
    import os

    size = os.path.getsize(path)
    pages = -(-size // mmap.PAGESIZE)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t] + [ctypes.c_int] * 3 + [ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    descriptor = os.open(path, os.O_RDONLY)
    try:  # a mapping of our own that touches nothing: mincore tells what the cache holds
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, descriptor, 0)
        vector = ctypes.create_string_buffer(pages)
        assert libc.mincore(address, size, vector) == 0, ctypes.get_errno()
        libc.munmap(address, size)
    finally:
        os.close(descriptor)
    return sum(byte & 1 for byte in vector.raw)


@pytest.mark.skipif(not memory_supported(), reason="no memfd_create here")
def test_a_fetched_chunk_is_read_from_memory_and_cached_around_the_file_cache(
    url, tmp_path, monkeypatch
):
    chunks = _write(url)
    monkeypatch.setenv("LITDATA_DIRECT_CACHE", "1")
    store = StreamStore()
    cache = tmp_path / "cache"
    reader = ld.DatasetReader(url, cache_dir=str(cache))
    large = next(n for n, c in enumerate(chunks) if c["chunk_bytes"] > 2 << 20)
    path = reader.cache.hold(large)
    assert path.startswith("/proc/self/fd/")  # this process reads the bytes it fetched
    assert len(_memory_files()) == 1
    (copy,) = cache.rglob(chunks[large]["filename"])
    # written around the file cache: at most its last, partial page went through it
    assert _resident_pages(copy) <= 1
    remote = store.fs.cat_file(store.path(f"{url}/{chunks[large]['filename']}"))
    assert copy.read_bytes() == remote  # the cache file is whole and right
    with open(path, "rb") as landed:
        assert landed.read() == remote
    reader.cache.release(large)
    assert not _memory_files()  # let go once released
    again = ld.DatasetReader(url, cache_dir=str(cache))
    assert again.cache.hold(large) == str(copy)  # later readers find the cache file
    again.cache.release(large)
    assert _epoch(url, tmp_path)  # a whole epoch through landed chunks is right


@pytest.mark.skipif(not memory_supported(), reason="no memfd_create here")
def test_chunks_past_the_landing_budget_go_to_the_cache_folder(url, tmp_path, monkeypatch):
    from litdata.engine.cache import memory

    chunks = _write(url)
    monkeypatch.setenv("LITDATA_DIRECT_CACHE", "1")
    monkeypatch.setattr(memory, "LANDING_BYTES", max(c["chunk_bytes"] for c in chunks) + 1)
    reader = ld.DatasetReader(url, cache_dir=str(tmp_path / "cache"))
    large = [n for n, c in enumerate(chunks) if c["chunk_bytes"] > 2 << 20][:2]
    first, second = (reader.cache.hold(n) for n in large)
    assert first.startswith("/proc/self/fd/")
    assert not second.startswith("/proc/")  # the budget was spent: the usual cache file
    for n in large:
        reader.cache.release(n)
    assert not _memory_files()


def test_without_the_setting_fetched_chunks_are_read_from_the_cache_folder(url, tmp_path):
    chunks = _write(url)
    reader = ld.DatasetReader(url, cache_dir=str(tmp_path / "cache"))
    large = next(n for n, c in enumerate(chunks) if c["chunk_bytes"] > 2 << 20)
    path = reader.cache.hold(large)
    assert path.endswith(chunks[large]["filename"])
    assert not _memory_files()
    reader.cache.release(large)


@pytest.mark.skipif(not memory_supported(), reason="no memfd_create here")
def test_forked_workers_land_their_own_chunks(url, tmp_path, monkeypatch):
    chunks = _write(url)
    monkeypatch.setenv("LITDATA_DIRECT_CACHE", "1")
    cache = tmp_path / "cache"
    ds = ld.StreamingDataset(url, cache_dir=str(cache), shuffle=True)
    loader = ld.StreamingDataLoader(
        ds, batch_size=16, num_workers=2, multiprocessing_context="fork"
    )
    ids = []
    for batch in loader:
        ids.extend(int(i) for i in batch["id"])
        assert (batch["blob"][:, 0].numpy() == batch["id"].numpy() % 251).all()
    assert sorted(ids) == list(range(400))
    assert not _memory_files()  # the workers' memory went with them
    store = StreamStore()
    for chunk in chunks:  # every chunk cached whole, as the store has it
        (copy,) = cache.rglob(chunk["filename"])
        assert copy.read_bytes() == store.fs.cat_file(store.path(f"{url}/{chunk['filename']}"))


@pytest.mark.skipif(not memory_supported(), reason="no memfd_create here")
@pytest.mark.parametrize("factor", [1000.0, 0.75], ids=["larger", "smaller"])
@pytest.mark.parametrize("blocks", [True, False], ids=["blocks", "whole-checksum"])
def test_an_index_lying_about_a_landed_chunks_size_is_an_error(
    url, tmp_path, monkeypatch, factor, blocks
):
    chunks = _write(url)
    monkeypatch.setenv("LITDATA_DIRECT_CACHE", "1")
    store = StreamStore()
    index_path = store.path(f"{url}/index.json")
    index = json.loads(store.fs.cat_file(index_path))
    index["chunks"][0]["chunk_bytes"] = int(chunks[0]["chunk_bytes"] * factor)
    if not blocks:  # as an older writer left it: one checksum of the whole chunk
        index["chunks"][0].pop("block_checksums")
    store.fs.pipe_file(index_path, json.dumps(index).encode())
    cache = tmp_path / "cache"
    # the block table no longer fits the size; else the store has fewer bytes than asked
    # for, or the bytes fetched fail the chunk's checksum
    expected = DatasetFormatError if blocks else StorageError if factor > 1 else ChunkCorruptError
    with pytest.raises(expected, match=chunks[0]["filename"]):
        reader = ld.DatasetReader(url, cache_dir=str(cache))
        reader.cache.hold(0)
    assert not _memory_files()
    assert not list(cache.rglob(chunks[0]["filename"]))
