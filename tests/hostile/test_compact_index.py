"""The compact index (``index.compact``) is as hostile as ``index.json``, and derived from it.

A stale one (``index.json`` rewritten, the compact file left over), a corrupt one (truncated,
edited) or a forged one (consistent, but saying other things than ``index.json``) must never
give wrong samples: it is passed over and rebuilt from ``index.json``, or what it says fails
the checks every index passes (a clear error, nothing read outside the dataset).
"""

from __future__ import annotations

import dataclasses
import os
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hostile import forge

import litdata as ld
from litdata.core.compact import COMPACT_FILENAME, compact_bytes, index_digest
from litdata.core.errors import ChunkCorruptError, DatasetFormatError
from litdata.core.index import load_index
from litdata.engine.cache.directory import cache_home

HEADER = 72  # the header, padded to 8 bytes
CHUNKS = forge.COUNT // 50


def _cached(folder: Path) -> Path:
    return cache_home(str(folder.resolve())) / COMPACT_FILENAME


def _all_right(folder: Path) -> list[int]:
    data = ld.StreamingDataset(str(folder))
    items = [data[i] for i in range(len(data))]
    assert all(forge.is_right(item) for item in items)
    return [item["id"] for item in items]


@pytest.mark.fault("compact index stale: index.json rewritten (chunks reordered), old one left")
def test_a_stale_compact_index_is_rebuilt_never_used(tmp_path, record):
    folder = forge.dataset(tmp_path / "ds")
    old = (folder / COMPACT_FILENAME).read_bytes()
    forge.edit_index(folder, lambda index: index["chunks"].reverse())
    (folder / COMPACT_FILENAME).write_bytes(old)  # what the rewrite left behind
    record.start()
    ids = _all_right(folder)
    assert ids[:50] == list(range(250, 300)), "the order of the index.json now there"
    assert len(ids) == forge.COUNT
    assert _cached(folder).exists(), "rebuilt into the cache, the dataset left as it is"
    assert (folder / COMPACT_FILENAME).read_bytes() == old
    record("passed over (its digest is another index.json's), rebuilt in the cache")


def _poke(offset: int, value: int) -> Callable[[bytearray], None]:
    def edit(data: bytearray) -> None:
        struct.pack_into("<q", data, offset, value)

    return edit


#: Corruptions of a compact index whose digest still matches index.json.
CORRUPTIONS: dict[str, Callable[[bytearray], None]] = {
    "truncated": lambda data: data.__delitem__(slice(len(data) - 9, None)),
    "bad magic": lambda data: data.__setitem__(slice(0, 8), b"NOTCOMPA"),
    "future version": lambda data: struct.pack_into("<I", data, 8, 99),
    "chunk count larger than the file": lambda data: struct.pack_into("<Q", data, 16, 1 << 24),
    "negative chunk_size": _poke(HEADER, -5),
    "cumulative counts that do not add up": _poke(HEADER + 8 * 4 * CHUNKS + 8, 7),
    "name offsets leaving their blob": _poke(HEADER + 8 * (5 * CHUNKS + 1) + 8, 1 << 40),
    "flags out of range": _poke(HEADER + 8 * 3 * CHUNKS, 9),
}


@pytest.mark.fault("compact index corrupt beside index.json (digest still matching)")
@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_a_corrupt_compact_index_is_passed_over(tmp_path, record, corruption, caplog):
    record.fault += f": {corruption}"
    folder = forge.dataset(tmp_path / "ds")
    data = bytearray((folder / COMPACT_FILENAME).read_bytes())
    CORRUPTIONS[corruption](data)
    (folder / COMPACT_FILENAME).write_bytes(bytes(data))
    record.start()
    assert sorted(_all_right(folder)) == list(range(forge.COUNT))
    assert "Not using the compact index" in caplog.text
    assert str(folder / COMPACT_FILENAME) in caplog.text
    record("warned naming the file; rebuilt from index.json; right samples")


@pytest.mark.fault("compact index corrupt in the cache (a LitData dataset's)")
def test_a_corrupt_cached_compact_index_is_rebuilt(tmp_path, record):
    folder = forge.dataset(tmp_path / "ds")
    (folder / COMPACT_FILENAME).unlink()  # as LitData writes a dataset: no compact index
    _all_right(folder)
    cached = _cached(folder)
    good = cached.read_bytes()
    cached.write_bytes(good[: len(good) // 2])
    record.start()
    assert sorted(_all_right(folder)) == list(range(forge.COUNT))
    assert cached.read_bytes() == good, "rebuilt, the same as before"
    record("rebuilt from index.json; right samples")


@pytest.mark.fault("compact index forged: consistent, a chunk named outside the dataset")
@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/passwd", "a\\..\\b.bin"])
def test_a_forged_chunk_name_is_refused(tmp_path, record, name):
    record.fault += f": {name!r}"
    folder = forge.dataset(tmp_path / "ds")
    index = load_index(folder)
    chunks = list(index.chunks)
    chunks[0] = dataclasses.replace(chunks[0], filename=name)
    digest = index_digest((folder / "index.json").read_bytes())
    forged = compact_bytes(dataclasses.replace(index, chunks=tuple(chunks)), digest)
    (folder / COMPACT_FILENAME).write_bytes(forged)
    before = forge.files_outside(tmp_path, [folder])
    record.start()
    data = ld.StreamingDataset(str(folder))
    with pytest.raises(DatasetFormatError, match="filename") as error:
        data[0]
    record.failed()
    assert COMPACT_FILENAME in str(error.value)
    assert forge.is_right(data[forge.COUNT - 1]), "the other chunks read as they are"
    assert forge.files_outside(tmp_path, [folder]) == before
    record("DatasetFormatError naming the compact file and the field; nothing read there")


@pytest.mark.fault("compact index forged: consistent, chunk sizes other than index.json's")
def test_forged_chunk_sizes_give_an_error_not_wrong_samples(tmp_path, record):
    folder = forge.dataset(tmp_path / "ds")
    index = load_index(folder)
    chunks = [dataclasses.replace(c, chunk_size=c.chunk_size - 1) for c in index.chunks]
    digest = index_digest((folder / "index.json").read_bytes())
    forged = compact_bytes(dataclasses.replace(index, chunks=tuple(chunks)), digest)
    (folder / COMPACT_FILENAME).write_bytes(forged)
    record.start()
    data = ld.StreamingDataset(str(folder))
    with pytest.raises(ChunkCorruptError):
        data[0]
    record.failed()
    record("ChunkCorruptError: the chunk's header disagrees; no wrong sample")


def test_the_cache_is_not_written_when_the_dataset_has_a_fresh_one(tmp_path):
    folder = forge.dataset(tmp_path / "ds")
    _all_right(folder)
    assert not _cached(folder).exists()
    assert os.path.getsize(folder / COMPACT_FILENAME) > HEADER
    sizes = np.asarray(ld.StreamingDataset(str(folder))._reader.chunk_sizes)
    assert sizes.tolist() == [50] * CHUNKS
