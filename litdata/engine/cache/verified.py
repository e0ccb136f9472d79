"""``VerifiedChunks``: which in-place chunk files passed their checksum, and as what file.

Hashing every byte of a local dataset each time a training job opens it costs a read of the
whole dataset before (and while) it streams. Like ``git``'s index and ``make``, this record
keeps, per chunk file that passed its checksum, the file's identity as the kernel reports it:
device, inode, size, modification and status-change times (``ctime`` cannot be set by a
user; any write changes it). A later process whose ``stat`` of the file gives the same
identity, for the same recorded checksum, skips the hash. A file that was rewritten, touched,
replaced or truncated since is hashed again.

What it cannot see is a change the kernel does not report (bits decaying on the medium);
``LITDATA_VERIFY=always`` hashes every chunk on every open for those who need that.

The record lives in the dataset's cache folder (``<cache root>/<md5 of its path>/verified/``),
one small file per chunk, written atomically; the dataset's own folder is never written to.
A record that cannot be written (a read-only cache) is not an error: the chunk is hashed
again next time.

File times tick coarsely (a kernel clock tick, up to 10 ms), so a file changed within the
tick of its last change keeps its times. A file is therefore recorded only once its last
change is :data:`SETTLED_SECONDS` old: a later change then necessarily moves its ``ctime``
(``git`` calls the opposite case "racily clean").
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from litdata.core.dataset_file import read_regular
from litdata.core.index import ChunkEntry
from litdata.core.publish import publish_bytes
from litdata.engine.cache.directory import flat_name, make_folder

__all__ = ["SETTLED_SECONDS", "VerifiedChunks", "file_identity"]

#: How old a file's last change must be before its identity is trusted.
SETTLED_SECONDS = 2.0


def file_identity(status: os.stat_result) -> bytes:
    """A file's identity as the kernel reports it: device, inode, size, mtime and ctime."""
    fields = (
        status.st_dev,
        status.st_ino,
        status.st_size,
        status.st_mtime_ns,
        status.st_ctime_ns,
    )
    return " ".join(map(str, fields)).encode()


def _identity(status: os.stat_result, checksum: str) -> bytes:
    return file_identity(status) + b" " + checksum.encode()


class VerifiedChunks:
    """The chunk files of one dataset known to have passed their checksum.

    Args:
        folder: Where the records are kept (created on the first one).
        mode: The records' permission bits (the cache's).
    """

    def __init__(self, folder: Path, mode: int | None = None) -> None:
        self.folder = folder
        self.mode = mode

    def _record(self, entry: ChunkEntry) -> Path:
        return self.folder / f"{flat_name(entry.filename)}.ok"

    def known(self, status: os.stat_result, entry: ChunkEntry) -> bool:
        """Whether the file ``status`` describes passed ``entry``'s checksum as it is now."""
        if entry.checksum is None:
            return False
        try:
            return read_regular(self._record(entry)) == _identity(status, entry.checksum)
        except (OSError, ValueError):  # none, unreadable, or not a file: hash the chunk
            return False

    def add(self, status: os.stat_result, entry: ChunkEntry) -> None:
        """Record that the file ``status`` describes passed ``entry``'s checksum."""
        settled = time.time_ns() - max(status.st_mtime_ns, status.st_ctime_ns)
        if entry.checksum is None or settled < SETTLED_SECONDS * 1e9:
            return
        with contextlib.suppress(OSError):
            make_folder(self.folder, self.mode)
            publish_bytes(self._record(entry), _identity(status, entry.checksum), mode=self.mode)
