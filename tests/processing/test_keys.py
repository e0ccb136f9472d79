"""Keyed lookup end to end: optimize(key_fn=) in worker processes, append, merge, build, S3."""

from __future__ import annotations

import json
import os

import pytest

import litdata as ld
from litdata.core.errors import DatasetFormatError, ProcessingError
from litdata.engine.boundary.resolve import resolve

fns = pytest.importorskip("support.fns")


def _keyed(path, inputs=range(200), **options):
    options.setdefault("num_workers", 2)
    ld.optimize(
        fns.keyed, list(inputs), str(path), chunk_size=16, key_fn=fns.uid, verbose=False, **options
    )
    return ld.StreamingDataset(str(path))


def test_optimize_with_key_fn_finds_every_sample_by_its_key(tmp_path):
    ds = _keyed(tmp_path / "ds")
    assert all(ds[f"user-{i}"] == {"uid": f"user-{i}", "value": i} for i in range(200))
    assert ds.get_by_key("user-7")["value"] == 7
    assert ds[7]["uid"] in {f"user-{i}" for i in range(200)}  # ints stay positional
    index = json.loads((tmp_path / "ds" / "index.json").read_text())
    assert index["keys"] == {"num_shards": 1, "sharding": "none", "version": 1}
    left = sorted(os.listdir(tmp_path / "ds"))
    assert not [name for name in left if name.endswith(".keys.parquet")]  # merged, then removed
    assert os.listdir(tmp_path / "ds" / "keys") == ["shard-00000.parquet"]


def test_int_keys_are_looked_up_with_get_by_key(tmp_path):
    ld.optimize(
        fns.keyed,
        list(range(50)),
        str(tmp_path),
        chunk_size=8,
        key_fn=fns.value_key,
        num_workers=2,
        verbose=False,
    )
    ds = ld.StreamingDataset(str(tmp_path))
    assert ds.get_by_key(42)["uid"] == "user-42"
    with pytest.raises(KeyError):
        ds.get_by_key(50)


def test_keys_survive_dataloader_workers(tmp_path):
    _keyed(tmp_path, range(60))
    ds = ld.StreamingDataset(str(tmp_path))
    ds["user-1"]  # the sidecar opened in the parent, then workers fork
    loader = ld.StreamingDataLoader(ds, batch_size=10, num_workers=2)
    assert sorted(int(v) for batch in loader for v in batch["value"]) == list(range(60))
    assert ds["user-59"]["value"] == 59


def test_an_unknown_key_and_a_missing_sidecar_are_key_errors(tmp_path):
    ds = _keyed(tmp_path / "keyed", range(20))
    with pytest.raises(KeyError, match="user-20"):
        ds["user-20"]
    ld.optimize(
        fns.keyed,
        list(range(5)),
        str(tmp_path / "plain"),
        chunk_size=4,
        num_workers=1,
        verbose=False,
    )
    with pytest.raises(KeyError, match=r"requires a keys/ index .* build_keys_index"):
        ld.StreamingDataset(str(tmp_path / "plain"))["user-1"]
    with pytest.raises(TypeError, match="ints or strings"):
        ds.get_by_key(1.5)


def test_duplicate_keys_fail_the_run_and_leave_no_dataset(tmp_path):
    with pytest.raises(DatasetFormatError, match=r"Duplicate keys .*'same'"):
        ld.optimize(
            fns.keyed,
            list(range(10)),
            str(tmp_path),
            chunk_size=4,
            key_fn=fns.constant_key,
            num_workers=2,
            verbose=False,
        )
    assert not (tmp_path / "index.json").exists()
    assert not (tmp_path / "keys").exists()
    assert [name for name in os.listdir(tmp_path) if not name.startswith(".")] == []


def test_a_bool_key_fails_naming_the_input(tmp_path):
    with pytest.raises(ProcessingError, match=r"input 0 .*ints or strings, not True"):
        ld.optimize(
            fns.keyed,
            list(range(10)),
            str(tmp_path),
            chunk_size=4,
            key_fn=fns.bool_key,
            num_workers=1,
            verbose=False,
        )


def test_key_fn_is_refused_where_it_cannot_work(tmp_path):
    with pytest.raises(ValueError, match="use_checkpoint"):
        ld.optimize(
            fns.keyed, [1], str(tmp_path), chunk_size=4, key_fn=fns.uid, use_checkpoint=True
        )
    with pytest.raises(ValueError, match="PyTreeLoader"):
        ld.optimize(
            fns.tokens,
            [1],
            str(tmp_path),
            chunk_size=4,
            key_fn=fns.uid,
            item_loader=ld.TokensLoader(),
        )
    with pytest.raises(ValueError, match="key_fn must be callable"):
        ld.optimize(fns.keyed, [1], str(tmp_path), chunk_size=4, key_fn="uid")


