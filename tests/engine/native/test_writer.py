import json
import os
import warnings

import numpy as np
import pytest
from support.helpers import chunk_files

import litdata as ld
from litdata.core.chunks.names import chunk_filename, parse_chunk_filename
from litdata.core.errors import DatasetExistsError, LitdataWarning, SampleError
from litdata.engine.native.rank_indexes import merge_rank_indexes
from litdata.engine.native.writer import ChunkWriter


def test_chunk_size_counts_items(tmp_path):
    ld.write_dataset(range(10), tmp_path, chunk_size=4)
    index = json.loads((tmp_path / "index.json").read_text())
    assert [c["chunk_size"] for c in index["chunks"]] == [4, 4, 2]
    assert chunk_files(tmp_path) == ["chunk-0-0.bin", "chunk-0-1.bin", "chunk-0-2.bin"]
    assert index["config"]["chunk_size"] == 4
    assert index["config"]["chunk_bytes"] is None


def test_chunk_bytes_bounds_the_chunk_file(tmp_path):
    samples = [{"payload": os.urandom(100), "i": i} for i in range(50)]
    ld.write_dataset(samples, tmp_path, chunk_bytes="1kb")
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["config"]["chunk_bytes"] == 1000
    assert len(index["chunks"]) > 5
    for chunk in index["chunks"]:
        size = (tmp_path / chunk["filename"]).stat().st_size
        assert size == chunk["chunk_bytes"] <= 1000
    assert sum(c["chunk_size"] for c in index["chunks"]) == 50


def test_an_item_larger_than_chunk_bytes_is_written_alone_with_a_warning(tmp_path):
    samples = [b"a" * 10, b"b" * 5000, b"c" * 10]
    with pytest.warns(
        LitdataWarning,
        match=(  # LitData's phrase, then ours
            "^An item was larger than the target chunk size: "
            "sample 1 takes 5004 bytes, more than chunk_bytes=1000"
        ),
    ):
        ld.write_dataset(samples, tmp_path, chunk_bytes=1000)
    index = json.loads((tmp_path / "index.json").read_text())
    assert [c["chunk_size"] for c in index["chunks"]] == [1, 1, 1]
    assert [ld.DatasetReader(tmp_path)[i] for i in range(3)] == samples


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of chunk_size"),
        ({"chunk_size": 2, "chunk_bytes": "1MB"}, "exactly one"),
        ({"chunk_size": 0}, "positive integer"),
        ({"chunk_bytes": "lots"}, "not a size"),
        ({"chunk_size": 2, "compression": "zstdd"}, "Did you mean 'zstd'"),
    ],
)
def test_bad_arguments_are_refused(tmp_path, kwargs, message):
    with pytest.raises((ValueError, KeyError), match=message):
        ChunkWriter(tmp_path, **kwargs)


def test_a_leaf_no_serializer_accepts_names_its_path_and_type(tmp_path):
    with pytest.raises(
        SampleError, match=r"sample\['fn'\]: the 'pickle' serializer failed on this function"
    ):
        ld.write_dataset([{"a": 1, "fn": lambda: 0}], tmp_path, chunk_size=2)


def test_a_sample_with_another_structure_is_refused(tmp_path):
    samples = [{"a": 1, "b": 2}, {"a": 1, "c": 2}]
    with pytest.raises(SampleError, match=r"expected dict with keys \['a', 'b'\]"):
        ld.write_dataset(samples, tmp_path, chunk_size=10)
    assert not (tmp_path / "index.json").exists()
    assert chunk_files(tmp_path) == []


@pytest.mark.parametrize(
    ("first", "later", "message"),
    [
        (1, "one", r"sample\['v'\]: the 'int' serializer failed: expected an int, got str"),
        (1, True, r"sample\['v'\]: the 'int' serializer failed: expected an int, got bool"),
        (np.zeros(3, np.float32), np.zeros(3, np.float64), r"serializes as 'no_header_numpy:10'"),
        (1.5, 2, r"the 'float' serializer failed"),
        (b"x", "x", r"the 'bytes' serializer failed"),
    ],
)
def test_a_leaf_of_another_type_is_refused_not_garbled(tmp_path, first, later, message):
    with pytest.raises(SampleError, match=message) as caught:
        ld.write_dataset([{"v": first}, {"v": later}], tmp_path, chunk_size=10)
    assert "first sample" in str(caught.value)


def test_a_refused_leaf_names_its_type_once(tmp_path):
    with pytest.raises(SampleError) as caught:
        ld.write_dataset([{"v": 1.5}, {"v": "a"}], tmp_path, chunk_size=10)
    message = str(caught.value)
    assert "expected a float, got str. Every sample" in message
    assert message.count("str") == 1
    samples = [{"v": np.zeros(3, np.float32)}, {"v": np.zeros(3, np.float64)}]
    with pytest.raises(SampleError, match=r"'no_header_numpy:10' \(got a ndarray\)"):
        ld.write_dataset(samples, tmp_path / "b", chunk_size=9)  # a problem without the type


