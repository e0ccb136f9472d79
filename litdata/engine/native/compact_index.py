"""Opening a native dataset through its compact index (:mod:`litdata.core.compact`).

``index.json`` is read (local) or fetched (remote) and digested; the compact index used is the
first of these that was built from exactly those bytes:

1. ``index.compact`` beside ``index.json`` (our writers publish it with every index; a local
   dataset is never written to by a reader);
2. ``<cache home>/index.compact`` (built on an earlier open: LitData's datasets, remote ones);
3. built now from ``index.json`` (parsed and checked as always), by one process of the node at
   a time (the others wait, then map what it published), and published atomically into the
   cache home.

A remote ``index.json`` is fetched once per node: the copy kept in the cache home (the
offline fallback too) is used as it is while it is younger than :data:`FRESH_SECONDS`, so the
ranks of a job, which open the dataset together, send one request between them; opening
itself holds the node's lock (:func:`node_lock`) while it looks. Our writers remove the copy
when they publish a new ``index.json`` from this machine; a dataset rewritten from another
machine is seen by this node once its copy is :data:`FRESH_SECONDS` old.

Digesting a local ``index.json`` reads all of it (870 MB at 10^7 chunks); the cache home
remembers the digest with the files' identities (device, inode, size, modification and change
times of ``index.json`` and of the compact index it matched), so a later open whose files are
unchanged hashes nothing. Any change to either file (a rewrite, a ``touch``) makes it hash again.

A compact index that is stale (another ``index.json``) or malformed is passed over with a
warning and rebuilt; one that cannot be written (a read-only cache) leaves the parsed
``index.json`` in use, slower but the same samples.
"""

from __future__ import annotations

import contextlib
import logging
import mmap
import os
import time
from collections.abc import Iterator
from pathlib import Path

from litdata.core.compact import (
    COMPACT_FILENAME,
    StaleCompactError,
    compact_bytes,
    index_digest,
    map_compact,
)
from litdata.core.dataset_file import open_regular, read_regular
from litdata.core.errors import DatasetFormatError, StorageError
from litdata.core.guards import check_metadata_size, read_metadata
from litdata.core.index import INDEX_FILENAME, DatasetIndex, index_from_bytes
from litdata.core.location import Location
from litdata.core.publish import publish_bytes
from litdata.engine.cache.directory import make_folder
from litdata.engine.cache.locks import ChunkLock

__all__ = [
    "BUILD_WAIT_SECONDS",
    "FRESH_SECONDS",
    "compact_index",
    "forget_node_copy",
    "fresh_copy",
    "node_lock",
]

logger = logging.getLogger(__name__)

#: How long a process waits for another one building the same compact index.
BUILD_WAIT_SECONDS = 300.0
#: How long a node's copy of a remote ``index.json`` is used without asking the store again.
FRESH_SECONDS = 60.0
#: The cache home's record of a local ``index.json``'s digest and the files it was taken of.
DIGEST_RECORD = "index.digest"


@contextlib.contextmanager
def node_lock(home: Path, mode: int) -> Iterator[None]:
    """Hold the lock of the node's copy of a remote dataset's ``index.json`` (waits for it)."""
    make_folder(home, mode)
    lock = ChunkLock(home, INDEX_FILENAME, mode)
    lock.acquire("exclusive", timeout=BUILD_WAIT_SECONDS)  # not granted: go on without it
    try:
        yield
    finally:
        lock.release()


def fresh_copy(home: Path) -> bool:
    """Whether this node fetched the remote ``index.json`` kept in ``home`` moments ago."""
    try:
        return time.time() - (home / INDEX_FILENAME).stat().st_mtime < FRESH_SECONDS
    except OSError:
        return False


def forget_node_copy(home: Path) -> None:
    """Remove this node's copy of a remote ``index.json`` (the dataset was just rewritten)."""
    (home / INDEX_FILENAME).unlink(missing_ok=True)


def _fetched(location: Location, home: Path, mode: int, offline: bool) -> bytes:
    """The remote ``index.json``: the node's fresh copy, else fetched (and kept)."""
    copy = home / INDEX_FILENAME
    if offline or fresh_copy(home):
        return read_metadata(copy, where=f"{location} (kept at {copy})")
    try:
        data = location.read(INDEX_FILENAME)
    except StorageError as error:
        if not copy.exists():
            raise
        logger.warning("%s is unreachable (%s); using the index kept in the cache", location, error)
        return read_metadata(copy, where=f"{location} (kept at {copy})")
    publish_bytes(copy, data, mode=mode)
    return data


