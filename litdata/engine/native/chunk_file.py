"""``ChunkFile``: one plain chunk, memory-mapped read-only (or held in memory), header checked."""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from typing import ClassVar

from litdata.core.chunks.layout import validate_header
from litdata.core.dataset_file import read_regular
from litdata.core.index import ChunkEntry
from litdata.engine.mapped_file import MappedFile

__all__ = ["ChunkFile"]

_OFFSETS = struct.Struct("<II")


class ChunkFile(MappedFile):
    """One plain chunk (LitData's layout), its header checked against the index.

    Args:
        path: The local, plain chunk file (mapped read-only; never modified).
        entry: The chunk's index entry.
        data: The chunk's bytes when they live only in memory (a decrypted chunk); ``path``
            then only names it in messages.

    The cache checks a chunk's stored bytes against its checksum before a reader opens it.
    """

    __slots__ = ("entry",)
    kind: ClassVar[str] = "Chunk"

    def __init__(
        self, path: str | os.PathLike[str], entry: ChunkEntry, data: bytes | None = None
    ) -> None:
        super().__init__(path, data)
        self.entry = entry
        validate_header(
            self.view, num_items=entry.chunk_size, file_size=len(self.view), name=str(self.path)
        )

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        entry: ChunkEntry,
        decrypt: Callable[[bytes], bytes] | None = None,
    ) -> ChunkFile:
        """Open a plain chunk file, or decrypt a chunk-level encrypted one into memory."""
        if decrypt is None:
            return cls(path, entry)
        try:
            stored = read_regular(path)
        except FileNotFoundError:
            raise cls.missing(path) from None
        return cls(path, entry, decrypt(stored))

    def item(self, position: int) -> memoryview:
        """The bytes of the item at ``position`` inside this chunk (zero-copy)."""
        start, end = _OFFSETS.unpack_from(self.view, 4 + 4 * position)
        return self.view[start:end]
