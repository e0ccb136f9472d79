import json

import pytest
from support import fns

import litdata as ld
from litdata.core.errors import DatasetExistsError, DatasetNotFoundError
from litdata.engine.native.writer import ChunkWriter


def _ids(directory):
    reader = ld.DatasetReader(directory)
    return [reader[i]["id"] for i in range(len(reader))]


def test_merge_datasets_in_order(tmp_path):
    ld.write_dataset(
        ({"id": i} for i in range(10)), tmp_path / "a", chunk_size=4, compression="zstd"
    )
    ld.write_dataset(
        ({"id": i} for i in range(10, 15)), tmp_path / "b", chunk_size=4, compression="zstd"
    )
    ld.merge_datasets([tmp_path / "a", tmp_path / "b"], tmp_path / "ab")
    assert _ids(tmp_path / "ab") == list(range(15))
    names = [
        c["filename"] for c in json.loads((tmp_path / "ab" / "index.json").read_text())["chunks"]
    ]
    assert names == [f"chunk-0-{n}.zstd.bin" for n in range(5)]
    assert ld.is_complete_dataset(tmp_path / "ab")


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("one", "at least two"),
        ("same", "is one of the inputs"),
        ("different", "differ in data_format"),
        ("missing", "holds no dataset"),
        ("exists", "already holds a dataset"),
    ],
)
def test_merge_refuses(tmp_path, setup, message):
    ld.write_dataset(({"id": i} for i in range(3)), tmp_path / "a", chunk_size=4)
    ld.write_dataset(({"id": str(i)} for i in range(3)), tmp_path / "s", chunk_size=4)
    inputs, output = {
        "one": ([tmp_path / "a"], tmp_path / "o"),
        "same": ([tmp_path / "a", tmp_path / "a"], tmp_path / "a"),
        "different": ([tmp_path / "a", tmp_path / "s"], tmp_path / "o"),
        "missing": ([tmp_path / "a", tmp_path / "nope"], tmp_path / "o"),
        "exists": ([tmp_path / "a", tmp_path / "a"], tmp_path / "s"),
    }[setup]
    with pytest.raises((ValueError, DatasetNotFoundError, DatasetExistsError), match=message):
        ld.merge_datasets(inputs, output)


def test_complete_dataset_merges_worker_indexes(tmp_path):
    for rank in range(2):
        writer = ChunkWriter(tmp_path, chunk_size=3, rank=rank)
        for i in range(5):
            writer.add({"id": rank * 10 + i})
        writer.close()
    assert not ld.is_complete_dataset(tmp_path)
    assert ld.complete_dataset(tmp_path).endswith("index.json")
    assert _ids(tmp_path) == [0, 1, 2, 3, 4, 10, 11, 12, 13, 14]
    assert ld.complete_dataset(tmp_path).endswith("index.json")  # already complete: no-op


def test_complete_dataset_without_anything(tmp_path):
    with pytest.raises(DatasetNotFoundError):
        ld.complete_dataset(tmp_path)


def test_optimize_then_merge(tmp_path):
    ld.optimize(fns.record, range(20), tmp_path / "a", chunk_size=6, verbose=False)
    ld.optimize(fns.record, range(20, 30), tmp_path / "b", chunk_size=6, verbose=False)
    ld.merge_datasets([tmp_path / "a", tmp_path / "b"], tmp_path / "ab")
    assert sorted(_ids(tmp_path / "ab")) == list(range(30))
