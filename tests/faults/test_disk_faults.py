"""A full disk at every write site: a clear error naming the file and the bytes, never a SIGBUS,
no temporary file left, and an existing dataset exactly as it was."""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from pathlib import Path

import numpy as np
import pytest
from support.helpers import content_snapshot

import litdata as ld
from litdata.core.errors import DiskFullError, ProcessingError
from litdata.engine.cache.direct import write_direct
from litdata.engine.cache.memory import memory_supported

pytestmark = pytest.mark.usefixtures("small_disk")

SAMPLE = 20_000  # bytes of payload per sample


def big(i):
    return {"id": i, "blob": np.full(SAMPLE, i % 251, dtype=np.uint8)}


def _temporaries(folder: Path) -> list[str]:
    return [str(path) for path in folder.rglob("*") if ".tmp." in path.name]


def _ids(dataset) -> list[int]:
    reader = ld.DatasetReader(dataset)
    return [reader[i]["id"] for i in range(len(reader))]


@pytest.mark.fault("full disk: write_dataset")
def test_write_dataset_on_a_full_disk(small_disk, record):
    disk = small_disk(600_000)
    record.start()
    with pytest.raises(
        DiskFullError, match=r"No space left to write .*chunk-0-\d+\.bin \([\d,]+ bytes needed\)"
    ):
        ld.write_dataset((big(i) for i in range(100)), disk / "ds", chunk_size=10)
    record.failed()
    assert _temporaries(disk) == []
    assert not (disk / "ds" / "index.json").exists()
    assert not list((disk / "ds").glob("chunk-*"))  # what was written is removed again
    record("DiskFullError naming the chunk and bytes; no temporary or partial chunk left")


@pytest.mark.fault("full disk: optimize (2 workers)")
def test_optimize_on_a_full_disk(small_disk, record):
    disk = small_disk(600_000)
    record.start()
    with pytest.raises(
        ProcessingError, match=r"DiskFullError: No space left to write .*chunk-\d+-\d+\.bin"
    ):
        ld.optimize(
            big, list(range(100)), str(disk / "ds"), chunk_size=10, num_workers=2, verbose=False
        )
    record.failed()
    assert _temporaries(disk) == []
    assert not (disk / "ds" / "index.json").exists()
    assert not list((disk / "ds").glob("chunk-*"))
    record("ProcessingError with the worker's DiskFullError; output cleaned, no index")


@pytest.mark.fault("full disk: append to an existing dataset")
def test_append_on_a_full_disk_keeps_the_dataset(small_disk, record):
    disk = small_disk(900_000)
    ld.optimize(big, list(range(20)), str(disk / "ds"), chunk_size=10, num_workers=1, verbose=False)
    before = content_snapshot(disk / "ds")
    record.start()
    with pytest.raises(ProcessingError, match="No space left"):
        ld.optimize(
            big,
            list(range(20, 100)),
            str(disk / "ds"),
            chunk_size=10,
            num_workers=2,
            mode="append",
            verbose=False,
        )
    record.failed()
    assert content_snapshot(disk / "ds") == before
    ids = _ids(disk / "ds")
    record(
        "existing dataset byte-identical",
        lost=len(set(range(20)) - set(ids)),
        duplicated=len(ids) - len(set(ids)),
    )


@pytest.mark.fault("full disk: overwrite")
def test_overwrite_on_a_full_disk_keeps_the_old_dataset(small_disk, record):
    disk = small_disk(900_000)
    ld.optimize(big, list(range(20)), str(disk / "ds"), chunk_size=10, num_workers=1, verbose=False)
    before = content_snapshot(disk / "ds")
    with pytest.raises(ProcessingError, match="No space left"):
        ld.optimize(
            big,
            list(range(100)),
            str(disk / "ds"),
            chunk_size=10,
            num_workers=2,
            mode="overwrite",
            verbose=False,
        )
    assert content_snapshot(disk / "ds") == before
    record("old dataset byte-identical; staging removed", lost=20 - len(_ids(disk / "ds")))


