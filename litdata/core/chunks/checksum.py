"""Chunk checksums: CRC-32 of a chunk file's bytes as stored, recorded in ``index.json``."""

from __future__ import annotations

import mmap
import zlib

from litdata.core.errors import ChunkCorruptError
from litdata.core.index import ChunkEntry

__all__ = ["checksum_of", "verify_checksum"]


def checksum_of(data: bytes | bytearray | memoryview | mmap.mmap) -> str:
    """The checksum recorded for a chunk file's bytes (``"crc32:<8 hex digits>"``)."""
    return f"crc32:{zlib.crc32(data):08x}"


def verify_checksum(data: bytes | memoryview, entry: ChunkEntry, where: str) -> None:
    """Check ``data`` (a chunk file's bytes) against the checksum in its index entry.

    Chunks written by LitData carry no checksum and pass unchecked.

    Raises:
        ChunkCorruptError: The checksum differs, or its algorithm is unknown.
    """
    if entry.checksum is None:
        return
    algorithm = entry.checksum.partition(":")[0]
    if algorithm != "crc32":
        raise ChunkCorruptError(
            f"{where} records a {algorithm!r} checksum, which this litdata cannot verify; "
            f"upgrade litdata."
        )
    actual = checksum_of(data)
    if actual != entry.checksum:
        raise ChunkCorruptError(
            f"Chunk {where} is corrupt: its checksum is {actual} but index.json records "
            f"{entry.checksum}. Re-download or re-create the dataset."
        )
