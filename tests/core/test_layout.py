import struct

import pytest

from litdata.core.chunks.layout import (
    chunk_header,
    header_size,
    pack_chunk,
    read_offsets,
    validate_header,
)
from litdata.core.errors import ChunkCorruptError


def test_chunk_layout_is_litdatas():
    data = pack_chunk([b"ab", b"", b"cde"])
    count, *offsets = struct.unpack_from("<5I", data)
    assert count == 3
    assert offsets == [20, 22, 22, 25]
    assert data[20:] == b"abcde"
    assert read_offsets(data, 2) == (22, 25)
    assert header_size(3) == 20


def test_valid_header_passes():
    data = pack_chunk([b"x" * 10] * 4)
    validate_header(data, num_items=4, file_size=len(data), name="c.bin")


def test_item_count_mismatch_is_named():
    data = pack_chunk([b"x"] * 3)
    with pytest.raises(ChunkCorruptError, match=r"c\.bin says it holds 3 items.*lists 2"):
        validate_header(data, num_items=2, file_size=len(data), name="c.bin")


def test_truncated_chunk_is_named():
    data = pack_chunk([b"x" * 100] * 3)
    with pytest.raises(ChunkCorruptError, match=r"c\.bin is corrupt or truncated"):
        validate_header(data[:-10], num_items=3, file_size=len(data) - 10, name="c.bin")
    with pytest.raises(ChunkCorruptError, match="header alone"):
        validate_header(data[:8], num_items=3, file_size=8, name="c.bin")


def test_offsets_cannot_exceed_32_bits():
    with pytest.raises(OverflowError, match="4 GiB"):
        chunk_header([2**31, 2**31])
