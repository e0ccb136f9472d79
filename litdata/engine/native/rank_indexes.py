"""Per-writer indexes (``<rank>.index.json``) and their merge into ``index.json``, anywhere.

Each writer of a dataset lists its chunks in its own index; once every writer is done, the
indexes are merged in natural rank order (after the chunks of an existing dataset, when
appending) and ``index.json`` is published last, atomically, local or remote alike.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from litdata.core.compact import COMPACT_FILENAME, compact_bytes, index_digest
from litdata.core.errors import DatasetFormatError, DatasetNotFoundError
from litdata.core.index import (
    FORMAT_VERSION,
    INDEX_FILENAME,
    ChunkEntry,
    DatasetConfig,
    DatasetIndex,
    index_bytes,
    index_from_bytes,
)
from litdata.core.location import Location
from litdata.engine.boundary.resolve import resolve
from litdata.engine.cache.directory import cache_home
from litdata.engine.items.widening import agreed_config, config_conflict
from litdata.engine.native.compact_index import forget_node_copy
from litdata.engine.native.keys import (
    dataset_keys_parts,
    merge_keys,
    writer_keys_names,
    writer_keys_parts,
)

T = TypeVar("T")
#: How many per-writer files a merge reads (or deletes) at once.
REQUESTS_AT_ONCE = 16

__all__ = [
    "merge_rank_indexes",
    "merged_in_memory",
    "publish_index",
    "rank_index_filename",
    "rank_index_names",
    "read_rank_indexes",
]

_RANK_INDEX = re.compile(r"^(\d+)[.-]index\.json$")


def rank_index_filename(rank: int) -> str:
    """The per-writer index file name, ``<rank>.index.json``."""
    return f"{rank}.index.json"


def rank_index_names(names: Iterable[str]) -> list[str]:
    """The per-writer and per-node indexes among ``names``, in natural rank order.

    Per-writer indexes are ``<rank>.index.json``, per-node ones ``<node>-index.json``.
    """
    found = [(int(match.group(1)), name) for name in names if (match := _RANK_INDEX.match(name))]
    return [name for _, name in sorted(found)]


def publish_index(
    location: Location | str | os.PathLike[str],
    config: DatasetConfig,
    chunks: Iterable[ChunkEntry],
    plugin_sets: Iterable[Mapping[str, Mapping[str, str]]],
    keys: Mapping[str, Any] | None = None,
) -> DatasetIndex:
    """Publish a new ``index.json`` at ``location`` listing ``chunks``, stamped with the time.

    Its compact index (``index.compact``, :mod:`litdata.core.compact`) is published first. A
    remote dataset's copy of its previous ``index.json`` kept by this node (in the default
    cache) is removed, so that reading it next on this machine fetches the new one.

    Args:
        location: The dataset's location.
        config: The dataset's config.
        chunks: Its chunks, in global item order.
        plugin_sets: The ``plugins`` of each index the chunks come from, merged into one.
        keys: The keys sidecar's description, when the dataset has one.

    Returns:
        The index published.
    """
    location = resolve(location)
    index = DatasetIndex(
        config, tuple(chunks), str(time.time()), FORMAT_VERSION, _plugins(plugin_sets), keys=keys
    )
    data = index_bytes(index)
    # The compact index first: index.json appears last, and with it a fresh compact index.
    location.write(COMPACT_FILENAME, compact_bytes(index, index_digest(data)))
    location.write(INDEX_FILENAME, data)
    if location.local_path is None:  # this node's copy of the old one is stale now
        forget_node_copy(cache_home(location.url))
    return index


def _plugins(plugin_sets: Iterable[Mapping[str, Mapping[str, str]]]) -> dict[str, dict[str, str]]:
    """The ``plugins`` of several indexes, merged into one."""
    plugins: dict[str, dict[str, str]] = {}
    for extra in plugin_sets:
        for kind, names in extra.items():
            plugins.setdefault(kind, {}).update(names)
    return plugins


def merge_rank_indexes(
    location: Location | str | os.PathLike[str],
    existing: DatasetIndex | None = None,
    empty: DatasetConfig | None = None,
) -> DatasetIndex:
    """Merge the per-writer indexes at ``location`` into ``index.json``, then delete them.

    The writers' keys files (``<rank>.keys.parquet``), when they recorded keys, are merged
    into the ``keys/`` sidecar first (after the existing dataset's keys, in append).

    Args:
        location: The dataset's location.
        existing: The dataset being appended to: its chunks come first.
        empty: The config of an empty dataset to publish when no writer wrote a sample (an
            ``optimize`` whose ``fn`` returned nothing); without it, that is an error.

    Raises:
        DatasetNotFoundError: There is nothing to merge (and no ``empty`` config).
        DatasetFormatError: The writers' configs differ, or their keys cannot be merged.
    """
    location = resolve(location)
    parts = read_rank_indexes(location)
    if not parts and existing is None and empty is not None:
        return publish_index(location, empty, [], [])
    if not parts and existing is None:
        raise _nothing_to_merge(location)
    ordered, chunks, config = _combined(location, existing, parts)
    keys = _merge_keys(location, existing, parts, chunks)
    merged = publish_index(location, config, chunks, (part.plugins for part in ordered), keys=keys)
    leftovers = [
        *(name for name, _ in parts),
        *writer_keys_names(location.storage.list(location.url)),
    ]
    _each(lambda name: location.storage.delete(location.join(name)), leftovers)
    return merged


def _nothing_to_merge(location: Location) -> DatasetNotFoundError:
    return DatasetNotFoundError(
        f"No per-writer index files (<rank>.index.json) at {location.url}: nothing to merge."
    )


def merged_in_memory(location: Location) -> DatasetIndex:
    """The index ``merge_rank_indexes`` would publish at ``location``, built in memory only.

    Nothing is written or deleted, and the index has no time stamp (every process that builds
    it gets the same one) and no keys sidecar (the writers' keys files are not merged).

    Raises:
        DatasetNotFoundError: There is no per-writer index.
        DatasetFormatError: The writers' configs differ.
    """
    parts = read_rank_indexes(location)
    if not parts:
        raise _nothing_to_merge(location)
    ordered, chunks, config = _combined(location, None, parts)
    plugins = _plugins(part.plugins for part in ordered)
    return DatasetIndex(config, tuple(chunks), None, FORMAT_VERSION, plugins)


def _combined(
    location: Location, existing: DatasetIndex | None, parts: list[tuple[str, DatasetIndex]]
) -> tuple[list[DatasetIndex], list[ChunkEntry], DatasetConfig]:
    """The indexes to merge (the existing dataset's first), their chunks, and their config.

    The config is that of them all: a field whose names widen to one is recorded under it.

    Raises:
        DatasetFormatError: A writer's config differs from the rest of the dataset's.
    """
    # An empty existing dataset (no sample yet) has no sample structure to agree with.
    ordered = ([existing] if existing is not None and existing.chunks else []) + [
        part for _, part in parts
    ]
    if not ordered and existing is not None:  # nothing added to an empty dataset
        ordered = [existing]
    config = ordered[0].config
    for name, part in parts:
        agreed = agreed_config(config, part.config)
        if agreed is None:
            raise config_conflict(
                part.config,
                config,
                mine=name,
                theirs="the writers before it" if existing is None else "the dataset",
                where=location.url,
            )
        config = agreed
    # A chunk already listed (a resumed append whose last run had published) is not doubled.
    chunks = list(ordered[0].chunks)
    listed = {chunk.filename for chunk in chunks}
    chunks += [c for part in ordered[1:] for c in part.chunks if c.filename not in listed]
    return ordered, chunks, config


def _merge_keys(
    location: Location,
    existing: DatasetIndex | None,
    parts: list[tuple[str, DatasetIndex]],
    chunks: list[ChunkEntry],
) -> dict[str, Any] | None:
    """Merge the writers' keys (after the existing dataset's); ``None`` when none recorded any."""
    start = existing.num_items if existing is not None else 0
    writers = [(_rank_of(name), part) for name, part in parts]
    new = writer_keys_parts(location, writers, start)
    old = dataset_keys_parts(location, existing) if existing is not None else []
    if existing is not None and existing.num_items and parts and bool(old) != bool(new):
        has, lacks = (
            ("the dataset", "the new samples") if old else ("the new samples", "the dataset")
        )
        raise DatasetFormatError(
            f"{has.capitalize()} at {location.url} have keys and {lacks} do not: pass the "
            f"dataset's key_fn when appending, or build_keys_index() the dataset first."
        )
    if not new and not old:
        return None
    return merge_keys(location, [*old, *new], [chunk.chunk_size for chunk in chunks])


def _rank_of(name: str) -> int:
    return int(_RANK_INDEX.match(name).group(1))  # type: ignore[union-attr]  # a rank index name


def read_rank_indexes(location: Location) -> list[tuple[str, DatasetIndex]]:
    """The per-writer indexes at ``location``, parsed, in natural rank order.

    They are fetched ``REQUESTS_AT_ONCE`` at a time: 512 writers' files on object storage
    cost a few round trips, not 512 of them one after the other.
    """
    names = rank_index_names(location.storage.list(location.url))
    texts = _each(location.read, names)
    return [
        (name, index_from_bytes(text, location.join(name)))
        for name, text in zip(names, texts, strict=True)
    ]


def _each(action: Callable[[str], T], names: Sequence[str]) -> list[T]:
    """``action`` of every name, several at once, in order; the first failure is raised."""
    if len(names) <= 1:
        return [action(name) for name in names]
    with ThreadPoolExecutor(min(REQUESTS_AT_ONCE, len(names))) as pool:
        return list(pool.map(action, names))
