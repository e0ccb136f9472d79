"""``MappedFile``: a local file mapped read-only, with read-ahead and release of its pages."""

from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import ClassVar

from litdata.core.dataset_file import open_regular
from litdata.core.errors import ChunkMissingError

__all__ = ["MappedFile"]


class MappedFile:
    """A dataset file mapped read-only (or bytes held in memory), viewed without copies.

    Args:
        path: The local file (never modified).
        data: The file's bytes when they live only in memory (a decrypted chunk); ``path``
            then only names it in messages.

    Raises:
        ChunkMissingError: The file does not exist.
    """

    __slots__ = ("_map", "path", "view")

    #: How messages name the file.
    kind: ClassVar[str] = "File"

    def __init__(self, path: str | os.PathLike[str], data: bytes | None = None) -> None:
        self.path = Path(path)
        self._map: mmap.mmap | None = None
        self.view = memoryview(data) if data is not None else self._mapped()

    @classmethod
    def missing(cls, path: str | os.PathLike[str]) -> ChunkMissingError:
        """The error for a listed file that is not there."""
        return ChunkMissingError(
            f"{cls.kind} {os.fspath(path)} listed in index.json is missing. The dataset is "
            f"incomplete; re-create or re-copy it."
        )

    def _mapped(self) -> memoryview:
        try:
            with open_regular(self.path) as handle:
                if os.fstat(handle.fileno()).st_size:
                    self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            raise self.missing(self.path) from None
        return memoryview(self._map) if self._map is not None else memoryview(b"")

    def prefetch(self) -> None:
        """Ask the kernel to read the whole file ahead (for a file about to be streamed)."""
        if self._map is not None and hasattr(mmap, "MADV_WILLNEED"):
            self._map.madvise(mmap.MADV_WILLNEED)

    def release(self) -> None:
        """Drop this process's mapping of the pages read so far; they stay in the page cache.

        Views handed out stay valid: a page touched again is mapped back from the cache.
        Streaming calls this when a worker is done with a file, so a process does not hold
        (and get charged for) every page of every file it streamed through.
        """
        if self._map is not None and hasattr(mmap, "MADV_DONTNEED"):
            self._map.madvise(mmap.MADV_DONTNEED)

    def close(self) -> None:
        """Release the memory map, or leave it to the garbage collector while views remain."""
        try:
            self.view.release()
            if self._map is not None:
                self._map.close()
        except BufferError:  # a caller still holds a zero-copy view
            pass
