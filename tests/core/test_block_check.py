"""Block checksums checked as the pieces of a part arrive: no buffer, no second pass."""

from __future__ import annotations

import os

import pytest

from litdata.core.chunks.blocks import BLOCK_KEY, BlockTable, block_checksums
from litdata.core.errors import ChunkCorruptError
from litdata.core.index import ChunkEntry

BLOCK = 1 << 16


def _table(data: bytes) -> BlockTable:
    entry = ChunkEntry(
        filename="chunk-0-0.bin",
        chunk_size=1,
        chunk_bytes=len(data),
        extra={BLOCK_KEY: block_checksums(data)},
    )
    table = BlockTable.of(entry, "test index")
    assert table is not None
    return table


def _feed(check, data: bytes, start: int, piece: int) -> None:
    for at in range(0, len(data), piece):
        check.update(start + at, data[at : at + piece])


@pytest.mark.parametrize("piece", [1000, BLOCK, BLOCK + 1, 3 * BLOCK + 17, 1 << 22])
def test_any_piece_sizes_pass_and_finish_the_part(piece):
    data = os.urandom(5 * BLOCK + 123)
    table = _table(data)
    start, end = BLOCK, len(data)  # a part from the second block to the file's short end
    check = table.checker(start, end, "chunk")
    _feed(check, data[start:end], start, piece)
    assert check.done


def test_a_flipped_byte_fails_its_block_before_the_part_ends():
    data = os.urandom(4 * BLOCK)
    table = _table(data)
    garbled = bytearray(data)
    garbled[BLOCK + 5] ^= 1
    check = table.checker(0, len(data), "s3://b/chunk")
    check.update(0, bytes(garbled[:BLOCK]))
    with pytest.raises(ChunkCorruptError, match=r"s3://b/chunk.*65,536\.\.\.131,072"):
        check.update(BLOCK, bytes(garbled[BLOCK : 2 * BLOCK]))


def test_a_retried_request_starts_the_check_over():
    data = os.urandom(3 * BLOCK)
    table = _table(data)
    check = table.checker(0, len(data), "chunk")
    check.update(0, data[:1000])
    check.update(1000, b"\0" * 500)  # garbage that a cut attempt left half a block of
    _feed(check, data, 0, 7000)  # the retry: from the part's first byte again
    assert check.done


def test_a_gap_or_an_overrun_is_refused():
    data = os.urandom(2 * BLOCK)
    check = _table(data).checker(0, BLOCK, "chunk")
    check.update(0, data[:100])
    with pytest.raises(ValueError, match="expected"):
        check.update(200, data[200:300])
    with pytest.raises(ValueError, match="past"):
        check.update(100, data[100 : BLOCK + 1])


def test_an_incomplete_part_is_not_done_and_parts_are_whole_blocks():
    data = os.urandom(2 * BLOCK)
    table = _table(data)
    check = table.checker(0, 2 * BLOCK, "chunk")
    check.update(0, data[: BLOCK + 10])
    assert not check.done
    with pytest.raises(ValueError, match="whole blocks"):
        table.checker(10, BLOCK, "chunk")
