"""The keys sidecar on real parquet files: normalisation, merging, lookups without a full load."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from litdata.core.errors import DatasetFormatError
from litdata.engine.boundary.resolve import resolve
from litdata.engine.native.keys import (
    KeyIndex,
    KeyRecorder,
    KeysPart,
    merge_keys,
    normalize_key,
    shard_name,
)


@pytest.mark.parametrize(
    ("key", "expected"),
    [(3, 3), (np.int64(7), 7), ("a", "a"), (b"bytes", "bytes"), (memoryview(b"mv"), "mv")],
)
def test_keys_are_ints_or_strings(key, expected):
    assert normalize_key(key) == expected
    assert type(normalize_key(key)) is type(expected)


@pytest.mark.parametrize("key", [True, None, 1.5, ("a",)])
def test_other_keys_are_refused_by_type(key):
    with pytest.raises(TypeError, match="ints or strings"):
        normalize_key(key)


def _sidecar(tmp_path, keys, chunk_size=10, shards=1):
    recorder = KeyRecorder(lambda sample: sample)
    for key in keys:
        recorder.record(key)
    recorder.write(tmp_path / "0.keys.parquet")
    location = resolve(tmp_path)
    sizes = [chunk_size] * -(-len(keys) // chunk_size)
    info = merge_keys(location, [KeysPart(location, "0.keys.parquet")], sizes, shards)
    return info, KeyIndex.open(location, info, tmp_path / "cache")


def test_the_sidecar_has_litdatas_columns_sorted_by_key(tmp_path):
    info, _ = _sidecar(tmp_path, [f"k{i:03d}" for i in reversed(range(25))])
    assert info == {"num_shards": 1, "sharding": "none", "version": 1}
    table = pq.read_table(tmp_path / "keys" / shard_name(0))
    assert table.column_names == ["key", "index", "chunk_index", "chunk_offset"]
    assert [str(field.type) for field in table.schema] == ["string", "int64", "int32", "int32"]
    rows = table.to_pylist()
    assert [row["key"] for row in rows] == sorted(row["key"] for row in rows)
    first = rows[0]  # "k000" was the last sample written
    assert first == {"key": "k000", "index": 24, "chunk_index": 2, "chunk_offset": 24}


def test_int_keys_stay_ints_and_strings_of_ints_find_nothing(tmp_path):
    _info, keys = _sidecar(tmp_path, [i * 3 for i in range(100)])
    assert str(pq.read_table(tmp_path / "keys" / shard_name(0)).schema.field("key").type) == "int64"
    assert keys.find(99) == 33
    assert keys.find(np.int32(0)) == 0
    for missing in (1, "3", 10_000, -1):
        with pytest.raises(KeyError):
            keys.find(missing)


def test_lookups_read_one_row_group_of_a_large_sidecar(tmp_path):
    count = 300_000  # five row groups
    _, keys = _sidecar(tmp_path, [f"id-{i}" for i in range(count)], chunk_size=1000)
    shard = keys._shards[0]
    assert len(shard.groups) == 5
    for i in (0, 123_456, count - 1):
        assert keys.find(f"id-{i}") == i
    assert len(shard._groups) <= 3  # only the groups that were needed are held
    with pytest.raises(KeyError):
        keys.find("id-300000")


def test_keys_too_long_for_parquet_statistics_are_still_found(tmp_path):
    long = ["x" * 5000 + str(i) for i in range(50)]
    _, keys = _sidecar(tmp_path, long)
    assert keys.find(long[17]) == 17


def test_hash_sharded_sidecars_find_every_key(tmp_path):
    info, keys = _sidecar(tmp_path, [f"s{i}" for i in range(500)], shards=4)
    assert info == {"num_shards": 4, "sharding": "hash", "version": 1}
    sizes = [pq.read_metadata(tmp_path / "keys" / shard_name(s)).num_rows for s in range(4)]
    assert sum(sizes) == 500
    assert min(sizes) > 0
    assert all(keys.find(f"s{i}") == i for i in range(0, 500, 7))


def test_duplicate_keys_are_an_error_naming_them(tmp_path):
    with pytest.raises(DatasetFormatError, match=r"Duplicate keys .*\['b', 'd'\]"):
        _sidecar(tmp_path, ["a", "b", "c", "b", "d", "d"])
    assert not (tmp_path / "keys").exists()


def test_mixed_int_and_string_keys_are_stored_as_strings(tmp_path):
    _, keys = _sidecar(tmp_path, [1, "two", 3])
    assert keys.find("two") == 1
    assert keys.find(3) == 2  # str(3), as LitData stores it


def test_non_ascii_keys_are_found(tmp_path):
    keys = ["zebra", "émile", "ключ", "Ωmega", "a", "日本", "e\u0301"]
    _, index = _sidecar(tmp_path, keys, chunk_size=2)
    assert [index.find(key) for key in keys] == list(range(len(keys)))
    with pytest.raises(KeyError):
        index.find("émil")
