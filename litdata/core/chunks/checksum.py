"""Chunk checksums, recorded per chunk in ``index.json`` as ``"<algorithm>:<hex>"``.

New chunks get ``xxh3`` (XXH3-64, about 30 GB/s here, so checking every chunk before it is
read costs little); datasets written by earlier litdata versions carry ``crc32``, which still
verifies. Both hash the chunk file's bytes as stored (compressed, encrypted) and release the
GIL, so a prefetch thread can check the next chunk while the current one is decoded.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import zlib
from collections.abc import Callable
from typing import Protocol

import xxhash

from litdata.core.dataset_file import open_regular
from litdata.core.errors import ChunkCorruptError
from litdata.core.index import ChunkEntry

__all__ = ["ALGORITHM", "checksum_of", "hasher", "verify_checksum", "verify_file"]

Buffer = bytes | bytearray | memoryview | mmap.mmap

#: The algorithm new chunks record.
ALGORITHM = "xxh3"

#: Bytes read at a time when a file is checked (:func:`verify_file`).
FILE_BLOCK = 8 << 20


class _Digest(Protocol):
    def update(self, data: Buffer, /) -> None: ...
    def hexdigest(self) -> str: ...


class _Crc32:
    """``zlib.crc32`` with a hashlib-like ``update``/``hexdigest``."""

    def __init__(self) -> None:
        self.value = 0

    def update(self, data: Buffer) -> None:
        self.value = zlib.crc32(data, self.value)

    def hexdigest(self) -> str:
        return f"{self.value:08x}"


#: Our names whose hashes are not under their own name in xxhash or hashlib.
_OURS: dict[str, Callable[[], _Digest]] = {"xxh3": xxhash.xxh3_64, "crc32": _Crc32}


def hasher(algorithm: str) -> Callable[[], _Digest] | None:
    """A new digest for ``algorithm``: ours, xxhash's (``xxh64``...) or hashlib's (``sha1``...).

    Other formats' indexes record these (MosaicML's shards, ``hashes``); any of them is a
    chunk checksum as good as ours. ``None`` for an algorithm neither library knows.
    """
    if algorithm in _OURS:
        return _OURS[algorithm]
    if algorithm.startswith("xxh"):
        found = getattr(xxhash, algorithm, None)
        return found if isinstance(found, type) else None
    if algorithm in hashlib.algorithms_available:
        return lambda: hashlib.new(algorithm)
    return None


def checksum_of(data: Buffer, algorithm: str = ALGORITHM) -> str:
    """The checksum recorded for a chunk file's bytes, e.g. ``"xxh3:9a0f..."``."""
    if algorithm == ALGORITHM:  # what every chunk written here records: the fast path
        return f"{algorithm}:{xxhash.xxh3_64_hexdigest(data)}"
    digest = _known(algorithm, "the dataset")()
    digest.update(data)
    return f"{algorithm}:{digest.hexdigest()}"


def verify_checksum(data: Buffer, entry: ChunkEntry, where: str) -> None:
    """Check ``data`` (a chunk file's bytes as stored) against its index entry's checksum.

    Chunks written by LitData carry no checksum and pass unchecked (their headers are still
    checked when they are opened).

    Raises:
        ChunkCorruptError: The checksum differs, or its algorithm is unknown.
    """
    if entry.checksum is None:
        return
    algorithm = _algorithm(entry, where)
    _compare(checksum_of(data, algorithm), entry, where)


def verify_file(path: str | os.PathLike[str], entry: ChunkEntry, where: str) -> None:
    """Check the file at ``path`` like :func:`verify_checksum`, reading it block by block.

    For a freshly downloaded chunk: it is never held in memory whole (nor mapped), so
    checking several chunks at once costs a few blocks of memory, not several chunks.

    Raises:
        ChunkCorruptError: The checksum differs, or its algorithm is unknown.
    """
    if entry.checksum is None:
        return
    algorithm = _algorithm(entry, where)
    digest = _known(algorithm, where)()
    block = bytearray(FILE_BLOCK)
    view = memoryview(block)
    with open_regular(path) as handle:
        while count := handle.readinto(block):
            digest.update(view[:count])
    _compare(f"{algorithm}:{digest.hexdigest()}", entry, where)


def _algorithm(entry: ChunkEntry, where: str) -> str:
    algorithm = (entry.checksum or "").partition(":")[0]
    _known(algorithm, where)
    return algorithm


def _known(algorithm: str, where: str) -> Callable[[], _Digest]:
    found = hasher(algorithm)
    if found is None:
        raise ChunkCorruptError(
            f"{where} records a {algorithm!r} checksum, which this litdata cannot verify "
            f"(it knows xxh3, crc32, xxhash's and hashlib's algorithms); upgrade litdata, or "
            f"pass verify=False."
        )
    return found


def _compare(actual: str, entry: ChunkEntry, where: str) -> None:
    if actual != entry.checksum:
        raise ChunkCorruptError(
            f"Chunk {where} is corrupt: its checksum is {actual} but index.json records "
            f"{entry.checksum}. Its samples are not returned. Re-download or re-create the "
            f"dataset (`litdata verify` checks every chunk)."
        )
