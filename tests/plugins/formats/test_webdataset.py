"""A local folder of WebDataset tar shards streams as it is (the ``webdataset`` format)."""

import io
import json
import tarfile

import pytest
from mds_samples import wds_sample

import litdata as ld
from litdata.core.errors import ChunkCorruptError, DatasetNotFoundError
from litdata.core.registry import hooks
from litdata.engine.boundary.resolve import resolve
from litdata.plugins.formats.webdataset.format import WebDatasetFormat
from litdata.testing import FormatContract

SUFFIXES = ("txt", "cls", "json", "bin")


def _member_bytes(value):
    return value if isinstance(value, bytes) else value.encode()


def write_shards(folder, count, per_shard):
    """Tars of ``wds_sample``s as WebDataset's ShardWriter lays them out; returns the samples."""
    folder.mkdir(parents=True, exist_ok=True)
    expected = []
    for first in range(0, count, per_shard):
        path = folder / f"shard-{first // per_shard:04d}.tar"
        with tarfile.open(path, "w") as tar:
            for index in range(first, min(first + per_shard, count)):
                sample = wds_sample(index)
                row = {"__key__": sample["__key__"], "__url__": str(path)}
                for suffix in SUFFIXES:
                    data = _member_bytes(sample[suffix])
                    info = tarfile.TarInfo(f"{sample['__key__']}.{suffix}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
                    row[suffix] = data
                expected.append(row)
    return expected


class TestWebDatasetFormat(FormatContract):
    format_class = WebDatasetFormat

    @pytest.fixture
    def expected(self, tmp_path):
        return write_shards(tmp_path / "ds", 45, 10)

    @pytest.fixture
    def dataset(self, tmp_path, expected):
        return tmp_path / "ds"


def _take(loader, count=None):
    out = []
    for batch in loader:
        out.append([sample["__key__"] for sample in batch])
        if count is not None and len(out) == count:
            return out, json.loads(json.dumps(loader.state_dict()))
    return out, None


def _loader(folder, workers):
    dataset = ld.StreamingDataset(folder, shuffle=True, seed=2)
    return ld.StreamingDataLoader(dataset, batch_size=4, num_workers=workers, collate_fn=list)


def test_two_workers_resume_mid_epoch(tmp_path):
    write_shards(tmp_path / "ds", 60, 8)
    whole, _ = _take(_loader(tmp_path / "ds", 2))
    head, state = _take(_loader(tmp_path / "ds", 2), 6)
    resumed = _loader(tmp_path / "ds", 2)
    resumed.load_state_dict(state)
    tail, _ = _take(resumed)
    assert head + tail == whole
    assert len({key for batch in whole for key in batch}) == 60


def test_a_native_dataset_holding_a_tar_is_still_chunks(tmp_path):
    ld.write_dataset([{"id": 1}], tmp_path / "ds", chunk_size=1)
    write_shards(tmp_path / "ds", 2, 2)
    assert hooks.detect_format(resolve(tmp_path / "ds")) == "chunks"


def test_a_truncated_shard_is_named(tmp_path):
    write_shards(tmp_path / "ds", 20, 10)
    shard = tmp_path / "ds" / "shard-0001.tar"
    shard.write_bytes(shard.read_bytes()[:3000])
    with pytest.raises(ChunkCorruptError, match="shard-0001.tar"):
        ld.StreamingDataset(tmp_path / "ds")


def test_a_shard_changed_after_indexing_is_an_error(tmp_path):
    write_shards(tmp_path / "ds", 20, 10)
    reader = ld.DatasetReader(tmp_path / "ds")
    write_shards(tmp_path / "ds", 12, 10)  # shard-0001 now holds 2 samples
    with pytest.raises(ChunkCorruptError, match="shard-0001.tar"):
        reader[15]


def test_shards_without_samples_are_no_dataset(tmp_path):
    (tmp_path / "ds").mkdir()
    with tarfile.open(tmp_path / "ds" / "empty.tar", "w"):
        pass
    with pytest.raises(DatasetNotFoundError, match="hold no samples"):
        ld.StreamingDataset(tmp_path / "ds")
