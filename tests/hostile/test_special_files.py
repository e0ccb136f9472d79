"""Special files in a dataset's place: a FIFO, a directory, a symbolic link to nothing.

A plain ``open()`` of a FIFO blocks until someone writes to it, forever; each test here puts
one where the reader, the metadata reads, the compact index, ``optimize(mode="append")``, an
MDS reader or ``litdata verify`` opens a file, and checks for a clear error naming the file
(or the right samples, where the file is only a cache the reader rebuilds), within a timeout.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hostile import forge
from support.cli_process import litdata
from support.mds_fixtures import write_shards

import litdata as ld
from litdata.core.compact import COMPACT_FILENAME
from litdata.core.errors import DatasetFormatError, ProcessingError
from litdata.engine.cache.directory import VERIFIED, cache_home, flat_name

pytestmark = pytest.mark.timeout(120)

SPECIAL = {
    "FIFO": os.mkfifo,
    "directory": os.mkdir,
    "dangling symlink": lambda path: os.symlink(path.parent / "gone.bin", path),
}
WORDS = {"FIFO": "FIFO", "directory": "a directory", "dangling symlink": "does not exist"}


def _replace(path: Path, kind: str) -> None:
    path.unlink()
    SPECIAL[kind](path)


def _chunk(folder: Path, position: int = 1) -> Path:
    return folder / forge.read_index(folder)["chunks"][position]["filename"]


@pytest.mark.fault("a chunk is a FIFO, a directory or a dangling symlink")
@pytest.mark.parametrize("kind", list(SPECIAL))
def test_a_special_chunk_is_refused_naming_it(tmp_path, record, kind):
    record.fault += f": {kind}"
    folder = forge.dataset(tmp_path / "ds")
    chunk = _chunk(folder)
    _replace(chunk, kind)
    data = ld.StreamingDataset(str(folder))
    record.start()
    with pytest.raises(DatasetFormatError, match=WORDS[kind]) as error:
        list(data)
    record.failed()
    assert chunk.name in str(error.value)
    record(f"DatasetFormatError naming the chunk as {WORDS[kind]}")


@pytest.mark.fault("a compressed dataset's chunk is a FIFO (fetched into the cache)")
def test_a_fifo_chunk_of_a_compressed_dataset_is_refused(tmp_path, record):
    folder = forge.dataset(tmp_path / "ds", compression="zstd")
    chunk = _chunk(folder)
    _replace(chunk, "FIFO")
    data = ld.StreamingDataset(str(folder))
    record.start()
    with pytest.raises(DatasetFormatError, match="FIFO") as error:
        data[60]
    record.failed()
    assert chunk.name in str(error.value)
    record("DatasetFormatError naming the chunk")


@pytest.mark.fault("index.json is a FIFO, a directory or a dangling symlink")
@pytest.mark.parametrize("kind", list(SPECIAL))
def test_a_special_index_is_refused(tmp_path, record, kind):
    record.fault += f": {kind}"
    folder = forge.dataset(tmp_path / "ds")
    (folder / COMPACT_FILENAME).unlink()
    _replace(folder / "index.json", kind)
    record.start()
    with pytest.raises(DatasetFormatError, match=WORDS[kind]) as error:
        ld.StreamingDataset(str(folder))
    record.failed()
    assert "index.json" in str(error.value)
    record(f"DatasetFormatError naming index.json as {WORDS[kind]}")


@pytest.mark.fault("index.compact is a FIFO beside a valid index.json")
def test_a_fifo_compact_index_is_rebuilt(tmp_path, record):
    folder = forge.dataset(tmp_path / "ds")
    _replace(folder / COMPACT_FILENAME, "FIFO")
    items = forge.read_everything(folder)
    ids = [item["id"] for item in items]
    assert sorted(ids) == sorted(list(range(forge.COUNT)) * 2)
    record(
        "the compact index rebuilt in the cache; every sample right",
        wrong=sum(not forge.is_right(item) for item in items),
    )


@pytest.mark.fault("optimize(mode='append') onto a dataset whose index.json is a FIFO")
def test_append_onto_a_fifo_index_is_refused(tmp_path, record):
    folder = forge.dataset(tmp_path / "ds")
    (folder / COMPACT_FILENAME).unlink()
    _replace(folder / "index.json", "FIFO")
    record.start()
    with pytest.raises((DatasetFormatError, ProcessingError), match="FIFO") as error:
        ld.optimize(forge.sample, list(range(10)), str(folder), chunk_size=5, mode="append")
    record.failed()
    assert "index.json" in str(error.value)
    assert (folder / "index.json").is_fifo()
    record("DatasetFormatError naming index.json; nothing written")


@pytest.mark.fault("an MDS shard is a FIFO")
def test_a_fifo_mds_shard_is_refused(tmp_path, record):
    rows = [[str(i).encode()] for i in range(8)]
    folder = write_shards(tmp_path / "mds", {"text": "str"}, rows)
    _replace(folder / "shard.00001.mds", "FIFO")
    data = ld.StreamingDataset(str(folder))
    assert data[0] == {"text": "0"}
    record.start()
    with pytest.raises(DatasetFormatError, match="FIFO") as error:
        data[5]
    record.failed()
    assert "shard.00001.mds" in str(error.value)
    record("DatasetFormatError naming the shard")


@pytest.mark.fault("litdata verify: a chunk or index.json is a FIFO")
@pytest.mark.parametrize("name", ["chunk", "index.json"])
def test_verify_reports_a_fifo_without_hanging(tmp_path, record, name):
    record.fault += f" ({name})"
    folder = forge.dataset(tmp_path / "ds")
    path = _chunk(folder) if name == "chunk" else folder / "index.json"
    (folder / COMPACT_FILENAME).unlink()
    _replace(path, "FIFO")
    record.start()
    result = litdata("verify", folder, "--quiet", timeout=60)
    record.failed()
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "FIFO" in result.stdout
    assert path.name in result.stdout
    record("exit 1, the FIFO named, no traceback")


@pytest.mark.fault("a FIFO planted in the cache as a chunk's verified record")
def test_a_fifo_record_in_the_cache_is_not_waited_for(tmp_path, record):
    folder = forge.dataset(tmp_path / "ds")
    cache = tmp_path / "cache"
    name = forge.read_index(folder)["chunks"][0]["filename"]
    records = cache_home(str(folder), str(cache)) / VERIFIED
    records.mkdir(parents=True)
    os.mkfifo(records / f"{flat_name(name)}.ok")
    items = forge.read_everything(folder, cache_dir=str(cache))
    assert sorted(item["id"] for item in items) == sorted(list(range(forge.COUNT)) * 2)
    record(
        "the record ignored, the chunk hashed; every sample right",
        wrong=sum(not forge.is_right(item) for item in items),
    )