def test_writer_counts_and_numbers_chunks_from_a_given_index(tmp_path):
    writer = ChunkWriter(tmp_path, chunk_size=1, rank=3, chunk_index=7)
    writer.add(1)
    writer.add(2)
    index = writer.close()
    assert index is not None
    assert [c.filename for c in index.chunks] == ["chunk-3-7.bin", "chunk-3-8.bin"]
    assert (tmp_path / "3.index.json").exists()
    assert writer.num_samples == 2


def test_empty_input_writes_nothing(tmp_path):
    with pytest.raises(ValueError, match="No samples"):
        ld.write_dataset([], tmp_path / "ds", chunk_size=2)
    assert not (tmp_path / "ds" / "index.json").exists()


def test_existing_dataset_is_not_overwritten(tmp_path):
    ld.write_dataset([1], tmp_path, chunk_size=2)
    with pytest.raises(FileExistsError, match="already holds a dataset") as caught:
        ld.write_dataset([2], tmp_path, chunk_size=2)
    assert isinstance(caught.value, DatasetExistsError)  # as optimize raises
    assert ld.DatasetReader(tmp_path)[0] == 1


def test_checksums_and_format_version_are_recorded(tmp_path):
    ld.write_dataset(range(3), tmp_path, chunk_size=2, compression="zstd")
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["format_version"] == 1
    assert all(c["checksum"].startswith("xxh3:") for c in index["chunks"])
    assert chunk_files(tmp_path) == ["chunk-0-0.zstd.bin", "chunk-0-1.zstd.bin"]


def test_no_warning_for_normal_writes(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ld.write_dataset(({"i": i} for i in range(100)), tmp_path, chunk_bytes="64MB")


@pytest.mark.parametrize("compression", [None, "zstd", "zstd:7"])
def test_chunk_filenames_parse_back(compression):
    assert parse_chunk_filename(chunk_filename(3, 12, compression)) == (3, 12)


@pytest.mark.parametrize("name", ["index.json", "chunk-1-2x.bin", "chunk--1.bin", "chunk-1-2..bin"])
def test_other_names_are_not_chunk_filenames(name):
    assert parse_chunk_filename(name) is None


def _write_ranks(folder, ranks=(0, 1), **options):
    for rank in ranks:
        writer = ChunkWriter(folder, chunk_size=4, rank=rank, **options)
        for i in range(6):
            writer.add({"rank": rank, "i": i})
        writer.close()


def test_a_chunk_writer_refuses_to_write_over_a_dataset_s_chunks(tmp_path):
    folder = tmp_path / "cw"
    _write_ranks(folder)
    merge_rank_indexes(str(folder))
    before = {name: (folder / name).read_bytes() for name in os.listdir(folder)}
    with pytest.raises(DatasetExistsError) as raised:
        ChunkWriter(folder, chunk_size=4, rank=0)
    message = str(raised.value)
    assert "chunk-0-0.bin" in message
    assert "mode='overwrite'" in message
    assert "chunk_index=2" in message  # rank 0 has chunks 0 and 1
    assert {name: (folder / name).read_bytes() for name in os.listdir(folder)} == before
    assert len(ld.StreamingDataset(str(folder))) == 12  # still readable, checksums intact


def test_a_later_chunk_over_a_dataset_s_chunk_is_refused_too(tmp_path):
    folder = tmp_path / "cw"
    _write_ranks(folder, ranks=(0,))
    (folder / "chunk-0-0.bin").rename(folder / "moved.bin")  # the first target is free
    writer = ChunkWriter(folder, chunk_size=4, rank=0)
    for i in range(4):
        writer.add(i)
    with pytest.raises(DatasetExistsError, match=r"chunk-0-1\.bin"):
        for i in range(4):
            writer.add(i)


def test_mode_overwrite_and_a_free_chunk_index_write_as_asked(tmp_path):
    folder = tmp_path / "cw"
    _write_ranks(folder)
    merge_rank_indexes(str(folder))
    _write_ranks(folder, mode="overwrite")  # an example run again as it is
    merge_rank_indexes(str(folder))
    assert len(ld.StreamingDataset(str(folder))) == 12
    writer = ChunkWriter(folder, chunk_size=4, rank=0, chunk_index=2)
    writer.add(1)
    writer.close()
    with pytest.raises(ValueError, match="mode must be None or 'overwrite'"):
        ChunkWriter(folder, chunk_size=4, mode="append")


def test_stray_chunks_of_a_folder_without_an_index_are_written_over(tmp_path):
    folder = tmp_path / "cw"
    folder.mkdir()
    (folder / "chunk-0-0.bin").write_bytes(b"left by a killed run")
    writer = ChunkWriter(folder, chunk_size=2, rank=0)
    writer.add(1)
    writer.close()
    assert (folder / "chunk-0-0.bin").read_bytes() != b"left by a killed run"
