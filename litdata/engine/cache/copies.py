"""``CheckedCopies``: a chunk's copy in the cache, checked again when a process first uses it.

A remote chunk, or a local compressed one, is read from a plain copy in the cache folder,
checked once as it was fetched. The cache is a folder like any other: a disk error, a tool
that writes into it, another chunk's bytes copied over one, would be served as samples. So
each copy gets, when it is published, a record of its digest (``xxh3`` of its plain bytes,
about 30 GB/s: milliseconds for a chunk) in a hidden folder beside it (``.sums/<name>.sum``, which
the cache's eviction skips; the record goes with the copy); each process hashes a copy again
the first time it uses it, and again whenever the file it finds is another file (device,
inode, size), before any of its samples is returned.

A copy without a record (a read-only cache, a copy an older version made) is used as it is.
"""

from __future__ import annotations

import contextlib
import logging
import mmap
import os
from pathlib import Path

from litdata.core.chunks.checksum import checksum_of
from litdata.core.dataset_file import open_regular, read_regular
from litdata.core.errors import ChunkCorruptError
from litdata.core.publish import publish_bytes
from litdata.engine.cache.directory import make_folder

__all__ = ["CheckedCopies", "record_of"]

logger = logging.getLogger(__name__)

#: The folder of the records, beside the copies (the cache's eviction lists files only).
_RECORDS = ".sums"


def record_of(copy: Path) -> Path:
    """Where the digest of the cached copy ``copy`` is recorded (``.sums/<name>.sum``)."""
    return copy.parent / _RECORDS / f"{copy.name}.sum"


def _digest(path: Path) -> str:
    with open_regular(path) as handle:
        if not os.fstat(handle.fileno()).st_size:
            return checksum_of(b"")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return checksum_of(data)


class CheckedCopies:
    """The cached copies of one dataset's chunks this process checked, as the files they were."""

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._seen: dict[str, tuple[int, int, int]] = {}
        self._dropped: set[str] = set()

    def record(self, copy: Path, mode: int, digest: str | None = None) -> None:
        """Record the digest of ``copy``, just published (a read-only cache records nothing).

        Args:
            copy: The published copy.
            mode: The cache's file permissions.
            digest: Its digest when the caller knows it (the bytes written were checked
                against it as they arrived), saving a pass over the file; else it is hashed.
        """
        with contextlib.suppress(OSError):
            status = os.stat(copy)
            make_folder(record_of(copy).parent, mode)
            publish_bytes(record_of(copy), (digest or _digest(copy)).encode(), mode=mode)
            self._seen[str(copy)] = (status.st_dev, status.st_ino, status.st_size)

    @staticmethod
    def forget(copy: Path) -> None:
        """Remove the record of ``copy`` (evicted, or found damaged)."""
        record_of(copy).unlink(missing_ok=True)

    def usable(self, copy: Path, source: str) -> bool:
        """Whether ``copy`` holds the bytes recorded when it was published; if not, remove it.

        Hashed when this process first meets this file; a file it checked before (the same
        device, inode and size) is not hashed again. A damaged copy is removed (readers that
        mapped it keep the old file), to be fetched again.

        Args:
            copy: The cached copy.
            source: The chunk's URL, for messages.

        Raises:
            ChunkCorruptError: The copy was found damaged once already (and fetched again).
        """
        if os.getpid() != self._pid:  # a forked worker checks for itself
            self._pid, self._seen, self._dropped = os.getpid(), {}, set()
        status = os.stat(copy)
        identity = (status.st_dev, status.st_ino, status.st_size)
        if self._seen.get(str(copy)) == identity:
            return True
        try:
            recorded = read_regular(record_of(copy)).decode()
        except (OSError, ValueError):  # none, unreadable, not a file (or not text)
            recorded = None
        if recorded is None or _digest(copy) == recorded:
            self._seen[str(copy)] = identity
            return True
        copy.unlink(missing_ok=True)
        self.forget(copy)
        if str(copy) in self._dropped:
            raise ChunkCorruptError(
                f"The cached copy {copy} of chunk {source} changed again after it was fetched "
                f"and checked: something writes into the cache folder, or its disk is failing. "
                f"Its samples are not returned; check the disk, or use another cache_dir."
            )
        self._dropped.add(str(copy))
        logger.warning(
            "the cached copy %s of %s changed since it was checked; fetching it again", copy, source
        )
        return False
