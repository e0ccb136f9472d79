"""Parquet footers: the index of a folder of Parquet files, read without reading their rows.

A Parquet file ends with its metadata (schema, row groups) followed by the metadata's length
(``u32``) and the magic ``PAR1``. A remote file's footer is read with one or two ranged reads
of its tail; the rows are never fetched. Each file becomes one chunk of LitData's Parquet index:
``{"filename", "chunk_size": rows, "chunk_bytes": file size, "dim": null}``, and the config
records the Arrow type of every column (``data_format``) with ``item_loader: "ParquetLoader"``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from litdata.core.errors import DatasetFormatError, DatasetNotFoundError
from litdata.core.imports import require
from litdata.core.index import ChunkEntry, DatasetConfig, DatasetIndex
from litdata.core.location import Location
from litdata.engine.boundary.resolve import resolve

__all__ = ["LOADER_NAME", "SUFFIX", "Footer", "arrow", "build_index", "files_at", "read_footer"]

#: The item loader Parquet indexes record (LitData's class name).
LOADER_NAME = "ParquetLoader"
#: The file name ending of the files a Parquet dataset is made of.
SUFFIX = ".parquet"
_MAGIC = b"PAR1"
#: Bytes of a remote file's tail read at first: most footers fit, so one request suffices.
_TAIL = 64 << 10
_TRAILER = 8


def files_at(url: str, storage_options: Mapping[str, Any] | None = None) -> Location:
    """The location of a folder of files, or of a glob of files in it (``data/train-*``)."""
    location = resolve(url, storage_options=storage_options)
    if any(mark in location.url.rpartition("/")[2] for mark in "*?["):
        return location.parent()
    return location


def arrow() -> tuple[Any, Any]:
    """The modules ``pyarrow`` and ``pyarrow.parquet`` (fork-safe, unlike polars).

    Raises:
        ImportError: They are not installed (the message says how to install them).
    """
    purpose = "Reading Parquet files"
    return (
        require("pyarrow", extra="parquet", purpose=purpose),
        require("pyarrow.parquet", extra="parquet", purpose=purpose),
    )


@dataclass(frozen=True)
class Footer:
    """What a Parquet file's footer says.

    Attributes:
        name: The file's name in its folder.
        size: Its size in bytes.
        rows: Its number of rows.
        columns: Its columns' names, in order.
        types: Their Arrow types, as strings (``"int64"``, ``"list<element: string>"``).
        nulls: The columns (not lists) whose statistics count nulls.
    """

    name: str
    size: int
    rows: int
    columns: tuple[str, ...]
    types: tuple[str, ...]
    nulls: frozenset[str] = frozenset()


def _not_parquet(where: str, problem: str) -> DatasetFormatError:
    return DatasetFormatError(
        f"{where} is not a readable Parquet file: {problem}. It may be truncated or still being "
        f"written; replace it, or move it out of the dataset's folder."
    )


def _metadata(tail: bytes, where: str) -> Any:
    """Parse the metadata at the end of ``tail`` (the last bytes of a Parquet file)."""
    pa, pq = arrow()
    try:
        return pq.read_metadata(pa.BufferReader(_MAGIC + tail))
    except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
        raise _not_parquet(where, str(error)) from error


def _local_tail(path: str) -> tuple[bytes, int]:
    """The last bytes of a local file (its whole footer), and the file's size."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        handle.seek(max(0, size - _TAIL))
        tail = handle.read()
        needed = _footer_length(tail, size, path) + _TRAILER
        if needed > len(tail):
            handle.seek(size - needed)
            tail = handle.read()
    return tail, size


def _remote_tail(location: Location, url: str) -> tuple[bytes, int]:
    """The last bytes of a remote file (its whole footer), and its size, by ranged reads."""
    backend: Any = location.storage.backend  # an fsspec backend has ``fs`` and ``path``
    filesystem = getattr(backend, "fs", None)
    if filesystem is None or not location.storage.ranged:  # the whole file, then its tail
        with tempfile.TemporaryDirectory(prefix="litdata-") as scratch:
            path = os.path.join(scratch, "file")
            location.storage.download(url, path)
            with open(path, "rb") as handle:
                data = handle.read()
        return data, len(data)
    try:
        size = int(filesystem.size(backend.path(url)))
    except FileNotFoundError:
        raise DatasetNotFoundError(f"{url} disappeared while the dataset was indexed.") from None
    tail = location.storage.read_range(url, max(0, size - _TAIL), size)
    needed = _footer_length(tail, size, url) + _TRAILER
    if needed > len(tail):
        tail = location.storage.read_range(url, size - needed, size)
    return tail, size


