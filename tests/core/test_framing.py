"""Bounded unframing: each frame is decompressed with the bound its layout gives, and checked.

The frames are real: litdata's whole-file zstd chunks and LitData 0.2.76's ``batch`` and
``sample`` chunks (``tests/data/litdata-0.2.76``); the codec is the real zstd one, wrapped to
record the bound the core hands it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from expected import fixture_dir

import litdata as ld
from litdata.core.chunks import framing
from litdata.core.chunks.framing import FRAMED_FLOOR, FRAMED_RATIO, framed_limit, unframe
from litdata.core.errors import ChunkCorruptError
from litdata.core.index import ChunkEntry
from litdata.plugins.compression.zstd import ZstdCompressor


class Recording:
    """The zstd codec, recording the bound of each call."""

    def __init__(self) -> None:
        self.bounds: list[int] = []

    def __call__(self, data: bytes | memoryview, max_size: int) -> bytearray:
        self.bounds.append(max_size)
        return ZstdCompressor().decompress(data, max_size)


def _chunk(folder: Path, position: int = 0) -> tuple[bytes, ChunkEntry]:
    index = json.loads((folder / "index.json").read_text())
    entry = ChunkEntry(**index["chunks"][position])
    return (folder / entry.filename).read_bytes(), entry


def test_a_whole_file_frame_is_bounded_by_the_indexed_plain_size(tmp_path):
    folder = Path(ld.write_dataset(range(10), tmp_path / "ds", chunk_size=10, compression="zstd"))
    data, entry = _chunk(folder)
    decompress = Recording()
    plain = unframe(data, entry, None, decompress, "chunk-0-0")
    assert decompress.bounds == [entry.chunk_bytes] == [len(plain)]


def test_a_codec_that_ignores_its_bound_is_caught(tmp_path):
    folder = Path(ld.write_dataset(range(10), tmp_path / "ds", chunk_size=10, compression="zstd"))
    data, entry = _chunk(folder)
    with pytest.raises(ChunkCorruptError, match=r"chunk-0-0.*ignores the bound"):
        unframe(data, entry, None, lambda data, max_size: bytes(max_size + 1), "chunk-0-0")


def test_a_frame_past_its_bound_is_an_error_naming_the_chunk_and_the_bound(tmp_path):
    folder = Path(ld.write_dataset(range(10), tmp_path / "ds", chunk_size=10, compression="zstd"))
    data, entry = _chunk(folder)
    smaller = ChunkEntry(entry.filename, entry.chunk_size, entry.chunk_bytes - 1)
    with pytest.raises(ChunkCorruptError) as caught:
        unframe(data, smaller, None, ZstdCompressor().decompress, "chunk-0-0")
    message = str(caught.value)
    assert f"Chunk chunk-0-0 failed to decompress (at most {entry.chunk_bytes - 1:,}" in message
    assert "index.json records" in message


def test_batch_frames_are_bounded_by_their_frame_table():
    data, entry = _chunk(fixture_dir("zstd_frames"))
    decompress = Recording()
    unframe(data, entry, "batch", decompress, "chunk-0-0.bin")
    assert decompress.bounds == [249, 253, 128]  # the table's plain sizes (tests/interop/NOTES)


def test_a_frame_table_declaring_more_than_the_framed_limit_is_refused_unread(monkeypatch):
    data, entry = _chunk(fixture_dir("zstd_frames"))  # 384 bytes that declare 630
    monkeypatch.setattr(framing, "FRAMED_RATIO", 1)
    monkeypatch.setattr(framing, "FRAMED_FLOOR", 0)
    decompress = Recording()
    with pytest.raises(ChunkCorruptError, match=r"declares 630 plain bytes.*inflate to 384"):
        unframe(data, entry, "batch", decompress, "chunk-0-0.bin")
    assert decompress.bounds == []


def test_sample_level_items_share_the_framed_limit(monkeypatch):
    data, entry = _chunk(fixture_dir("zstd_sample"))  # 334 bytes: items of 124, 125, 126, 127
    monkeypatch.setattr(framing, "FRAMED_RATIO", 1)
    monkeypatch.setattr(framing, "FRAMED_FLOOR", 0)
    decompress = Recording()
    with pytest.raises(ChunkCorruptError, match="what is left"):
        unframe(data, entry, "sample", decompress, "chunk-0-0.bin")
    header = 4 * (entry.chunk_size + 2)
    assert decompress.bounds == [334 - header, 334 - header - 124, 334 - header - 124 - 125]


def test_the_framed_limit():
    assert framed_limit(0) == FRAMED_FLOOR
    assert framed_limit(1 << 20) == FRAMED_RATIO << 20
    assert framed_limit(1 << 40) == (1 << 32) - 1  # a chunk's offsets are 32-bit


def test_a_frame_table_longer_than_the_file_is_refused_before_it_is_read():
    data, entry = _chunk(fixture_dir("zstd_frames"))
    lying = bytearray(data)
    lying[20:24] = b"\xff\xff\xff\xff"  # the frame count
    with pytest.raises(ChunkCorruptError, match="too short for the 4,294,967,295 frames"):
        unframe(bytes(lying), entry, "batch", Recording(), "chunk-0-0.bin")
