"""``index.json``: the dataset's table of chunks and its encoding config, LitData's layout.

Our additions are keys LitData ignores: ``format_version`` and ``plugins`` at the top level and
``checksum`` per chunk. The file is always published atomically (temp file + rename).
"""

from __future__ import annotations

import json
import os
from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from litdata.core.dataset_file import decode_json
from litdata.core.errors import DatasetFormatError, DatasetNotFoundError
from litdata.core.guards import (
    check_count,
    check_member,
    check_version,
    is_member,
    read_metadata,
)
from litdata.core.imports import pip_install
from litdata.core.publish import publish_bytes

__all__ = [
    "FORMAT_VERSION",
    "INDEX_FILENAME",
    "MAX_KEY_SHARDS",
    "ChunkColumns",
    "ChunkEntry",
    "DatasetConfig",
    "DatasetIndex",
    "check_index",
    "index_bytes",
    "index_from_bytes",
    "load_index",
    "parse_chunk",
    "parse_index",
    "write_index",
]

INDEX_FILENAME = "index.json"
FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class ChunkEntry:
    """One chunk file, as listed in ``index.json`` (in global item order).

    Attributes:
        filename: The file name, relative to the dataset root.
        chunk_size: The number of items (token sequences for TokensLoader) in the chunk.
        chunk_bytes: The chunk's size before compression (header included).
        dim: The number of tokens for TokensLoader chunks, else ``None``.
        checksum: ``"crc32:<hex>"`` of the file as stored, or ``None`` (LitData datasets).
        extra: Other keys found in the entry, kept as they are.
    """

    filename: str
    chunk_size: int
    chunk_bytes: int
    dim: int | None = None
    checksum: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The entry as stored in ``index.json``."""
        data: dict[str, Any] = {
            **self.extra,
            "chunk_bytes": self.chunk_bytes,
            "chunk_size": self.chunk_size,
            "dim": self.dim,
            "filename": self.filename,
        }
        if self.checksum is not None:
            data["checksum"] = self.checksum
        return data


class ChunkColumns(Sequence[ChunkEntry]):
    """A chunk list held as arrays (a mapped compact index), its counts checked when mapped.

    Entries are made when asked for, each through the checks of an ``index.json`` entry;
    whatever needs every chunk's counts reads the arrays instead.
    """

    @property
    @abstractmethod
    def sizes(self) -> Any:
        """Each chunk's ``chunk_size`` (an int64 array)."""

    @property
    @abstractmethod
    def nbytes(self) -> Any:
        """Each chunk's ``chunk_bytes`` (an int64 array)."""

    @property
    @abstractmethod
    def dims(self) -> Any:
        """Each chunk's ``dim``, -1 where it has none (an int64 array)."""

    @property
    @abstractmethod
    def starts(self) -> Any:
        """The first item of each chunk, then the total (``len + 1`` int64 values)."""

    @property
    @abstractmethod
    def total(self) -> int:
        """The number of items of all chunks."""


@dataclass(frozen=True, slots=True)
class DatasetConfig:
    """How every chunk of a dataset is encoded (the ``config`` object of ``index.json``).

    Attributes:
        chunk_bytes: The writer's target bytes per chunk, if it used one.
        chunk_size: The writer's target items (tokens for TokensLoader) per chunk, if used.
        compression: The codec spec as given (``"zstd"``, ``"zstd:7"``), or ``None``.
        data_format: One serializer name per sample leaf, in leaf order.
        data_spec: The sample structure (PyTorch treespec JSON), or ``None``.
        encryption: ``{"algorithm": ..., "level": ...}`` or ``None``.
        item_loader: ``"PyTreeLoader"``, ``"TokensLoader"``... or ``None`` (old indexes).
        extra: Other keys found in the config, kept as they are.
    """

    chunk_bytes: int | None = None
    chunk_size: int | None = None
    compression: str | None = None
    data_format: tuple[str, ...] = ()
    data_spec: str | None = None
    encryption: Mapping[str, Any] | None = None
    item_loader: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def core(self) -> dict[str, Any]:
        """The keys every writer of one dataset must agree on (LitData's seven)."""
        return {
            "chunk_bytes": self.chunk_bytes,
            "chunk_size": self.chunk_size,
            "compression": self.compression,
            "data_format": list(self.data_format),
            "data_spec": self.data_spec,
            "encryption": dict(self.encryption) if self.encryption is not None else None,
            "item_loader": self.item_loader,
        }

    def differences(self, other: DatasetConfig, keys: Iterable[str] | None = None) -> list[str]:
        """The keys whose values differ between this config and ``other``, in ``keys`` order.

        Args:
            other: The config to compare with.
            keys: The keys to compare, from ``core()`` or ``extra``; all of ``core()`` when
                ``None``.
        """
        mine, theirs = {**self.extra, **self.core()}, {**other.extra, **other.core()}
        return [
            key
            for key in (self.core() if keys is None else keys)
            if mine.get(key) != theirs.get(key)
        ]

    def to_json(self) -> dict[str, Any]:
        """The config as stored in ``index.json`` (no ``item_loader`` key when unknown)."""
        data = {**self.extra, **self.core()}
        if self.item_loader is None:
            del data["item_loader"]
        return data


