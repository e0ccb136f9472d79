"""A local dataset's chunks read where they lie: checked once per file, or as LitData left them.

- :class:`InPlaceChecks`: an uncompressed local chunk is checked against the index's
  checksum the first time this process uses it, and again whenever its file changed (its
  identity: device, inode, size, times), unless it passed before as it is now
  (`VerifiedChunks`).
- :func:`inflated_in_place`: LitData decompresses the chunks of a local compressed dataset into
  the dataset's own folder, removing the compressed files; such a file is read as it is, its
  size checked.
"""

from __future__ import annotations

import logging
import mmap
import os

from litdata.core.chunks import checksum
from litdata.core.dataset_file import open_regular
from litdata.core.errors import ChunkCorruptError, ChunkMissingError
from litdata.core.index import ChunkEntry
from litdata.engine.cache.verified import VerifiedChunks, file_identity

__all__ = ["InPlaceChecks", "inflated_in_place", "missing_chunk"]

logger = logging.getLogger(__name__)
_INFLATED_WARNED: set[str] = set()


def missing_chunk(where: str) -> ChunkMissingError:
    """The error for a chunk listed in the index that is not at ``where``."""
    return ChunkMissingError(
        f"Chunk {where} listed in index.json is missing. The dataset is incomplete or was "
        f"changed under the reader; re-create or re-copy it."
    )


class InPlaceChecks:
    """What this process checked of a local dataset's chunks, by chunk index.

    Args:
        verified: The node's record of files that passed (``None``: hash every file once per
            process).
    """

    def __init__(self, verified: VerifiedChunks | None) -> None:
        self._verified = verified
        self._checked: dict[int, bytes] = {}

    def __getstate__(self) -> dict[str, object]:
        """Pickled for a worker: it checks the files again itself."""
        return {"_verified": self._verified, "_checked": {}}

    def check(self, path: str, chunk_index: int, entry: ChunkEntry) -> None:
        """Check an in-place chunk, unless this process checked the file as it is now.

        Every open looks at the file's identity: a chunk replaced or rewritten since its last
        check, even within one process, is checked again, never read as what it was.

        Raises:
            ChunkMissingError: The file is gone.
            ChunkCorruptError: Its size or checksum is not the index's.
        """
        try:
            with open_regular(path) as handle:
                status = os.fstat(handle.fileno())
                identity = file_identity(status)
                if self._checked.get(chunk_index) == identity:
                    return
                if status.st_size != entry.chunk_bytes:
                    raise ChunkCorruptError(
                        f"Chunk {path} is truncated or padded: it has {status.st_size:,} bytes, "
                        f"but index.json records {entry.chunk_bytes:,}. Its samples are not "
                        f"returned. Re-copy or re-create the dataset."
                    )
                known = self._verified is not None and self._verified.known(status, entry)
                if entry.checksum is not None and not known:
                    self._hash(handle.fileno(), status, entry, path)
                self._checked[chunk_index] = identity
        except FileNotFoundError:
            raise missing_chunk(path) from None

    def _hash(self, descriptor: int, status: os.stat_result, entry: ChunkEntry, path: str) -> None:
        if not status.st_size:
            checksum.verify_checksum(b"", entry, path)
        else:
            with mmap.mmap(descriptor, 0, access=mmap.ACCESS_READ) as data:
                checksum.verify_checksum(data, entry, path)
        if self._verified is not None:
            self._verified.add(status, entry)


def inflated_in_place(stored: str, plain: str, entry: ChunkEntry) -> str | None:
    """The decompressed file LitData left in place of a local compressed chunk, if any.

    Args:
        stored: The chunk's (compressed) file in the dataset's folder.
        plain: The file LitData decompresses it into, beside it.
        entry: The chunk's index entry.

    Its checksum (of the compressed bytes) cannot be checked, so its size is.

    Raises:
        ChunkCorruptError: The file's size is not the chunk's.
    """
    if plain == stored or os.path.exists(stored) or not os.path.exists(plain):
        return None
    size = os.path.getsize(plain)
    if size != entry.chunk_bytes:
        raise ChunkCorruptError(
            f"{plain} (chunk {entry.filename} as LitData decompresses it in place) has "
            f"{size:,} bytes, but index.json records {entry.chunk_bytes:,}. Re-create the "
            f"dataset."
        )
    if plain not in _INFLATED_WARNED:
        _INFLATED_WARNED.add(plain)
        logger.warning(
            "%s was decompressed in place (by LitData); reading it without its checksum", plain
        )
    return plain
