"""Bounded decompression in the codecs: streams that stop at their limit and allocate as they go.

The chunk compressors pass :class:`CompressorContract` (tests/plugins/test_compression.py);
here are the pieces under them (``fill``, ``gather``), the zstd frames LitData writes, and
the MDS shard codecs (gz, bz2, zstd, snappy, brotli).
"""

from __future__ import annotations

import bz2
import gzip
import io
import sys
import tracemalloc
from types import SimpleNamespace

import brotli
import pytest
import snappy
import zstandard

from litdata.core.decompression import OutputLimitError, fill, gather
from litdata.core.errors import DatasetFormatError
from litdata.plugins.compression.zstd import decompress_zstd
from litdata.plugins.formats.mds.shards import decompressor

PLAIN = bytes(range(256)) * 4000  # 1,024,000 bytes


def _peak(function, *args):
    """``function(*args)``'s result (or error) and the most memory it took."""
    tracemalloc.start()
    try:
        try:
            result = function(*args)
        except ValueError as error:
            result = error
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_fill_reads_a_stream_to_its_end():
    assert fill(io.BytesIO(PLAIN).readinto, len(PLAIN), codec="test", compressed=10) == PLAIN


def test_fill_refuses_a_stream_one_byte_too_long():
    with pytest.raises(OutputLimitError, match="more than 1,023,999 bytes"):
        fill(io.BytesIO(PLAIN).readinto, len(PLAIN) - 1, codec="test", compressed=10)


def test_fill_stops_at_the_declared_size_without_reading_on():
    stream = io.BytesIO(PLAIN)
    assert (
        fill(stream.readinto, len(PLAIN), codec="test", compressed=10, declared=1000)
        == (PLAIN[:1000])
    )
    assert stream.tell() == 1000


def test_fill_never_allocates_its_bound_ahead_of_the_output():
    result, peak = _peak(
        lambda: fill(io.BytesIO(b"x" * 1000).readinto, 1 << 30, codec="test", compressed=1000)
    )
    assert result == b"x" * 1000
    assert peak < 1 << 20


def test_gather_asks_for_no_piece_past_the_bound():
    asked = []

    def pieces():
        for number in range(100):
            asked.append(number)
            yield b"x" * 1000

    with pytest.raises(OutputLimitError):
        gather(pieces(), 2500, codec="test")
    assert asked == [0, 1, 2]


@pytest.mark.parametrize("content_size", [True, False], ids=["size declared", "no size"])
def test_zstd_frames_with_or_without_a_content_size_read(content_size):
    frame = zstandard.ZstdCompressor(write_content_size=content_size).compress(PLAIN)
    assert decompress_zstd(frame, len(PLAIN)) == PLAIN
    with pytest.raises(OutputLimitError):
        decompress_zstd(frame, len(PLAIN) - 1)


def test_zstd_ignores_what_follows_a_frame_that_declares_its_size():
    frame = zstandard.ZstdCompressor().compress(PLAIN)
    assert decompress_zstd(frame + b"trailing bytes", len(PLAIN)) == PLAIN


def test_a_zstd_frame_declaring_too_much_is_refused_before_decompressing():
    frame = zstandard.ZstdCompressor().compress(bytes(256 << 20))  # about 8 KB
    error, peak = _peak(decompress_zstd, frame, 1 << 20)
    assert isinstance(error, OutputLimitError)
    assert "declares 268,435,456 plain bytes" in str(error)
    assert peak < 1 << 20


MDS = {
    "gz": gzip.compress,
    "bz2": bz2.compress,
    "zstd": lambda data: zstandard.ZstdCompressor().compress(data),
    "snappy": snappy.compress,
    "br": lambda data: brotli.compress(data, quality=1),
}


@pytest.mark.parametrize("codec", list(MDS))
def test_mds_codecs_read_within_the_raw_size_and_refuse_past_it(codec):
    decompress = decompressor(codec, "shard.00000.mds")
    stored = MDS[codec](PLAIN)
    assert decompress(stored, len(PLAIN)) == PLAIN
    assert decompress(stored, len(PLAIN) + 100) == PLAIN
    with pytest.raises(OutputLimitError):
        decompress(stored, len(PLAIN) - 1)


@pytest.mark.parametrize("codec", list(MDS))
def test_an_mds_bomb_is_refused_within_a_few_megabytes(codec):
    bomb = MDS[codec](bytes(64 << 20))
    error, peak = _peak(decompressor(codec, "shard.00000.mds"), bomb, 1 << 20)
    assert isinstance(error, OutputLimitError), error
    assert peak < len(bomb) + (16 << 20)


def test_a_snappy_length_header_past_the_bound_is_refused_before_decoding():
    header_only = bytes([0x80, 0x80, 0x80, 0x80, 0x0C])  # declares 3 GiB, holds nothing
    with pytest.raises(OutputLimitError, match="declares 3,221,225,472 plain bytes"):
        decompressor("snappy", "shard.00000.mds")(header_only, 1 << 20)
    with pytest.raises(ValueError, match="valid length"):
        decompressor("snappy", "shard.00000.mds")(b"\xff" * 5, 1 << 20)


def test_a_brotli_too_old_to_bound_its_output_is_named(monkeypatch):
    # brotli < 1.2 (no output limit) cannot be installed beside 1.2 here: a stand-in module.
    old = SimpleNamespace(Decompressor=object, __version__="1.1.0")
    monkeypatch.setitem(sys.modules, "brotli", old)
    with pytest.raises(DatasetFormatError, match=r"brotli 1\.1\.0 cannot bound.*brotli>=1\.2"):
        decompressor("br", "shard.00000.mds.br")
