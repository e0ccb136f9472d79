"""``ChunkFile``: one plain chunk, memory-mapped read-only (or held in memory), header checked."""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Callable
from pathlib import Path

from litdata.core.chunks.layout import validate_header
from litdata.core.errors import ChunkMissingError
from litdata.core.index import ChunkEntry

__all__ = ["ChunkFile"]

_OFFSETS = struct.Struct("<II")


class ChunkFile:
    """One plain chunk (LitData's layout), its header checked against the index.

    Args:
        path: The local, plain chunk file (mapped read-only; never modified).
        entry: The chunk's index entry.
        data: The chunk's bytes when they live only in memory (a decrypted chunk); ``path``
            then only names it in messages.

    The cache checks a chunk's stored bytes against its checksum before a reader opens it.
    """

    __slots__ = ("_map", "entry", "path", "view")

    def __init__(
        self, path: str | os.PathLike[str], entry: ChunkEntry, data: bytes | None = None
    ) -> None:
        self.path = Path(path)
        self.entry = entry
        self._map: mmap.mmap | None = None
        if data is not None:
            self.view = memoryview(data)
        else:
            self.view = self._mapped()
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
            stored = Path(path).read_bytes()
        except FileNotFoundError:
            raise ChunkMissingError(f"Chunk {path} listed in index.json is missing.") from None
        return cls(path, entry, decrypt(stored))

    def _mapped(self) -> memoryview:
        try:
            with open(self.path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size:
                    self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            raise ChunkMissingError(
                f"Chunk {self.path} listed in index.json is missing. The dataset is incomplete; "
                f"re-create or re-copy it."
            ) from None
        return memoryview(self._map) if self._map is not None else memoryview(b"")

    def prefetch(self) -> None:
        """Ask the kernel to read the whole file ahead (for a chunk about to be streamed)."""
        if self._map is not None and hasattr(mmap, "MADV_WILLNEED"):
            self._map.madvise(mmap.MADV_WILLNEED)

    def release(self) -> None:
        """Drop this process's mapping of the pages read so far; they stay in the page cache.

        Views handed out stay valid: a page touched again is mapped back from the cache.
        Streaming calls this when a worker is done with a chunk, so a process does not hold
        (and get charged for) every page of every chunk it streamed through.
        """
        if self._map is not None and hasattr(mmap, "MADV_DONTNEED"):
            self._map.madvise(mmap.MADV_DONTNEED)

    def item(self, position: int) -> memoryview:
        """The bytes of the item at ``position`` inside this chunk (zero-copy)."""
        start, end = _OFFSETS.unpack_from(self.view, 4 + 4 * position)
        return self.view[start:end]

    def close(self) -> None:
        """Release the memory map, or leave it to the garbage collector while views remain."""
        try:
            self.view.release()
            if self._map is not None:
                self._map.close()
        except BufferError:  # a caller still holds a zero-copy view of an item
            pass
