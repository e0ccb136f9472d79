"""The compact index: the same index as ``index.json``, mapped as arrays; small to pickle."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from litdata.core.compact import (
    COMPACT_FILENAME,
    ChunkTable,
    StaleCompactError,
    compact_bytes,
    index_digest,
    map_compact,
)
from litdata.core.errors import DatasetFormatError
from litdata.core.index import ChunkEntry, DatasetConfig, DatasetIndex, index_bytes


def _index(count: int) -> DatasetIndex:
    chunks = tuple(
        ChunkEntry(
            f"chunk-0-{i}.bin",
            i % 7,
            1000 + i,
            dim=None if i % 3 else 64 + i,
            checksum=None if i % 4 == 1 else f"xxh3:{i:016x}",
            extra={"block_checksums": [i, i + 1]} if i % 2 else {},
        )
        for i in range(count)
    )
    config = DatasetConfig(chunk_size=7, data_format=("int", "numpy"), item_loader="PyTreeLoader")
    return DatasetIndex(config, chunks, "1700000000.5", plugins={"serializers": {"x": "d 1"}})


def _mapped(tmp_path, index: DatasetIndex) -> DatasetIndex:
    data = index_bytes(index)
    path = tmp_path / COMPACT_FILENAME
    path.write_bytes(compact_bytes(index, index_digest(data)))
    return map_compact(str(path), index_digest(data), "somewhere/index.json")


@pytest.mark.parametrize("count", [0, 1, 41])
def test_a_mapped_index_is_the_index_it_was_built_from(tmp_path, count):
    index = _index(count)
    mapped = _mapped(tmp_path, index)
    assert isinstance(mapped.chunks, ChunkTable)
    assert mapped.to_json() == index.to_json()
    assert list(mapped.chunks) == list(index.chunks)
    assert mapped.num_items == index.num_items
    assert mapped.chunks.sizes.tolist() == [c.chunk_size for c in index.chunks]
    assert mapped.chunks.starts.tolist() == np.cumsum([0, *mapped.chunks.sizes]).tolist()
    if count:
        assert mapped.chunks[-1] == index.chunks[-1]
        assert mapped.chunks[1:3] == index.chunks[1:3]
        with pytest.raises(IndexError):
            mapped.chunks[count]


def test_it_pickles_as_its_path_whatever_its_size(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    small, large = _mapped(tmp_path / "a", _index(3)), _mapped(tmp_path / "b", _index(20_000))
    assert len(pickle.dumps(large.chunks)) < 400
    assert abs(len(pickle.dumps(large.chunks)) - len(pickle.dumps(small.chunks))) < 10
    again = pickle.loads(pickle.dumps(large))
    assert again.to_json() == large.to_json()


def test_a_file_built_from_another_index_json_is_stale(tmp_path):
    index = _index(5)
    path = tmp_path / COMPACT_FILENAME
    path.write_bytes(compact_bytes(index, index_digest(index_bytes(index))))
    with pytest.raises(StaleCompactError, match="stale"):
        map_compact(str(path), index_digest(b"{}"), "x/index.json")


def test_an_index_beyond_the_bounds_is_not_compacted():
    chunk = ChunkEntry("chunk-0-0.bin", 1 << 40, 1 << 50)
    index = DatasetIndex(DatasetConfig(data_format=("int",)), (chunk,))
    with pytest.raises(DatasetFormatError, match="beyond what a compact index holds"):
        compact_bytes(index, index_digest(b""))