@pytest.mark.fault("full disk: merge_datasets")
def test_merge_on_a_full_disk(tmp_path, small_disk, record):
    for part in ("a", "b"):
        ld.write_dataset((big(i) for i in range(30)), tmp_path / part, chunk_size=10)
    disk = small_disk(700_000)
    record.start()
    with pytest.raises(DiskFullError, match=r"No space left to write .*chunk-0-\d+\.bin"):
        ld.merge_datasets([tmp_path / "a", tmp_path / "b"], disk / "merged")
    record.failed()
    assert _temporaries(disk) == []
    assert not (disk / "merged" / "index.json").exists()
    record("DiskFullError naming the chunk; no index published, no temporary left")


@pytest.mark.fault("full disk: cache of a remote dataset")
def test_a_full_cache_disk(small_disk, record):
    url = f"memory://full-{uuid.uuid4().hex[:8]}/ds"
    ld.write_dataset((big(i) for i in range(60)), url, chunk_size=10)
    cache = small_disk(300_000)
    ds = ld.StreamingDataset(url, cache_dir=str(cache), max_cache_size=10**9)  # beyond the disk
    seen = []
    record.start()
    with pytest.raises(DiskFullError, match=r"No space left to write .*chunk-0-\d+\.bin"):
        seen.extend(sample["id"] for sample in ds)
    record.failed()
    assert _temporaries(cache) == []
    wrong = sum(1 for i, sample_id in enumerate(seen) if sample_id != i)
    record("DiskFullError naming the cached chunk; no partial file in the cache", wrong=wrong)


@pytest.mark.fault("full disk: decompressing a local dataset into the cache")
def test_a_full_cache_disk_while_decompressing(tmp_path, small_disk, record):
    dataset = ld.write_dataset(
        (big(i) for i in range(60)), tmp_path / "ds", chunk_size=10, compression="zstd"
    )
    cache = small_disk(300_000)
    stream = ld.StreamingDataset(dataset, cache_dir=str(cache), max_cache_size=10**9)
    record.start()
    with pytest.raises(DiskFullError, match="No space left"):
        list(stream)
    record.failed()
    assert _temporaries(cache) == []
    record("DiskFullError; the dataset itself untouched", lost=60 - len(_ids(dataset)))


def _memory_chunks() -> int:
    """The chunks this process holds in memory (``memfd``s named ``chunk-...``)."""
    found = 0
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            found += os.readlink(f"/proc/self/fd/{name}").startswith("/memfd:chunk-")
    return found


@pytest.mark.fault("full disk: cache written around the file cache (LITDATA_DIRECT_CACHE=1)")
@pytest.mark.skipif(not memory_supported(), reason="no memfd_create here")
def test_a_full_cache_disk_around_the_file_cache(small_disk, record, monkeypatch):
    monkeypatch.setenv("LITDATA_DIRECT_CACHE", "1")
    url = f"memory://direct-{uuid.uuid4().hex[:8]}/ds"
    ld.write_dataset((big(i) for i in range(400)), url, chunk_bytes="3MB")  # ranged, landed
    cache = small_disk(5_000_000)  # room for the first chunk, not the second
    ds = ld.StreamingDataset(url, cache_dir=str(cache), max_cache_size=10**9)
    seen = []
    record.start()
    with pytest.raises(DiskFullError, match=r"No space left to write .*chunk-0-\d+\.bin") as raised:
        seen.extend(sample["id"] for sample in ds)
    record.failed()
    assert isinstance(raised.value.__cause__, OSError)  # the write's own error, not another
    assert _temporaries(cache) == []
    assert _memory_chunks() <= 1  # the chunk that did not fit let its memory go
    assert len(seen) >= 100  # the first chunk was read, from memory
    wrong = sum(1 for i, sample_id in enumerate(seen) if sample_id != i)
    record("DiskFullError naming the cached chunk; no partial file, its memory let go", wrong=wrong)


@pytest.mark.fault("full disk: a cache file written around the file cache")
def test_a_direct_write_on_a_full_disk_is_the_disks_own_error(small_disk, tmp_path, record):
    source = tmp_path / "chunk"
    source.write_bytes(os.urandom(3 << 20))
    disk = small_disk(1 << 20)
    record.start()
    with pytest.raises(OSError, match="No space left") as raised:  # not the map's BufferError
        write_direct(source, disk / "copy")
    record.failed()
    assert raised.value.errno == errno.ENOSPC
    record("ENOSPC from the write itself; the memory map closed cleanly")
