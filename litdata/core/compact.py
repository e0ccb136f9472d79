"""``index.compact``: ``index.json``'s chunk table as fixed-width columns, mapped, not parsed.

``index.json`` stays the source of truth (LitData's format); this file is derived from it and
records the XXH3-128 digest of the exact ``index.json`` bytes it was built from, so a stale
one (the dataset was appended to, updated, rewritten) is recognised and rebuilt. Opening a
dataset maps it and looks at arrays: no Python object per chunk, and every process of a node
shares the same pages.

Layout (little-endian, every section 8-byte aligned)::

    header   magic "LDCOMPAC", version u32, 0 u32, chunks u64, digest 16 bytes,
             bytes of: names, checksums, extras, head (u64 each)
    sizes    int64[n]    items per chunk (``chunk_size``)
    nbytes   int64[n]    ``chunk_bytes``
    dims     int64[n]    ``dim``, -1 when absent
    flags    int64[n]    bit 0: has a checksum; bit 1: has a ``dim``
    starts   int64[n+1]  cumulative item counts (``starts[n]`` is the total)
    offsets  int64[n+1] for names, checksums and extras (three columns)
    blobs    the file names (UTF-8), the checksums (ASCII), each entry's other keys (JSON),
             then the index without its chunks (JSON: config, updated_at, plugins, keys...)

The file is as hostile as ``index.json``: :func:`map_compact` checks the header, that the
sections fill the file exactly, every count (non-negative, bounded so sums cannot overflow),
the cumulative counts, and that every offset stays in its blob; an entry's name, checksum and
other keys go through ``index.json``'s own checks when the entry is first used.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import mmap
import os
import struct
from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt
import xxhash

from litdata.core.dataset_file import decode_json, open_regular
from litdata.core.errors import DatasetFormatError
from litdata.core.index import (
    ChunkColumns,
    ChunkEntry,
    DatasetIndex,
    check_index,
    parse_chunk,
    parse_index,
)

__all__ = [
    "COMPACT_FILENAME",
    "COMPACT_VERSION",
    "ChunkTable",
    "Columns",
    "StaleCompactError",
    "chunks_fingerprint",
    "columns_bytes",
    "compact_bytes",
    "index_digest",
    "map_compact",
]

COMPACT_FILENAME = "index.compact"
COMPACT_VERSION = 1
_MAGIC = b"LDCOMPAC"
#: Rows checked at a time when a compact index is mapped.
_CHECK_ROWS = 1 << 18
_HEADER = struct.Struct("<8sIIQ16sQQQQ")
_HAS_CHECKSUM, _HAS_DIM = 1, 2
#: The most chunks a compact index may list (2^25: with item counts under 2^38, no sum of
#: counts can overflow an int64).
MAX_CHUNKS = 1 << 25
#: The most items a chunk may hold in a compact index.
MAX_CHUNK_ITEMS = 1 << 38

Int64s = npt.NDArray[np.int64]


def index_digest(data: bytes | memoryview) -> bytes:
    """The digest a compact index records of the ``index.json`` bytes it was built from."""
    return xxhash.xxh3_128(data).digest()


def _padded(blob: bytes) -> bytes:
    return blob + b"\0" * (-len(blob) % 8)


def _strings(values: list[bytes]) -> tuple[Int64s, bytes]:
    lengths = np.fromiter((len(v) for v in values), dtype=np.int64, count=len(values))
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets, b"".join(values)


def compact_bytes(index: DatasetIndex, digest: bytes) -> bytes:
    """The compact index of ``index`` (parsed from ``index.json`` bytes whose digest is ``digest``).

    Raises:
        DatasetFormatError: The index lists more chunks, or a chunk more items, than a
            compact index holds.
    """
    chunks = index.chunks
    count = len(chunks)
    columns = Columns(
        sizes=np.fromiter((c.chunk_size for c in chunks), dtype=np.int64, count=count),
        nbytes=np.fromiter((c.chunk_bytes for c in chunks), dtype=np.int64, count=count),
        dims=np.fromiter((-1 if c.dim is None else c.dim for c in chunks), np.int64, count),
        names=[c.filename.encode() for c in chunks],
        checksums=[(c.checksum or "").encode() for c in chunks],
        has_checksum=np.fromiter((c.checksum is not None for c in chunks), bool, count),
        extras=[
            json.dumps(dict(c.extra), sort_keys=True).encode() if c.extra else b"" for c in chunks
        ],
    )
    return columns_bytes(columns, index.to_json_head(), digest)


@dataclasses.dataclass(frozen=True)
class Columns:
    """A chunk table as columns, one value per chunk, as a compact index stores it.

    Attributes:
        sizes: Items per chunk.
        nbytes: Bytes per chunk file.
        dims: Each chunk's ``dim``, -1 where it has none.
        names: File names (UTF-8).
        checksums: Checksums (ASCII; empty where none).
        has_checksum: Where a checksum is recorded.
        extras: Each entry's other keys (JSON; empty where none).
    """

    sizes: Int64s
    nbytes: Int64s
    dims: Int64s
    names: list[bytes]
    checksums: list[bytes]
    has_checksum: npt.NDArray[np.bool_]
    extras: list[bytes]


def columns_bytes(columns: Columns, head: dict[str, Any], digest: bytes) -> bytes:
    """The compact index of a chunk table given as ``columns`` (no object per chunk).

    Args:
        columns: The chunk table.
        head: The index without its chunks (``DatasetIndex.to_json_head()``).
        digest: The digest of the ``index.json`` bytes it stands for.

    Raises:
        DatasetFormatError: More chunks, or a chunk with more items, than a compact index
            holds.
    """
    sizes, count = columns.sizes, len(columns.sizes)
    if count > MAX_CHUNKS or (count and int(sizes.max()) >= MAX_CHUNK_ITEMS):
        raise DatasetFormatError(
            f"An index of {count:,} chunks (largest {int(sizes.max()):,} items) is beyond what "
            f"a compact index holds ({MAX_CHUNKS:,} chunks of under {MAX_CHUNK_ITEMS:,} items)."
        )
    flags = columns.has_checksum.astype(np.int64) * _HAS_CHECKSUM + (columns.dims >= 0) * _HAS_DIM
    starts = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    name_at, names = _strings(columns.names)
    check_at, checks = _strings(columns.checksums)
    extra_at, extras = _strings(columns.extras)
    head_blob = json.dumps(head, sort_keys=True).encode()
    header = _HEADER.pack(
        _MAGIC,
        COMPACT_VERSION,
        0,
        count,
        digest,
        len(names),
        len(checks),
        len(extras),
        len(head_blob),
    )
    arrays = (sizes, columns.nbytes, columns.dims, flags, starts, name_at, check_at, extra_at)
    return b"".join(
        [
            _padded(header),
            *(array.astype("<i8").tobytes() for array in arrays),
            *(_padded(blob) for blob in (names, checks, extras, head_blob)),
        ]
    )


class StaleCompactError(DatasetFormatError):
    """A compact index built from another ``index.json`` than the one there now."""


def _bad(
    source: str, problem: str, error: type[DatasetFormatError] = DatasetFormatError
) -> DatasetFormatError:
    return error(
        f"{source} is not a valid compact index: {problem}. It is derived from index.json: "
        f"delete it and open the dataset again to rebuild it."
    )


#: How many of a table's entries are kept once made.
_RECENT = 64


class ChunkTable(ChunkColumns):
    """The chunks of a mapped compact index: arrays, and entries made when asked for.

    Pickles as its path and digest: a DataLoader worker maps the same file again (checked
    again, and refused if it no longer is the file this table mapped).
    """

    def __init__(self, path: str, digest: bytes, source: str) -> None:
        self.path, self.digest, self.source = path, digest, source
        self._recent: dict[int, ChunkEntry] = {}
        with open_regular(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        self._parse(size)

    def __reduce__(self) -> tuple[Any, ...]:
        return ChunkTable, (self.path, self.digest, self.source)

    def _parse(self, size: int) -> None:
        where = f"{self.path} (of {self.source})"
        if self._map is None or size < _HEADER.size:
            raise _bad(where, f"it is {size} bytes, shorter than its header")
        magic, version, _, count, digest, *lengths = _HEADER.unpack_from(self._map, 0)
        if magic != _MAGIC:
            raise _bad(where, f"it starts with {magic!r}, not {_MAGIC!r}")
        if version != COMPACT_VERSION:
            raise _bad(where, f"its version is {version}, this litdata reads {COMPACT_VERSION}")
        if digest != self.digest:
            raise _bad(where, "it was built from another index.json (stale)", StaleCompactError)
        if count > MAX_CHUNKS:
            raise _bad(where, f"it says {count:,} chunks, more than {MAX_CHUNKS:,}")
        header = _HEADER.size + (-_HEADER.size % 8)
        expected = header + 8 * (8 * count + 4) + sum(n + (-n % 8) for n in lengths)
        if size != expected:
            raise _bad(where, f"it is {size:,} bytes, its header says {expected:,}")

        def column(number: int, length: int) -> Int64s:
            offset = header + 8 * (number * count + max(0, number - 4))
            return np.frombuffer(self._map, dtype="<i8", count=length, offset=offset)  # type: ignore[arg-type]

        self._sizes, self._nbytes, self._dims, self._flags = (column(i, count) for i in range(4))
        self._starts = column(4, count + 1)
        offsets = [column(5 + i, count + 1) for i in range(3)]
        blob_at = header + 8 * (8 * count + 4)
        blobs = []
        for length in lengths:
            blobs.append(memoryview(self._map)[blob_at : blob_at + length])
            blob_at += length + (-length % 8)
        self._names, self._checks, self._extras, head = blobs
        self._offsets = offsets
        self._check(where, offsets, lengths)
        self.head = head

    def _check(self, where: str, offsets: list[Int64s], lengths: list[int]) -> None:
        """Every count and offset, a block of rows at a time (small temporaries stay in cache)."""
        count = len(self._sizes)
        if int(self._starts[0]) != 0:
            raise _bad(where, "its cumulative item counts do not add up")
        for name, at, length in zip(
            ("names", "checksums", "extras"), offsets, lengths[:3], strict=True
        ):
            if int(at[0]) != 0 or int(at[-1]) != length:
                raise _bad(where, f"its {name} offsets leave their blob")
        for begin in range(0, count, _CHECK_ROWS):
            end = min(begin + _CHECK_ROWS, count)
            self._check_rows(where, begin, end, offsets)

    def _check_rows(self, where: str, begin: int, end: int, offsets: list[Int64s]) -> None:
        sizes, nbytes = self._sizes[begin:end], self._nbytes[begin:end]
        dims, flags = self._dims[begin:end], self._flags[begin:end]
        if not (
            int(sizes.min()) >= 0 and int(sizes.max()) < MAX_CHUNK_ITEMS and int(nbytes.min()) >= 0
        ):
            raise _bad(where, "a chunk's item or byte count is negative or too large")
        if not (int(flags.min()) >= 0 and int(flags.max()) <= _HAS_CHECKSUM | _HAS_DIM):
            raise _bad(where, "a chunk's flags are not 0 to 3")
        if not np.where((flags & _HAS_DIM) != 0, dims > 0, dims == -1).all():
            raise _bad(where, "a chunk's dim is not positive")
        starts = self._starts[begin : end + 1]
        if not np.array_equal(starts[1:] - starts[:-1], sizes):
            raise _bad(where, "its cumulative item counts do not add up")
        for name, at in zip(("names", "checksums", "extras"), offsets, strict=True):
            rows = at[begin : end + 1]
            if int((rows[1:] - rows[:-1]).min()) < 0:
                raise _bad(where, f"its {name} offsets leave their blob")

    @property
    def sizes(self) -> Int64s:
        """Each chunk's ``chunk_size`` (read-only, mapped)."""
        return self._sizes

    @property
    def nbytes(self) -> Int64s:
        """Each chunk's ``chunk_bytes`` (read-only, mapped)."""
        return self._nbytes

    @property
    def dims(self) -> Int64s:
        """Each chunk's ``dim``, -1 where it has none (read-only, mapped)."""
        return self._dims

    @property
    def total(self) -> int:
        """The number of items of all chunks."""
        return int(self._starts[-1])

    @property
    def starts(self) -> Int64s:
        """The first item of each chunk, then the total (read-only, mapped)."""
        return self._starts

    def __len__(self) -> int:
        return len(self._sizes)

    def _text(self, column: int, position: int) -> str:
        blob = (self._names, self._checks, self._extras)[column]
        at = self._offsets[column]
        try:
            return bytes(blob[int(at[position]) : int(at[position + 1])]).decode()
        except UnicodeDecodeError:
            raise _bad(self.path, f"chunk {position}'s text is not UTF-8") from None

    def entry(self, position: int) -> ChunkEntry:
        """Chunk ``position``'s entry, through the checks of an ``index.json`` entry.

        The last few made are kept: a read asks for its chunk's entry several times, and
        for the entry of the chunk it closes.
        """
        made = self._recent.get(position)
        if made is None:
            made = self._entry(position)
            if len(self._recent) >= _RECENT:
                self._recent.clear()  # (no order kept: shared by threads)
            self._recent[position] = made
        return made

    def _entry(self, position: int) -> ChunkEntry:
        flags = int(self._flags[position])
        raw: dict[str, Any] = {}
        extra = self._text(2, position)
        if extra:
            try:
                raw = decode_json(extra, where=self.path)
            except DatasetFormatError:
                raw = None  # type: ignore[assignment]  # refused below, naming the entry
            if not isinstance(raw, dict):
                raise _bad(self.path, f"chunk {position}'s other keys are not a JSON object")
        raw.update(
            filename=self._text(0, position),
            chunk_size=int(self.sizes[position]),
            chunk_bytes=int(self.nbytes[position]),
            dim=int(self._dims[position]) if flags & _HAS_DIM else None,
        )
        if flags & _HAS_CHECKSUM:
            raw["checksum"] = self._text(1, position)
        return parse_chunk(raw, position, f"{self.path} (of {self.source})")

    @overload
    def __getitem__(self, position: int) -> ChunkEntry: ...
    @overload
    def __getitem__(self, position: slice) -> tuple[ChunkEntry, ...]: ...
    def __getitem__(self, position: int | slice) -> ChunkEntry | tuple[ChunkEntry, ...]:
        if isinstance(position, slice):
            return tuple(self.entry(i) for i in range(*position.indices(len(self))))
        count = len(self)
        if position < 0:
            position += count
        if not 0 <= position < count:
            raise IndexError(f"chunk {position} is out of range for {count} chunks")
        return self.entry(position)

    def __iter__(self) -> Iterator[ChunkEntry]:
        return (self.entry(i) for i in range(len(self)))