def _footer_length(tail: bytes, size: int, where: str) -> int:
    """The metadata's length, from the trailer at the end of ``tail``.

    Raises:
        DatasetFormatError: There is no Parquet trailer, or it claims too many bytes.
    """
    if len(tail) < _TRAILER or tail[-4:] != _MAGIC:
        raise _not_parquet(where, f"its last bytes are not {_MAGIC!r} ({size} bytes in all)")
    length = int.from_bytes(tail[-8:-4], "little")
    if length + _TRAILER + len(_MAGIC) > size:
        raise _not_parquet(where, f"its footer claims {length} bytes of a {size}-byte file")
    return length


def read_footer(location: Location, name: str) -> Footer:
    """Read the footer of the Parquet file ``name`` in ``location`` (local or remote).

    Raises:
        DatasetFormatError: It is not a Parquet file, or is truncated (the message names it).
    """
    local = location.local_path
    url = location.join(name) if local is None else os.path.join(local, name)
    tail, size = _local_tail(url) if local is not None else _remote_tail(location, url)
    length = _footer_length(tail, size, url)
    metadata = _metadata(tail[-(length + _TRAILER) :], url)
    try:
        schema = metadata.schema.to_arrow_schema()
    except (OSError, ValueError) as error:
        raise _not_parquet(url, f"its schema cannot be read ({error})") from error
    return Footer(
        name=name,
        size=size,
        rows=int(metadata.num_rows),
        columns=tuple(schema.names),
        types=tuple(str(field.type) for field in schema),
        nulls=_null_columns(metadata, schema),
    )


def _null_columns(metadata: Any, schema: Any) -> frozenset[str]:
    """The columns with nulls (row group statistics) that are not lists.

    A null inside a list is a JSON ``null`` of that list's leaf; a null scalar, or a null field
    of a struct, changes the kind of a value of the sample.
    """
    pa, _ = arrow()
    listed = {
        field.name
        for field in schema
        if pa.types.is_list(field.type)
        or pa.types.is_large_list(field.type)
        or pa.types.is_fixed_size_list(field.type)
    }
    found = set()
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for position in range(row_group.num_columns):
            column = row_group.column(position)
            top = column.path_in_schema.split(".", 1)[0]
            statistics = column.statistics
            if top not in listed and statistics is not None and statistics.null_count:
                found.add(top)
    return frozenset(found)


def _check_same_schema(footers: list[Footer], location: Location) -> None:
    """Every file must have the first one's columns, with the same types.

    Raises:
        DatasetFormatError: Two files differ; the message names both and the column.
    """
    first = footers[0]
    for other in footers[1:]:
        if (other.columns, other.types) == (first.columns, first.types):
            continue
        mine, theirs = (
            dict(zip(first.columns, first.types, strict=True)),
            dict(zip(other.columns, other.types, strict=True)),
        )
        differing = next(
            (
                f"column {column!r} is {mine.get(column, 'absent')} in {first.name} but "
                f"{theirs.get(column, 'absent')} in {other.name}"
                for column in (*first.columns, *other.columns)
                if mine.get(column) != theirs.get(column)
            ),
            f"the columns are in another order: {list(first.columns)} in {first.name}, "
            f"{list(other.columns)} in {other.name}",
        )
        raise DatasetFormatError(
            f"The Parquet files of {location.url} must all have the same schema, but "
            f"{first.name} and {other.name} differ: {differing}. Stream them as two datasets "
            f"(a glob such as 'train-*.parquet' selects files), or rewrite them to one schema."
        )


def build_index(location: Location, num_workers: int = 4) -> DatasetIndex:
    """The index of the Parquet files directly in ``location`` (matching its pattern).

    Files are taken in name order; their footers are read ``num_workers`` at a time.

    Raises:
        DatasetNotFoundError: No Parquet file is there.
        DatasetFormatError: A file is not readable Parquet, or the schemas differ.
    """
    names = sorted(name for name in location.names() if name.endswith(SUFFIX))
    if not names:
        where = location.join(location.pattern) if location.pattern else location.url
        raise DatasetNotFoundError(
            f"No {SUFFIX} files at {where}: there is nothing to index. Check the path (a "
            f"folder of Parquet files, or a glob such as 'data/train-*{SUFFIX}')."
        )
    with ThreadPoolExecutor(max(1, min(num_workers, len(names)))) as pool:
        footers = list(pool.map(lambda name: read_footer(location, name), names))
    _check_same_schema(footers, location)
    chunks = tuple(ChunkEntry(f.name, f.rows, f.size) for f in footers)
    config = DatasetConfig(data_format=footers[0].types, item_loader=LOADER_NAME)
    listing = "\n".join(f"{f.name} {f.size} {f.rows}" for f in footers)
    version = hashlib.sha256(listing.encode()).hexdigest()[:16]
    return DatasetIndex(config, chunks, updated_at=version)