def _file_digest(path: str) -> bytes:
    """:func:`index_digest` of a file, hashed where the page cache holds it (no copy).

    Raises:
        DatasetFormatError: The file is larger than an index may be.
    """
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        check_metadata_size(size, where=path)
        if size == 0:
            return index_digest(b"")
        with (
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped,
            memoryview(mapped) as view,
        ):
            return index_digest(view)


def _identity(*paths: str) -> str:
    """Who the files are now: device, inode, size, modified and changed times of each."""
    fields = []
    for path in paths:
        found = os.stat(path)
        fields += [found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns]
    return " ".join(map(str, fields))


def _remembered(home: Path, identity: str) -> bytes | None:
    """The digest the cache home recorded for files of ``identity``, if it did."""
    try:
        recorded, _, digest = read_regular(home / DIGEST_RECORD).decode().rpartition(" ")
        return bytes.fromhex(digest) if recorded == identity else None
    except (OSError, ValueError):  # none yet, unreadable, or garbled: digest the file
        return None


def _remember(home: Path, mode: int, identity: str, digest: bytes) -> None:
    """Record ``digest`` for files of ``identity`` (a read-only cache records nothing)."""
    with contextlib.suppress(OSError):
        make_folder(home, mode)
        publish_bytes(home / DIGEST_RECORD, f"{identity} {digest.hex()}".encode(), mode=mode)


def _local_compact(
    local: str, home: Path, mode: int, source: str
) -> tuple[DatasetIndex | None, bytes]:
    """The compact index beside a local ``index.json`` if it is of it, and the digest."""
    index_path = os.path.join(local, INDEX_FILENAME)
    compact_path = os.path.join(local, COMPACT_FILENAME)
    try:
        identity = _identity(index_path, compact_path)
    except FileNotFoundError:  # no compact index beside it (or no index.json: raised below)
        return None, _file_digest(index_path)
    digest = _remembered(home, identity)
    if digest is not None:
        found = _mapped(compact_path, digest, source)
        if found is not None:
            return found, digest
    digest = _file_digest(index_path)
    found = _mapped(compact_path, digest, source)
    if found is not None:
        _remember(home, mode, identity, digest)
    return found, digest


def _mapped(path: Path | str, digest: bytes, source: str) -> DatasetIndex | None:
    """The index mapped from ``path`` if it is a compact index of ``digest``, else ``None``."""
    try:
        return map_compact(os.fspath(path), digest, source)
    except FileNotFoundError:
        return None
    except StaleCompactError:  # index.json was rewritten since (by LitData, say): expected
        logger.info("The compact index %s is stale; rebuilding it", path)
        return None
    except (DatasetFormatError, OSError) as error:
        logger.warning("Not using the compact index %s: %s", path, error)
        return None


def compact_index(
    location: Location, home: Path, mode: int, *, offline: bool = False
) -> DatasetIndex:
    """The index of the native dataset at ``location``, mapped from a compact index.

    Args:
        location: The dataset (holding ``index.json``).
        home: The dataset's cache folder, where a compact index is built when needed.
        mode: The cache's file mode.
        offline: A remote dataset's store is unreachable: use the copy of ``index.json``
            kept in ``home``, whatever its age.

    Raises:
        FileNotFoundError: The dataset has no ``index.json``.
        DatasetFormatError: ``index.json`` is not a valid index.
    """
    source = location.join(INDEX_FILENAME)
    local = location.local_path
    data: bytes | None = None
    if local is not None:
        found, digest = _local_compact(local, home, mode, source)
        if found is not None:
            return found
    else:
        data = _fetched(location, home, mode, offline)
        digest = index_digest(data)
    cached = home / COMPACT_FILENAME
    found = _mapped(cached, digest, source)
    if found is not None:
        return found
    make_folder(home, mode)
    lock = ChunkLock(home, COMPACT_FILENAME, mode)
    lock.acquire("exclusive", timeout=BUILD_WAIT_SECONDS)  # not granted: build it anyway
    try:
        found = _mapped(cached, digest, source)  # another process built it meanwhile
        if found is not None:
            return found
        if data is None:
            data = read_metadata(os.path.join(local or "", INDEX_FILENAME), where=source)
            digest = index_digest(data)
        index = index_from_bytes(data, source)
        try:
            publish_bytes(cached, compact_bytes(index, digest), mode=mode)
        except (OSError, DatasetFormatError) as error:
            logger.warning("Could not build the compact index of %s (%s)", source, error)
            return index
    finally:
        lock.release()
    return _mapped(cached, digest, source) or index
