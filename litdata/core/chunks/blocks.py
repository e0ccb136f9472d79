"""Block checksums: one digest per 64 KiB of a chunk file, so a ranged read is verified too.

A chunk's checksum covers the whole file, which a reader of one item by byte ranges never
holds. Our writer therefore also records, for each uncompressed chunk larger than one block,
the XXH3-64 digest of every ``BLOCK_SIZE`` bytes of the file as stored, in the chunk's index
entry (``"block_checksums": "xxh3:65536:<base64 of the little-endian digests>"``; LitData
ignores the key). A ranged read widens its range to whole blocks and checks each one before
any byte of it is used. A chunk that fits in one block needs no table: its XXH3 checksum is
the digest of its only block.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

import xxhash

from litdata.core.chunks.checksum import Buffer
from litdata.core.errors import ChunkCorruptError, DatasetFormatError
from litdata.core.index import ChunkEntry

__all__ = ["BLOCK_KEY", "BLOCK_SIZE", "BlockCheck", "BlockTable", "block_checksums"]

#: The chunk entry key that holds the table.
BLOCK_KEY = "block_checksums"
#: Bytes per block.
BLOCK_SIZE = 1 << 16
_ALGORITHM = "xxh3"
_DIGEST = 8
#: Characters of a malformed table an error message shows.
_SHOWN = 60


def block_checksums(data: Buffer, block: int = BLOCK_SIZE) -> str | None:
    """The table of a chunk file's bytes as stored, or ``None`` when it fits in one block."""
    if len(data) <= block:
        return None
    view = memoryview(data)
    digests = b"".join(
        xxhash.xxh3_64_intdigest(view[start : start + block]).to_bytes(_DIGEST, "little")
        for start in range(0, len(view), block)
    )
    return f"{_ALGORITHM}:{block}:{base64.b64encode(digests).decode()}"


