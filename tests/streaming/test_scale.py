"""Opening a dataset of many chunks: arrays, not an object per chunk; a small pickle."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest

import litdata as ld
from litdata.core.compact import COMPACT_FILENAME, ChunkTable
from litdata.core.index import INDEX_FILENAME, load_index
from litdata.engine.cache.directory import cache_home
from litdata.streaming.epoch.regions import RegionIndex
from litdata.streaming.resume.state import dataset_identity, legacy_identity


@pytest.fixture(scope="module")
def many_chunks(tmp_path_factory) -> Path:
    """1,000 samples in 500 chunks of 2."""
    folder = tmp_path_factory.mktemp("many") / "ds"
    samples = ({"i": i, "x": np.full(3, i, dtype=np.int32)} for i in range(1000))
    ld.write_dataset(samples, folder, chunk_size=2)
    return folder


def test_the_writers_publish_a_fresh_compact_index(many_chunks):
    data = ld.StreamingDataset(str(many_chunks))
    assert (many_chunks / COMPACT_FILENAME).exists()
    assert isinstance(data._reader.index.chunks, ChunkTable)
    assert data._regions.whole, "a fresh dataset holds no region per chunk"
    assert [data[i]["i"] for i in (0, 1, 2, 555, 999, -1)] == [0, 1, 2, 555, 999, 999]


def test_a_dataset_pickles_small_whatever_its_chunks(many_chunks, tmp_path):
    few = tmp_path / "few"
    ld.write_dataset(({"i": i, "x": np.zeros(3, np.int32)} for i in range(4)), few, chunk_size=2)
    sizes = [len(pickle.dumps(ld.StreamingDataset(str(f)))) for f in (few, many_chunks)]
    assert abs(sizes[1] - sizes[0]) < 200, sizes
    again = pickle.loads(pickle.dumps(ld.StreamingDataset(str(many_chunks), shuffle=True)))
    assert sorted(item["i"] for item in again) == list(range(1000))


def test_a_litdata_dataset_gets_its_compact_index_in_the_cache(many_chunks, tmp_path):
    copy = tmp_path / "litdata"
    copy.mkdir()
    for path in many_chunks.iterdir():
        if path.name != COMPACT_FILENAME:  # LitData writes none
            (copy / path.name).write_bytes(path.read_bytes())
    cached = cache_home(str(copy.resolve())) / COMPACT_FILENAME
    assert not cached.exists()
    first = ld.StreamingDataset(str(copy))
    assert cached.exists()
    assert not (copy / COMPACT_FILENAME).exists(), "the dataset is never written to"
    built = cached.stat().st_mtime_ns
    second = ld.StreamingDataset(str(copy))
    assert cached.stat().st_mtime_ns == built, "built once"
    assert [second[i]["i"] for i in range(0, 1000, 97)] == list(range(0, 1000, 97))
    assert first._reader.index.to_json() == load_index(copy / INDEX_FILENAME).to_json()


def test_subsets_and_splits_read_the_same_items_as_before(many_chunks):
    data = ld.StreamingDataset(str(many_chunks))
    subset = data.subset([5, 6, 7, 400, 3])
    assert [subset[i]["i"] for i in range(len(subset))] == [5, 6, 7, 400, 3]
    train, test = ld.train_test_split(data, [0.8, 0.2])
    assert len(train) + len(test) == 1000
    half = ld.StreamingDataset(str(many_chunks), subsample=0.5)
    assert len(half) == 500


def test_the_identity_is_the_same_mapped_or_parsed_and_old_state_dicts_resume(many_chunks):
    data = ld.StreamingDataset(str(many_chunks))
    parsed = load_index(many_chunks / INDEX_FILENAME)  # what a read-only cache leaves in use
    assert dataset_identity(parsed, data._regions) == data.identity
    assert dataset_identity(parsed, RegionIndex(data._regions.regions)) == data.identity
    state = data.state_dict(0, 0, 1)
    old = {**state, "identity": legacy_identity(parsed, data._regions.regions)}
    ld.StreamingDataset(str(many_chunks)).load_state_dict(old)  # saved by an earlier litdata
    with pytest.raises(ValueError, match="different dataset"):
        ld.StreamingDataset(str(many_chunks)).load_state_dict({**state, "identity": "0" * 16})
    subset = data.subset([1, 2, 3])
    assert subset.identity != data.identity


def _copy(folder: Path, to: Path) -> Path:
    import shutil

    shutil.copytree(folder, to)
    return to


def test_an_unchanged_local_index_is_digested_once(many_chunks, tmp_path, monkeypatch):
    from litdata.engine.native import compact_index

    folder = _copy(many_chunks, tmp_path / "ds")
    calls: list[int] = []
    real = compact_index.index_digest

    def counted(data):
        calls.append(len(data))
        return real(data)

    monkeypatch.setattr(compact_index, "index_digest", counted)
    first = ld.StreamingDataset(str(folder))
    assert len(calls) == 1
    assert calls[0] == (folder / INDEX_FILENAME).stat().st_size
    again = ld.StreamingDataset(str(folder))
    assert len(calls) == 1, "the second open digested index.json again"
    assert [again[i]["i"] for i in (0, 999)] == [first[i]["i"] for i in (0, 999)] == [0, 999]


def test_an_index_rewritten_with_its_size_and_times_kept_is_digested_again(many_chunks, tmp_path):
    import json
    import os

    folder = _copy(many_chunks, tmp_path / "ds")
    index_path = folder / INDEX_FILENAME
    index = json.loads(index_path.read_text())
    index_path.write_text(json.dumps(index))
    assert ld.StreamingDataset(str(folder))[0]["i"] == 0  # recorded its digest
    before = index_path.stat()
    index["chunks"][0], index["chunks"][1] = index["chunks"][1], index["chunks"][0]
    swapped = json.dumps(index).encode()
    assert len(swapped) == before.st_size
    with open(index_path, "r+b") as handle:  # same inode, same size
        handle.write(swapped)
    os.utime(index_path, ns=(before.st_atime_ns, before.st_mtime_ns))  # same times but ctime
    reopened = ld.StreamingDataset(str(folder))
    assert [reopened[i]["i"] for i in (0, 1, 2, 3, 999)] == [2, 3, 0, 1, 999]


@pytest.mark.parametrize("record", ["garbled", "a forged digest"])
def test_a_bad_digest_record_is_passed_over(many_chunks, tmp_path, record):
    from litdata.engine.native import compact_index

    folder = _copy(many_chunks, tmp_path / "ds")
    ld.StreamingDataset(str(folder))  # records the digest
    (written,) = Path(os.environ["LITDATA_CACHE_DIR"]).rglob(compact_index.DIGEST_RECORD)
    identity = written.read_text().rpartition(" ")[0]
    written.write_text("\x00 not hex" if record == "garbled" else f"{identity} {'ab' * 32}")
    again = ld.StreamingDataset(str(folder))
    assert [again[i]["i"] for i in (0, 555, 999)] == [0, 555, 999]
    assert written.read_text().rpartition(" ")[0] == identity  # recorded again, rightly