def chunks_fingerprint(chunks: Sequence[ChunkEntry]) -> bytes:
    """A SHA-256 of every chunk's name, counts and checksum (the compact index's columns).

    The same for a mapped table (hashed as its columns lie, no entry made) and for the entries
    it was built from.
    """
    blobs: tuple[bytes | memoryview, ...]
    if isinstance(chunks, ChunkTable):
        columns = (chunks.sizes, chunks.nbytes, *chunks._offsets[:2])
        has = (chunks._flags & _HAS_CHECKSUM).astype(np.uint8)
        blobs = (chunks._names, chunks._checks, has.tobytes())
    else:
        count = len(chunks)
        name_at, names = _strings([c.filename.encode() for c in chunks])
        check_at, checks = _strings([(c.checksum or "").encode() for c in chunks])
        has = np.fromiter((c.checksum is not None for c in chunks), np.uint8, count)
        sizes = np.fromiter((c.chunk_size for c in chunks), np.int64, count)
        nbytes = np.fromiter((c.chunk_bytes for c in chunks), np.int64, count)
        columns, blobs = (sizes, nbytes, name_at, check_at), (names, checks, has.tobytes())
    digest = hashlib.sha256(len(chunks).to_bytes(8, "little"))
    for column in columns:
        digest.update(np.ascontiguousarray(column, "<i8").tobytes())
    for blob in blobs:
        digest.update(blob)
    return digest.digest()


def map_compact(path: str, digest: bytes, source: str) -> DatasetIndex:
    """The index of the compact file at ``path``, if it was built from ``index.json`` of ``digest``.

    Args:
        path: The compact index.
        digest: :func:`index_digest` of the current ``index.json``.
        source: The ``index.json`` it stands for (a path or URL), for messages.

    Raises:
        DatasetFormatError: The file is malformed, of another version, or stale.
        OSError: It cannot be read.
    """
    table = ChunkTable(path, digest, source)
    head = decode_json(bytes(table.head), where=f"{path}'s head")
    if not isinstance(head, dict) or "chunks" in head:
        raise _bad(path, "its head is not an index without chunks")
    if head.get("config") is None and len(table):
        raise _bad(path, "its head has no config, but it lists chunks")
    index = parse_index({**head, "chunks": []}, f"{path} (of {source})")
    return check_index(dataclasses.replace(index, chunks=table), source)
