"""Names in a dataset that try to reach outside it: ``updated_at``, chunk names, MDS basenames."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import numpy as np
import pytest
from hostile import forge
from support.mds_fixtures import write_shards

import litdata as ld
from litdata.core.errors import DatasetFormatError
from litdata.engine.boundary.resolve import resolve
from litdata.plugins.storage.memory import MemoryStorage


@pytest.fixture
def victim(tmp_path):
    """A user's folder next to the dataset, with a file that must survive."""
    folder = tmp_path / "victim"
    folder.mkdir()
    (folder / "thesis.txt").write_text("years of work")
    return folder


def _intact(victim: Path) -> bool:
    return sorted(os.listdir(victim)) == ["thesis.txt"] and (
        (victim / "thesis.txt").read_text() == "years of work"
    )


@pytest.mark.fault("updated_at is a path (local compressed dataset, small cache)")
@pytest.mark.parametrize("kind", ["absolute", "relative"])
def test_updated_at_cannot_move_the_cache(tmp_path, victim, record, kind):
    record.fault += f": {kind}"
    folder = forge.dataset(tmp_path / "ds", compression="zstd")
    cache = tmp_path / "cache"
    value = str(victim) if kind == "absolute" else f"../../{victim.name}"
    forge.edit_index(folder, lambda index: index.update(updated_at=value))
    record.start()
    with pytest.raises(DatasetFormatError, match=r"updated_at is .*not a version token") as error:
        data = ld.StreamingDataset(str(folder), cache_dir=str(cache), max_cache_size=2000)
        list(data)
    record.failed()
    assert str(folder) in str(error.value)
    assert _intact(victim)
    record("DatasetFormatError naming the index and updated_at at open; the folder untouched")


@pytest.mark.fault("remote index: updated_at '../../victim' and a chunk named planted.txt")
def test_a_remote_index_cannot_plant_files(tmp_path, victim, s3_server, record):
    local = forge.dataset(tmp_path / "src")
    index = forge.read_index(local)
    chunk = index["chunks"][0]
    os.rename(local / chunk["filename"], local / "planted.txt")
    chunk["filename"] = "planted.txt"
    cache = tmp_path / "cache"
    depth = len(cache.relative_to(tmp_path).parts) + 1  # <cache>/<md5>/<version>
    index["updated_at"] = "/".join([".."] * depth + [victim.name])
    forge.write_index(local, index)
    url = s3_server.url(s3_server.new_bucket(), "ds")
    remote = resolve(url, storage_options=s3_server.storage_options)
    for path in local.iterdir():
        remote.storage.upload(str(path), remote.join(path.name))
    record.start()
    with pytest.raises(DatasetFormatError, match="updated_at"):
        data = ld.StreamingDataset(
            url, cache_dir=str(cache), storage_options=s3_server.storage_options
        )
        data[0]
    record.failed()
    assert _intact(victim)
    record("DatasetFormatError at open; nothing planted outside the cache")


@pytest.mark.fault("chunk file name not plain")
@pytest.mark.parametrize("name", ["chunk\x00.bin", "..", "../ds2/chunk-0-0.bin", "/etc/hostname"])
def test_chunk_names_must_be_plain(tmp_path, record, name):
    record.fault += f": {name!r}"
    folder = forge.dataset(tmp_path / "ds")
    forge.edit_index(folder, lambda index: index["chunks"][1].update(filename=name))
    record.start()
    with pytest.raises(DatasetFormatError, match=r"chunks\[1\]\.filename") as error:
        ld.StreamingDataset(str(folder))
    record.failed()
    assert "index.json" in str(error.value)
    record("DatasetFormatError naming the index, the field and the value")


@pytest.mark.fault("chunk file is a symlink to a file outside the dataset")
def test_a_symlinked_chunk_outside_is_refused(tmp_path, record):
    folder = forge.dataset(tmp_path / "ds")
    outside = forge.dataset(tmp_path / "other")
    name = forge.read_index(folder)["chunks"][2]["filename"]
    (folder / name).unlink()
    (folder / name).symlink_to(outside / name)
    data = ld.StreamingDataset(str(folder))
    record.start()
    with pytest.raises(DatasetFormatError, match="outside") as error:
        [data[i] for i in range(len(data))]
    record.failed()
    assert name in str(error.value)
    record("DatasetFormatError: the resolved path leaves the dataset")


def _mds(folder: Path) -> Path:
    rows = [[json.dumps({"n": i}).encode()] for i in range(12)]
    return write_shards(folder, {"doc": "json"}, rows)


@pytest.mark.fault("MDS shard basename outside the dataset")
@pytest.mark.parametrize("kind", ["relative", "absolute"])
def test_mds_basenames_stay_inside(tmp_path, record, kind):
    record.fault += f": {kind}"
    dataset = _mds(tmp_path / "mds")
    evil = _mds(tmp_path / "outside")
    target = evil / "shard.00000.mds"
    basename = str(target) if kind == "absolute" else "../outside/shard.00000.mds"
    index = json.loads((dataset / "index.json").read_text())
    index["shards"][1]["raw_data"]["basename"] = basename
    (dataset / "index.json").write_text(json.dumps(index))
    record.start()
    with pytest.raises(DatasetFormatError, match=r"shards\[1\]\.raw_data\.basename") as error:
        data = ld.StreamingDataset(str(dataset))
        [data[i] for i in range(len(data))]
    record.failed()
    assert "index.json" in str(error.value)
    record("DatasetFormatError naming the shard field; the outside shard is not read")


@pytest.mark.fault("a remote chunk named with 300 characters (an object key may have 1,024)")
@pytest.mark.parametrize("mode", ["cache", "direct cache", "no cache"])
def test_a_chunk_name_too_long_for_a_file_is_still_cached_and_read(
    tmp_path, record, monkeypatch, mode
):
    record.fault += f": {mode}"
    monkeypatch.setenv("LITDATA_DIRECT_CACHE", "1" if mode == "direct cache" else "0")
    url = f"memory://long-{uuid.uuid4().hex[:8]}/ds"
    samples = ({"id": i, "blob": np.full(16_000, i % 251, dtype=np.uint8)} for i in range(400))
    ld.write_dataset(samples, url, chunk_bytes="4MB")  # a chunk read in ranged parts
    store = MemoryStorage()
    index = json.loads(store.fs.cat_file(store.path(f"{url}/index.json")))
    long = "chunk-" + "a" * 290 + ".bin"
    store.fs.mv(store.path(f"{url}/{index['chunks'][0]['filename']}"), store.path(f"{url}/{long}"))
    index["chunks"][0]["filename"] = long
    store.fs.pipe_file(store.path(f"{url}/index.json"), json.dumps(index).encode())
    cache = tmp_path / "cache"
    record.start()
    ds = ld.StreamingDataset(
        url, cache_dir=str(cache), max_cache_size=0 if mode == "no cache" else None
    )
    read = list(ds)
    ids = sorted(int(s["id"]) for s in read)
    wrong = sum(int(not (s["blob"] == int(s["id"]) % 251).all()) for s in read)
    assert ids == list(range(400))
    assert wrong == 0
    assert all(len(os.fsencode(path.name)) <= 200 for path in cache.rglob("*"))
    record("every sample read; its cache files named by a digest and the name's end", wrong=wrong)