@dataclass(frozen=True)
class BlockTable:
    """The block digests of one chunk file.

    Attributes:
        block: Bytes per block.
        size: The file's size.
        digests: The digests, ``8`` bytes each, little-endian.
    """

    block: int
    size: int
    digests: bytes

    @classmethod
    def of(cls, entry: ChunkEntry, where: str) -> BlockTable | None:
        """The table of ``entry``, or ``None`` when its ranged reads cannot be verified.

        Args:
            entry: The chunk's index entry (``chunk_bytes`` is the file's size).
            where: The index, for messages.

        Raises:
            DatasetFormatError: The entry's table is malformed.
        """
        raw = entry.extra.get(BLOCK_KEY)
        if raw is None:
            return cls._single(entry)
        return cls._parse(raw, entry, where)

    @classmethod
    def _single(cls, entry: ChunkEntry) -> BlockTable | None:
        algorithm, _, digest = (entry.checksum or "").partition(":")
        if algorithm != _ALGORITHM or entry.chunk_bytes > BLOCK_SIZE:
            return None
        try:
            value = int(digest, 16).to_bytes(_DIGEST, "little")
        except (ValueError, OverflowError):
            return None  # a malformed checksum: the whole-file check reports it
        return cls(BLOCK_SIZE, entry.chunk_bytes, value)

    @classmethod
    def _parse(cls, raw: Any, entry: ChunkEntry, where: str) -> BlockTable:
        field = f"the {BLOCK_KEY} of {entry.filename}"
        try:
            algorithm, block_text, encoded = str(raw).split(":", 2)
            block = int(block_text)
            digests = base64.b64decode(encoded, validate=True)
        except (ValueError, binascii.Error):
            algorithm, block, digests = "", 0, b""
        count = -(-entry.chunk_bytes // block) if block > 0 else -1
        if algorithm != _ALGORITHM or block <= 0 or len(digests) != _DIGEST * count:
            shown = str(raw) if len(str(raw)) < _SHOWN else f"{str(raw)[:_SHOWN]}..."
            raise DatasetFormatError(
                f"{where}: {field} is {shown!r}, not the {_ALGORITHM} digests of the "
                f"{entry.chunk_bytes:,} bytes' blocks. The index is malformed; re-create the "
                f"dataset."
            )
        return cls(block, entry.chunk_bytes, digests)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The whole blocks covering bytes ``[start, end)`` of the file."""
        first = start - start % self.block
        last = min(self.size, -(-end // self.block) * self.block)
        return first, max(first, last)

    def verify(self, data: Buffer, start: int, where: str) -> None:
        """Check ``data``, the file's bytes from block boundary ``start`` on (whole blocks).

        Raises:
            ChunkCorruptError: A block differs from its digest (or is cut short).
        """
        view = memoryview(data)
        for offset in range(0, len(view), self.block):
            number = (start + offset) // self.block
            piece = view[offset : offset + self.block]
            expected = self.digests[_DIGEST * number : _DIGEST * (number + 1)]
            actual = xxhash.xxh3_64_intdigest(piece).to_bytes(_DIGEST, "little")
            whole = len(piece) == min(self.block, self.size - number * self.block)
            if actual != expected or not whole:
                raise ChunkCorruptError(
                    f"Chunk {where} is corrupt: bytes {start + offset:,}..."
                    f"{start + offset + len(piece):,} fail their block checksum. The item is "
                    f"not returned. Re-upload or re-create the dataset (`litdata verify` checks "
                    f"every chunk)."
                )

    def checker(self, start: int, end: int, where: str) -> BlockCheck:
        """A check of bytes ``[start, end)`` (block-aligned) as they arrive, in pieces."""
        return BlockCheck(self, start, end, where)


class BlockCheck:
    """Checks the bytes ``[start, end)`` of a chunk file block by block as pieces arrive.

    Each piece is hashed as it comes (while it is in the CPU's cache), each block compared
    with its digest when its last byte arrives: the bytes are checked without a second pass
    and without being held. A piece at ``start`` again starts the check over (a retried
    request).

    Args:
        table: The chunk's block digests.
        start: The first byte (a block boundary).
        end: The byte after the last (a block boundary, or the file's end).
        where: The chunk, for messages.
    """

    def __init__(self, table: BlockTable, start: int, end: int, where: str) -> None:
        if start % table.block or (end % table.block and end != table.size):
            raise ValueError(f"bytes [{start}, {end}) of {where} are not whole blocks")
        self.table = table
        self.start = start
        self.end = end
        self.where = where
        self.at = start
        self._hash = xxhash.xxh3_64()

    def update(self, offset: int, data: Buffer) -> None:
        """Hash the piece of the file at ``offset``; check each block it completes.

        Raises:
            ChunkCorruptError: A block differs from its digest.
            ValueError: The piece is not the next one (nor the first again), or runs past
                ``end``.
        """
        if offset != self.at:
            if offset != self.start:
                raise ValueError(f"{self.where}: byte {offset:,} arrived, {self.at:,} expected")
            self.at = self.start
            self._hash.reset()
        view = memoryview(data)
        if self.at + len(view) > self.end:
            raise ValueError(f"{self.where}: bytes past {self.end:,} arrived")
        block = self.table.block
        while view:
            boundary = min(self.block_end(self.at), self.end)
            piece = view[: boundary - self.at]
            self._hash.update(piece)
            self.at += len(piece)
            view = view[len(piece) :]
            if self.at == boundary:
                number = (self.at - 1) // block
                expected = self.table.digests[_DIGEST * number : _DIGEST * (number + 1)]
                if self._hash.intdigest().to_bytes(_DIGEST, "little") != expected:
                    raise ChunkCorruptError(
                        f"Chunk {self.where} is corrupt: bytes {number * block:,}..."
                        f"{self.at:,} fail their block checksum. The item is not returned. "
                        f"Re-upload or re-create the dataset (`litdata verify` checks every "
                        f"chunk)."
                    )
                self._hash.reset()

    def block_end(self, offset: int) -> int:
        """The end of the block holding byte ``offset`` (the file's end for the last one)."""
        return min(self.table.size, (offset // self.table.block + 1) * self.table.block)

    @property
    def done(self) -> bool:
        """Whether every byte arrived and every block passed."""
        return self.at == self.end