@dataclass(frozen=True, slots=True)
class DatasetIndex:
    """A parsed ``index.json``.

    Attributes:
        config: The encoding config.
        chunks: The chunks, in global item order.
        updated_at: When the index was written (``str(time.time())``), or ``None``.
        format_version: litdata's format version, or ``None`` for datasets written by LitData.
        plugins: For each plugin kind, the non-built-in plugins the dataset needs, as
            ``{name: "distribution version"}``.
        keys: The keys sidecar's description (``{"num_shards", "sharding", "version"}``),
            when the dataset has one.
        extra: Other top-level keys found in the index, kept as they are.
    """

    config: DatasetConfig
    chunks: Sequence[ChunkEntry]
    updated_at: str | None = None
    format_version: int | None = FORMAT_VERSION
    plugins: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    keys: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def num_items(self) -> int:
        """The number of items stored (``chunk_size`` summed over chunks)."""
        if isinstance(self.chunks, ChunkColumns):
            return self.chunks.total
        return sum(chunk.chunk_size for chunk in self.chunks)

    def to_json(self) -> dict[str, Any]:
        """The index as stored in ``index.json``."""
        return {**self.to_json_head(), "chunks": [chunk.to_json() for chunk in self.chunks]}

    def to_json_head(self) -> dict[str, Any]:
        """The index as stored in ``index.json``, without its ``chunks``."""
        data: dict[str, Any] = {**self.extra, "config": self.config.to_json()}
        if self.keys is not None:
            data["keys"] = dict(self.keys)
        if self.updated_at is not None:
            data["updated_at"] = self.updated_at
        if self.format_version is not None:
            data["format_version"] = self.format_version
        if self.plugins:
            data["plugins"] = {  # as parsed, whatever it holds (a plugin may be unknown here)
                kind: dict(names) if isinstance(names, Mapping) else names
                for kind, names in self.plugins.items()
            }
        return data


def _require(condition: bool, source: str, problem: str) -> None:
    if not condition:
        raise DatasetFormatError(
            f"{source} is not a valid litdata index: {problem}. Re-create the dataset with "
            f"optimize(), or restore the file from a backup."
        )


def parse_chunk(raw: Any, position: int, source: str) -> ChunkEntry:
    """Validate and parse entry ``position`` of the chunks of the index at ``source``."""
    _require(isinstance(raw, dict), source, f"chunks[{position}] is not an object")
    filename = check_member(raw.get("filename"), where=source, field=f"chunks[{position}].filename")
    for key in ("chunk_size", "chunk_bytes"):
        check_count(raw.get(key), where=source, field=f"chunks[{position}].{key}")
    dim = raw.get("dim")
    _require(dim is None or isinstance(dim, int), source, f"chunks[{position}].dim is {dim!r}")
    checksum = raw.get("checksum")
    _require(checksum is None or isinstance(checksum, str), source, f"chunks[{position}].checksum")
    known = {"filename", "chunk_size", "chunk_bytes", "dim", "checksum"}
    return ChunkEntry(
        filename=filename,
        chunk_size=raw["chunk_size"],
        chunk_bytes=raw["chunk_bytes"],
        dim=dim,
        checksum=checksum,
        extra={key: value for key, value in raw.items() if key not in known},
    )


def _parse_config(raw: Any, source: str, empty: bool = False) -> DatasetConfig:
    if raw is None and empty:  # LitData's index of an optimize that wrote no sample
        return DatasetConfig(item_loader=None)
    _require(isinstance(raw, dict), source, "'config' is missing or not an object")
    data_format = raw.get("data_format")
    _require(
        isinstance(data_format, list) and all(isinstance(name, str) for name in data_format),
        source,
        f"config.data_format is {data_format!r}, not a list of serializer names",
    )
    for key in ("chunk_bytes", "chunk_size"):
        value = raw.get(key)
        _require(value is None or isinstance(value, int), source, f"config.{key} is {value!r}")
    for key in ("compression", "data_spec", "item_loader"):
        value = raw.get(key)
        _require(value is None or isinstance(value, str), source, f"config.{key} is {value!r}")
    encryption = raw.get("encryption")
    _require(encryption is None or isinstance(encryption, dict), source, "config.encryption")
    known = {
        "chunk_bytes",
        "chunk_size",
        "compression",
        "data_format",
        "data_spec",
        "encryption",
        "item_loader",
    }
    return DatasetConfig(
        chunk_bytes=raw.get("chunk_bytes"),
        chunk_size=raw.get("chunk_size"),
        compression=raw.get("compression"),
        data_format=tuple(data_format),
        data_spec=raw.get("data_spec"),
        encryption=encryption,
        item_loader=raw.get("item_loader"),
        extra={key: value for key, value in raw.items() if key not in known},
    )


