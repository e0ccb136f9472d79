"""The keys sidecar: look samples up by an id (``ds["id"]``), LitData's layout.

``optimize(..., key_fn=...)`` records each sample's key; every writer keeps its
``<rank>.keys.parquet`` (its samples' positions and keys), and the merge writes
``keys/shard-00000.parquet``: columns ``key`` (Int64 when every key is an int, else Utf8),
``index`` (the global sample index), ``chunk_index`` and ``chunk_offset``, sorted by key, in
row groups, zstd-compressed (written with pyarrow, which, unlike polars, works in forked
workers); ``index.json`` gains ``"keys": {"num_shards", "sharding",
"version"}``. A lookup bisects the row groups' key ranges (kept from the file's footer) and
reads one row group: it never loads every key.
"""

from __future__ import annotations

import bisect
import hashlib
import numbers
import os
import re
import shutil
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from litdata.core import config
from litdata.core.dataset_file import open_regular
from litdata.core.errors import DatasetFormatError
from litdata.core.formats import ItemLoader
from litdata.core.imports import require
from litdata.core.index import DatasetIndex
from litdata.core.location import Location
from litdata.core.publish import publishing
from litdata.core.registry import hooks
from litdata.engine.cache.directory import make_folder

__all__ = [
    "KEYS_DIR",
    "KeyIndex",
    "KeyRecorder",
    "KeysPart",
    "check_key_fn",
    "dataset_keys_parts",
    "keys_filename",
    "merge_keys",
    "normalize_key",
    "remove_keys",
    "shard_name",
    "writer_keys_names",
    "writer_keys_parts",
]

KEYS_DIR = "keys"
VERSION = 1
#: Rows per row group: a lookup reads one.
ROW_GROUP = 65_536
_GROUPS_KEPT = 8
_SHOWN = 5
_PARQUET_CODEC = "zstd"  # not a plugin name: parquet's own
_EXTRA = "parquet"  # not a plugin name: the pip extra that installs pyarrow
_WRITER_KEYS = re.compile(r"^\d+\.keys\.parquet$")


def keys_filename(rank: int) -> str:
    """A writer's keys file, ``<rank>.keys.parquet``."""
    return f"{rank}.keys.parquet"


def shard_name(shard: int) -> str:
    """The name of a keys shard inside ``keys/``."""
    return f"shard-{shard:05d}.parquet"


def normalize_key(key: Any) -> int | str:
    """A key as the sidecar stores it: an ``int`` or a ``str``.

    Raises:
        TypeError: ``bool``, ``None`` or another type (naming it).
    """
    if isinstance(key, bool) or key is None:
        raise TypeError(f"Keys are ints or strings, not {key!r}.")
    if isinstance(key, bytes | bytearray | memoryview):
        return bytes(key).decode()
    if isinstance(key, numbers.Integral):
        return int(key)
    if isinstance(key, str):
        return key
    raise TypeError(f"Keys are ints or strings, not a {type(key).__qualname__} ({key!r}).")