def test_append_adds_keys_after_the_existing_ones(tmp_path):
    _keyed(tmp_path, range(100))
    ds = _keyed(tmp_path, range(100, 150), mode="append")
    assert len(ds) == 150
    assert ds["user-3"]["value"] == 3
    assert ds["user-149"]["value"] == 149
    with pytest.raises(ValueError, match="pass its key_fn"):
        ld.optimize(fns.keyed, [1], str(tmp_path), chunk_size=16, mode="append", verbose=False)
    with pytest.raises(DatasetFormatError, match="Duplicate keys"):
        _keyed(tmp_path, range(140, 160), mode="append")
    ds = ld.StreamingDataset(str(tmp_path))
    assert len(ds) == 150
    assert ds["user-140"]["value"] == 140
    with pytest.raises(KeyError):
        ds["user-155"]


def test_appending_keys_to_an_unkeyed_dataset_asks_for_build_keys_index(tmp_path):
    ld.optimize(
        fns.keyed, list(range(10)), str(tmp_path), chunk_size=16, num_workers=1, verbose=False
    )
    with pytest.raises(ValueError, match="build_keys_index"):
        _keyed(tmp_path, range(10, 20), mode="append")


def test_overwrite_without_keys_removes_the_old_sidecar(tmp_path):
    _keyed(tmp_path, range(30))
    ld.optimize(
        fns.keyed,
        list(range(5)),
        str(tmp_path),
        chunk_size=4,
        num_workers=1,
        mode="overwrite",
        verbose=False,
    )
    assert not (tmp_path / "keys").exists()
    with pytest.raises(KeyError, match="requires a keys/ index"):
        ld.StreamingDataset(str(tmp_path))["user-1"]


def test_build_keys_index_backfills_an_existing_dataset(tmp_path):
    ld.optimize(
        fns.keyed, list(range(40)), str(tmp_path), chunk_size=8, num_workers=2, verbose=False
    )
    keys_dir = ld.build_keys_index(str(tmp_path), fns.uid, verbose=False)
    assert keys_dir == str(tmp_path / "keys")
    assert ld.StreamingDataset(str(tmp_path))["user-33"]["value"] == 33
    with pytest.raises(FileExistsError, match="overwrite=True"):
        ld.build_keys_index(str(tmp_path), fns.uid, verbose=False)
    ld.build_keys_index(str(tmp_path), fns.value_key, overwrite=True, num_shards=3, verbose=False)
    ds = ld.StreamingDataset(str(tmp_path))
    assert all(ds.get_by_key(i)["uid"] == f"user-{i}" for i in range(40))
    assert len(os.listdir(tmp_path / "keys")) == 3


def test_merge_datasets_merges_keys_with_offsets(tmp_path):
    _keyed(tmp_path / "a", range(30))
    _keyed(tmp_path / "b", range(30, 45))
    ld.merge_datasets([str(tmp_path / "a"), str(tmp_path / "b")], str(tmp_path / "ab"))
    ds = ld.StreamingDataset(str(tmp_path / "ab"))
    assert all(ds[f"user-{i}"]["value"] == i for i in range(45))
    ld.optimize(
        fns.keyed,
        list(range(50, 55)),
        str(tmp_path / "plain"),
        chunk_size=4,
        num_workers=1,
        verbose=False,
    )
    with pytest.raises(ValueError, match=r"plain do not"):
        ld.merge_datasets([str(tmp_path / "a"), str(tmp_path / "plain")], str(tmp_path / "mixed"))


def test_keys_on_s3_write_append_and_lookup(s3_server, tmp_path):
    options = s3_server.storage_options
    url = f"{s3_server.url(s3_server.new_bucket())}/keyed"
    ld.optimize(
        fns.keyed,
        list(range(40)),
        url,
        chunk_size=8,
        num_workers=2,
        key_fn=fns.uid,
        storage_options=options,
        verbose=False,
    )
    ld.optimize(
        fns.keyed,
        list(range(40, 50)),
        url,
        chunk_size=8,
        num_workers=2,
        key_fn=fns.uid,
        storage_options=options,
        mode="append",
        verbose=False,
    )
    ds = ld.StreamingDataset(url, storage_options=options, cache_dir=str(tmp_path / "cache"))
    assert ds["user-45"]["value"] == 45
    assert ds["user-0"]["value"] == 0
    location = resolve(url, storage_options=options)
    assert location.storage.list(location.join("keys")) == ["shard-00000.parquet"]
    assert not [name for name in location.storage.list(url) if name.endswith(".keys.parquet")]
    ld.write_dataset(
        [{"uid": "w-1"}, {"uid": "w-2"}],
        f"{url}-written",
        chunk_size=1,
        key_fn=fns.uid,
        storage_options=options,
    )
    assert ld.StreamingDataset(f"{url}-written", storage_options=options)["w-2"] == {"uid": "w-2"}