def parse_index(data: Any, source: str = INDEX_FILENAME) -> DatasetIndex:
    """Validate and parse the JSON object of an ``index.json``.

    Args:
        data: The decoded JSON.
        source: Where it came from, for error messages.

    Raises:
        DatasetFormatError: A key is missing or has the wrong type; the message names it.
    """
    _require(isinstance(data, dict), source, "the top level is not an object")
    chunks = data.get("chunks")
    _require(isinstance(chunks, list), source, "'chunks' is missing or not a list")
    version = data.get("format_version")
    _require(version is None or isinstance(version, int), source, "format_version")
    if version is not None and version > FORMAT_VERSION:
        raise DatasetFormatError(
            f"{source} uses litdata format version {version}, but this litdata reads versions "
            f"up to {FORMAT_VERSION}. Upgrade litdata: {pip_install()} from a newer checkout"
        )
    plugins = data.get("plugins", {})
    _require(isinstance(plugins, dict), source, "'plugins' is not an object")
    keys = data.get("keys")
    _require(keys is None or isinstance(keys, dict), source, "'keys' is not an object")
    updated_at = data.get("updated_at")
    known = {"chunks", "config", "updated_at", "format_version", "plugins", "keys"}
    index = DatasetIndex(
        config=_parse_config(data.get("config"), source, empty=not chunks),
        chunks=tuple(parse_chunk(raw, i, source) for i, raw in enumerate(chunks)),
        updated_at=None if updated_at is None else str(updated_at),
        format_version=version,
        plugins=plugins,
        keys=keys,
        extra={key: value for key, value in data.items() if key not in known},
    )
    return check_index(index, source)


#: The most key shards a dataset may say it has (each is a file to fetch).
MAX_KEY_SHARDS = 1 << 16


def check_index(index: DatasetIndex, source: str) -> DatasetIndex:
    """``index`` if what it says is safe to act on, whichever format adapter built it.

    The one check every index passes before the core joins a name to a path or sizes
    anything by a count: each chunk names a file inside the dataset's folder (sub-folders
    allowed), its counts are non-negative integers and its ``dim`` positive; ``updated_at``
    (which names the cache folder) is a version token; the keys sidecar's shard count is
    bounded. The counts of a mapped compact index (``ChunkColumns``) were checked as arrays
    when it was mapped, and each of its entries is checked when made. Formats bound item
    counts by the bytes that hold them in their decoders.

    Args:
        index: The index a format adapter returned.
        source: Where it came from, for messages.

    Raises:
        DatasetFormatError: A field is unsafe; the message names the file, field and value.
    """
    chunks = index.chunks
    if not isinstance(chunks, ChunkColumns) and not all(
        is_member(chunk.filename)
        and type(chunk.chunk_size) is int
        and type(chunk.chunk_bytes) is int
        and chunk.chunk_size >= 0
        and chunk.chunk_bytes >= 0
        and (chunk.dim is None or (type(chunk.dim) is int and chunk.dim > 0))
        for chunk in chunks
    ):  # one fast pass; the slow one names what is wrong
        for position, chunk in enumerate(chunks):
            field = f"chunks[{position}]"
            check_member(chunk.filename, where=source, field=f"{field}.filename", nested=True)
            check_count(chunk.chunk_size, where=source, field=f"{field}.chunk_size")
            check_count(chunk.chunk_bytes, where=source, field=f"{field}.chunk_bytes")
            if chunk.dim is not None:
                check_count(chunk.dim, where=source, field=f"{field}.dim", least=1)
    if index.updated_at is not None:
        check_version(index.updated_at, where=source)
    if index.keys is not None:
        shards = index.keys.get("num_shards", 1)
        check_count(shards, where=source, field="keys.num_shards", most=MAX_KEY_SHARDS)
    return index


def index_from_bytes(data: bytes, source: str) -> DatasetIndex:
    """Parse the bytes of an ``index.json`` read from ``source`` (a path or URL).

    Raises:
        DatasetFormatError: They are not valid JSON or not a valid index.
    """
    return parse_index(decode_json(data, where=source), source)


def load_index(path: str | os.PathLike[str]) -> DatasetIndex:
    """Read and validate a local ``index.json`` file (or the one inside a directory).

    Raises:
        DatasetNotFoundError: The file does not exist.
        DatasetFormatError: It is not valid JSON or not a valid index.
    """
    path = Path(path)
    if path.is_dir():
        path = path / INDEX_FILENAME
    try:
        data = read_metadata(path, where=str(path))
    except FileNotFoundError:
        raise DatasetNotFoundError(
            f"No dataset at {path.parent}: {path.name} does not exist. Did optimize() finish? "
            f"If per-worker indexes are there, litdata.complete_dataset() merges them."
        ) from None
    return index_from_bytes(data, str(path))


def write_index(path: str | os.PathLike[str], index: DatasetIndex) -> None:
    """Publish ``index`` as JSON at ``path``, atomically, with sorted keys as LitData writes."""
    publish_bytes(path, index_bytes(index), durable=True)


def index_bytes(index: DatasetIndex) -> bytes:
    """``index`` as ``index.json`` stores it: JSON with sorted keys, as LitData writes it."""
    return json.dumps(index.to_json(), sort_keys=True).encode()
