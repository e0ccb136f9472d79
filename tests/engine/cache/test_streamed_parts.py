"""Parts of a large chunk streamed piece by piece: written and checked as they arrive."""

from __future__ import annotations

import json
import threading
import uuid

import numpy as np
import pytest

import litdata as ld
from litdata.core.errors import ChunkCorruptError
from litdata.core.registry import kinds
from litdata.engine.cache.copies import record_of
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


def test_a_part_cut_midway_starts_over_and_the_chunk_is_right(url, tmp_path):
    _write(url)
    PLAN["cut"] = 3
    _epoch(url, tmp_path)
    assert PLAN["cut"] == 0


def test_a_garbled_part_fails_its_block_and_the_chunk_is_fetched_again(url, tmp_path):
    _write(url)
    PLAN["garble"] = 1
    _epoch(url, tmp_path)
    assert PLAN["garble"] == 0


def test_a_part_garbled_every_time_is_an_error_not_samples(url, tmp_path):
    _write(url)
    PLAN["garble"] = 10_000
    ds = ld.StreamingDataset(url, cache_dir=str(tmp_path / "cache"))
    with pytest.raises(ChunkCorruptError, match="block checksum"):
        list(ds)