def _shard_of(key: int | str, num_shards: int) -> int:
    digest = hashlib.blake2b(str(key).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % num_shards


def _arrow() -> tuple[Any, Any, Any]:
    """pyarrow, its parquet and compute modules: unlike polars, safe in forked workers."""
    purpose = "the keys sidecar"
    return (
        require("pyarrow", extra=_EXTRA, purpose=purpose),
        require("pyarrow.parquet", extra=_EXTRA, purpose=purpose),
        require("pyarrow.compute", extra=_EXTRA, purpose=purpose),
    )


def check_key_fn(
    key_fn: Callable[[Any], Any] | None, item_loader: ItemLoader | type[ItemLoader]
) -> None:
    """Refuse ``key_fn`` for datasets whose items are not samples.

    Raises:
        ValueError: ``item_loader``'s items are not the samples as written.
    """
    if key_fn is not None and not item_loader.sample_items:
        raise ValueError(
            f"key_fn names samples, but {item_loader.name} reads windows across samples: keys "
            f"need a dataset whose items are its samples ({hooks.default_item_loader()})."
        )


class KeyRecorder:
    """Records the key of every sample one writer writes.

    Args:
        key_fn: ``sample -> key`` (an int or a str).
    """

    def __init__(self, key_fn: Callable[[Any], Any]) -> None:
        self.key_fn = key_fn
        self.keys: list[int | str] = []

    def record(self, sample: Any) -> None:
        """Record the key of the writer's next sample.

        Raises:
            TypeError: ``key_fn`` returned a bool, ``None`` or another type.
        """
        self.keys.append(normalize_key(self.key_fn(sample)))

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write ``<rank>.keys.parquet``: each sample's position in this writer, and its key."""
        arrow, parquet, _ = _arrow()
        ints = all(isinstance(key, int) for key in self.keys)
        keys = (
            arrow.array(self.keys, arrow.int64())
            if ints
            else arrow.array([str(key) for key in self.keys], arrow.string())
        )
        table = arrow.table({"index": np.arange(len(self.keys), dtype=np.int64), "key": keys})
        with publishing(path) as temporary:
            parquet.write_table(table, temporary, compression=_PARQUET_CODEC)


@dataclass(frozen=True)
class KeysPart:
    """One file of keys to merge: its columns ``key`` and ``index``, offset by ``offset``.

    Attributes:
        location: The folder holding it.
        name: Its name there.
        offset: Added to its ``index`` column (the global index of its first sample).
    """

    location: Location
    name: str
    offset: int = 0


def dataset_keys_parts(location: Location, index: DatasetIndex, offset: int = 0) -> list[KeysPart]:
    """The keys files of the dataset at ``location`` (none when it has no sidecar)."""
    if index.keys is None:
        return []
    folder = location.child(KEYS_DIR)
    return [
        KeysPart(folder, shard_name(shard), offset)
        for shard in range(int(index.keys.get("num_shards", 1)))
    ]


def writer_keys_parts(
    location: Location, writers: Sequence[tuple[int, DatasetIndex]], offset: int
) -> list[KeysPart]:
    """The ``<rank>.keys.parquet`` of each writer in ``writers``.

    Args:
        location: The dataset's location.
        writers: ``(rank, per-writer index)``, in merge order.
        offset: The global index of the first writer's first sample.

    Raises:
        DatasetFormatError: Some writers recorded keys and others did not.
    """
    names = set(location.storage.list(location.url))
    parts, unkeyed = [], []
    for rank, index in writers:
        keys = keys_filename(rank)
        if keys in names:
            parts.append(KeysPart(location, keys, offset))
        else:
            unkeyed.append(f"rank {rank}")
        offset += index.num_items
    if parts and unkeyed:
        raise DatasetFormatError(
            f"Some writers of {location.url} recorded keys and others ({', '.join(unkeyed)}) "
            f"did not: pass the same key_fn to every writer."
        )
    return parts


def writer_keys_names(names: Iterable[str]) -> list[str]:
    """The writers' keys files (``<rank>.keys.parquet``) among ``names``."""
    return sorted(name for name in names if _WRITER_KEYS.match(name))


def merge_keys(
    target: Location,
    parts: Sequence[KeysPart],
    chunk_sizes: Sequence[int],
    num_shards: int = 1,
) -> dict[str, Any]:
    """Merge keys files into ``keys/`` at ``target``; return the index's ``keys`` section.

    Args:
        target: The dataset's location.
        parts: The keys files, each with the global index of its first sample.
        chunk_sizes: The items of every chunk of the merged dataset, in order.
        num_shards: Split the keys over this many shards, by a hash of each key.

    Raises:
        DatasetFormatError: Two samples have the same key.
    """
    arrow, parquet, compute = _arrow()
    tables = []
    for part in parts:
        data = arrow.BufferReader(part.location.read(part.name))
        table = parquet.read_table(data, columns=["key", "index"])
        index = compute.add(table["index"].cast(arrow.int64()), part.offset)
        tables.append(arrow.table({"key": table["key"], "index": index}))
    ints = all(arrow.types.is_integer(table.schema.field("key").type) for table in tables)
    kind = arrow.int64() if ints else arrow.string()
    tables = [table.set_column(0, "key", table["key"].cast(kind)) for table in tables]
    merged = arrow.concat_tables(tables).combine_chunks()
    merged = merged.take(compute.sort_indices(merged, sort_keys=[("key", "ascending")]))
    _refuse_duplicates(merged["key"], target, compute)
    ends = np.cumsum(np.asarray(chunk_sizes, dtype=np.int64))
    index = merged["index"].to_numpy()
    merged = merged.append_column(
        "chunk_index", arrow.array(np.searchsorted(ends, index, side="right").astype(np.int32))
    ).append_column("chunk_offset", arrow.array(index.astype(np.int32)))
    folder = target.child(KEYS_DIR)
    shards = None
    if num_shards > 1:
        shards = np.array([_shard_of(key, num_shards) for key in merged["key"].to_pylist()])
    for shard in range(num_shards):
        rows = merged if shards is None else merged.filter(arrow.array(shards == shard))
        buffer = arrow.BufferOutputStream()
        parquet.write_table(rows, buffer, compression=_PARQUET_CODEC, row_group_size=ROW_GROUP)
        folder.write(shard_name(shard), buffer.getvalue().to_pybytes())
    sharding = "hash" if num_shards > 1 else "none"  # not a plugin name
    return {"num_shards": num_shards, "sharding": sharding, "version": VERSION}


def remove_keys(location: Location) -> None:
    """Delete the keys sidecar at ``location`` (an old dataset's, being replaced)."""
    folder = location.child(KEYS_DIR)
    local = folder.local_path
    if local is not None:
        shutil.rmtree(local, ignore_errors=True)
        return
    for name in folder.storage.list(folder.url):
        folder.storage.delete(folder.join(name))


def _refuse_duplicates(keys: Any, target: Location, compute: Any) -> None:
    """Raise when two neighbours of the sorted ``keys`` are equal.

    Raises:
        DatasetFormatError: naming a few of the duplicated keys.
    """
    if len(keys) < 2:  # noqa: PLR2004  # a duplicate needs two
        return
    same = compute.equal(keys.slice(1), keys.slice(0, len(keys) - 1))
    duplicated = compute.unique(keys.slice(1).filter(same)).to_pylist()
    if duplicated:
        more = f" (and {len(duplicated) - _SHOWN} more)" if len(duplicated) > _SHOWN else ""
        raise DatasetFormatError(
            f"Duplicate keys are not allowed in the keys sidecar: {duplicated[:_SHOWN]}{more} "
            f"each name several samples of {target.url}. Make key_fn return a unique id."
        )


class _Shard:
    """One keys shard: its row groups' key ranges, and the groups read last."""

    def __init__(self, path: str) -> None:
        parquet = require("pyarrow.parquet", extra=_EXTRA, purpose="the keys sidecar")
        self.path = path
        open_regular(path, where="The keys sidecar").close()  # never a FIFO's endless open
        try:
            self.file = parquet.ParquetFile(path)
            metadata = self.file.metadata
            column = metadata.schema.names.index("key")
            metadata.schema.names.index("index")
        except (ValueError, OSError) as error:  # pyarrow's ArrowInvalid is a ValueError
            if isinstance(error, (DatasetFormatError, FileNotFoundError)):
                raise
            raise self._bad(f"it is not a keys shard ({type(error).__name__}: {error})") from None
        self.ints = metadata.schema.column(column).physical_type == "INT64"
        self._groups: OrderedDict[int, tuple[_SortedKeys, np.ndarray[Any, Any]]] = OrderedDict()
        self.mins: list[Any] = []
        self.maxs: list[Any] = []
        self.groups: list[int] = []  # the row groups holding rows, by key
        for group in range(metadata.num_row_groups):
            if metadata.row_group(group).num_rows == 0:
                continue
            statistics = metadata.row_group(group).column(column).statistics
            if statistics is not None and statistics.has_min_max:
                low, high = statistics.min, statistics.max
            else:  # keys too long for the footer's statistics: read the group's ends
                low, high = self._group(group)[0].bounds()
            self.groups.append(group)
            self.mins.append(low)
            self.maxs.append(high)

    def _bad(self, problem: str) -> DatasetFormatError:
        return DatasetFormatError(
            f"The keys sidecar {self.path} is damaged: {problem}. Rebuild it with "
            f"build_keys_index(), or re-create the dataset."
        )

    def find(self, key: int | str) -> int | None:
        position = bisect.bisect_right(self.mins, key) - 1
        if position < 0 or key > self.maxs[position]:
            return None
        keys, indexes = self._group(self.groups[position])
        found = keys.position(key)
        if found is None:
            return None
        index = int(indexes[found])
        if index < 0:
            raise self._bad(f"it gives key {key!r} the sample index {index}")
        return index

    def _group(self, group: int) -> tuple[_SortedKeys, np.ndarray[Any, Any]]:
        found = self._groups.get(group)
        if found is None:
            try:
                table = self.file.read_row_group(group, columns=["key", "index"])
            except (ValueError, OSError) as error:
                raise self._bad(f"row group {group} cannot be read ({error})") from None
            found = (_SortedKeys(table.column("key")), table.column("index").to_numpy())
            self._groups[group] = found
            if len(self._groups) > _GROUPS_KEPT:
                self._groups.popitem(last=False)
        return found


class _SortedKeys:
    """One row group's sorted keys, searched in Arrow's own buffers (no Python object per key)."""

    def __init__(self, column: Any) -> None:
        array = column.combine_chunks() if hasattr(column, "combine_chunks") else column
        types = require("pyarrow.types", extra=_EXTRA, purpose="the keys sidecar")
        self.strings = not types.is_integer(array.type)
        if not self.strings:
            self._ints = array.to_numpy()
            return
        kind = np.int64 if "large" in str(array.type) else np.int32
        _, offsets, data = array.buffers()
        self._offsets = np.frombuffer(offsets, dtype=kind)[
            array.offset : array.offset + len(array) + 1
        ]
        self._data = memoryview(data) if data is not None else memoryview(b"")
        self._count = len(array)

    def bounds(self) -> tuple[int | str, int | str]:
        """The first and the last key."""
        if not self.strings:
            return int(self._ints[0]), int(self._ints[-1])
        return self._key(0).decode(), self._key(self._count - 1).decode()

    def position(self, key: int | str) -> int | None:
        """The row of ``key``, or ``None``."""
        if not self.strings:
            row = int(np.searchsorted(self._ints, key))
            return row if row < len(self._ints) and self._ints[row] == key else None
        wanted = str(key).encode()
        low, high = 0, self._count
        while low < high:  # bisect on the UTF-8 bytes: their order is the strings' order
            middle = (low + high) // 2
            if self._key(middle) < wanted:
                low = middle + 1
            else:
                high = middle
        return low if low < self._count and self._key(low) == wanted else None

    def _key(self, row: int) -> bytes:
        return bytes(self._data[self._offsets[row] : self._offsets[row + 1]])


class KeyIndex:
    """Finds the global index of a sample by its key.

    Args:
        shards: The local paths of the keys shards, in shard order.
    """

    def __init__(self, shards: Iterable[str]) -> None:
        self._shards = [_Shard(path) for path in shards]
        if not self._shards:
            raise DatasetFormatError("The keys sidecar has no shard.")

    @classmethod
    def open(cls, location: Location, info: Mapping[str, Any], cache: Path) -> KeyIndex:
        """The keys of the dataset at ``location`` (shards downloaded into ``cache`` if remote).

        Raises:
            KeyError: The dataset has no keys sidecar.
        """
        folder = location.child(KEYS_DIR)
        paths = []
        for shard in range(int(info.get("num_shards", 1))):
            name = shard_name(shard)
            local = folder.local_path
            if local is not None:
                paths.append(os.path.join(local, name))
                continue
            target = cache / KEYS_DIR / name
            if not target.exists():
                make_folder(target.parent)
                with publishing(target, mode=config.cache_mode()) as temporary:
                    folder.storage.download(folder.join(name), str(temporary))
            paths.append(str(target))
        return cls(paths)

    def find(self, key: Any) -> int:
        """The global index of the sample with ``key``.

        Raises:
            KeyError: No sample has that key (the key itself, as LitData raises).
            TypeError: ``key`` is not an int or a str.
        """
        normalized = normalize_key(key)
        shard = self._shards[
            _shard_of(normalized, len(self._shards)) if len(self._shards) > 1 else 0
        ]
        if shard.ints and not isinstance(normalized, int):
            raise KeyError(key)
        found = shard.find(normalized if shard.ints else str(normalized))
        if found is None:
            raise KeyError(key)
        return found
