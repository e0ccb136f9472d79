import numpy as np
import pytest
import torch
from support.helpers import snapshot

import litdata as ld
from litdata.core.errors import DatasetFormatError
from litdata.testing import assert_samples_equal


def _samples(n):
    return [
        {
            "id": i,
            "x": np.arange(4, dtype=np.float32) * i,
            "t": torch.full((2, 2), i),
            "name": f"s{i}",
            "blob": bytes([i % 256]) * (i % 7),
            "extra": None if i % 2 else complex(i, 1),
        }
        for i in range(n)
    ]


@pytest.mark.parametrize("compression", [None, "zstd", "zstd:9", "lz4"])
def test_random_access_returns_every_sample(tmp_path, compression):
    samples = _samples(50)
    ld.write_dataset(samples, tmp_path / "ds", chunk_size=7, compression=compression)
    reader = ld.DatasetReader(tmp_path / "ds")
    assert len(reader) == 50
    for i in [0, 49, 7, 13, 6, 42, -1]:
        assert_samples_equal(reader[i], samples[i])


def test_dataset_directory_is_never_modified(tmp_path):
    ld.write_dataset(_samples(30), tmp_path / "ds", chunk_size=4, compression="zstd")
    before = snapshot(tmp_path / "ds")
    reader = ld.DatasetReader(tmp_path / "ds")
    for i in range(30):
        reader[i]
    assert snapshot(tmp_path / "ds") == before


def test_compressed_chunks_are_decompressed_into_the_cache(tmp_path):
    ld.write_dataset(_samples(10), tmp_path / "ds", chunk_size=4, compression="zstd")
    reader = ld.DatasetReader(tmp_path / "ds", cache_dir=str(tmp_path / "cache"))
    reader[9]
    cached = sorted(p.name for p in (tmp_path / "cache").rglob("*.bin"))
    assert cached == ["chunk-0-2.bin"]


def test_uncompressed_chunks_are_read_in_place(tmp_path):
    ld.write_dataset(_samples(10), tmp_path / "ds", chunk_size=4)
    reader = ld.DatasetReader(tmp_path / "ds", cache_dir=str(tmp_path / "cache"))
    reader[9]
    assert reader.chunk(2).path == tmp_path / "ds" / "chunk-0-2.bin"
    assert not list((tmp_path / "cache").rglob("*.bin"))


def test_out_of_range_index(tmp_path):
    ld.write_dataset(range(3), tmp_path, chunk_size=2)
    with pytest.raises(IndexError, match="Index 3 is out of range for 3 items"):
        ld.DatasetReader(tmp_path)[3]


def test_bytes_come_back_as_bytes_not_views(tmp_path):
    ld.write_dataset([b"abc"], tmp_path, chunk_size=2)
    value = ld.DatasetReader(tmp_path)[0]
    assert type(value) is bytes


def test_reader_pickles_and_reads_in_the_new_process(tmp_path):
    import pickle

    ld.write_dataset(_samples(5), tmp_path, chunk_size=2)
    reader = ld.DatasetReader(tmp_path)
    reader[0]
    clone = pickle.loads(pickle.dumps(reader))
    assert_samples_equal(clone[4], _samples(5)[4])


def test_more_chunks_than_open_maps(tmp_path):
    ld.write_dataset(range(40), tmp_path, chunk_size=2)
    reader = ld.DatasetReader(tmp_path, max_open_chunks=3)
    assert [reader[i] for i in range(40)] == list(range(40))
    assert len(reader._open) == 3


def test_missing_directory_and_missing_index(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ld.DatasetReader(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="Nothing is there"):
        ld.DatasetReader(tmp_path)
    (tmp_path / "0.index.json").write_text("{}")
    with pytest.raises(DatasetFormatError, match=r"0\.index\.json is not a valid litdata index"):
        ld.DatasetReader(tmp_path)


def test_tokens_round_trip(tmp_path):
    sequences = [np.arange(100 + 10 * i, dtype=np.uint16) for i in range(6)]
    ld.write_dataset(sequences, tmp_path, chunk_size=300, item_loader=ld.TokensLoader())
    reader = ld.DatasetReader(tmp_path, item_loader=ld.TokensLoader(block_size=50))
    stream = np.concatenate(sequences)
    blocks = [reader[i] for i in range(len(reader))]
    assert all(block.dtype == np.uint16 and len(block) == 50 for block in blocks)
    assert np.isin(np.concatenate(blocks), stream).all()
    with pytest.raises(ValueError, match="TokensLoader"):
        ld.DatasetReader(tmp_path)
