"""Per-writer indexes (``<rank>.index.json``) and their merge into ``index.json``, anywhere.

Each writer of a dataset lists its chunks in its own index; once every writer is done, the
indexes are merged in natural rank order (after the chunks of an existing dataset, when
appending) and ``index.json`` is published last, atomically, local or remote alike.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

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
from litdata.core.keys import (
    dataset_keys_parts,
    merge_keys,
    writer_keys_names,
    writer_keys_parts,
)
from litdata.core.storage.location import Location, resolve

__all__ = [
    "merge_rank_indexes",
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
    plugins: dict[str, dict[str, str]] = {}
    for extra in plugin_sets:
        for kind, names in extra.items():
            plugins.setdefault(kind, {}).update(names)
    index = DatasetIndex(
        config, tuple(chunks), str(time.time()), FORMAT_VERSION, plugins, keys=keys
    )
    location.write(INDEX_FILENAME, index_bytes(index))
    return index


def merge_rank_indexes(
    location: Location | str | os.PathLike[str], existing: DatasetIndex | None = None
) -> DatasetIndex:
    """Merge the per-writer indexes at ``location`` into ``index.json``, then delete them.

    The writers' keys files (``<rank>.keys.parquet``), when they recorded keys, are merged
    into the ``keys/`` sidecar first (after the existing dataset's keys, in append).

    Args:
        location: The dataset's location.
        existing: The dataset being appended to: its chunks come first.

    Raises:
        DatasetNotFoundError: There is nothing to merge.
        DatasetFormatError: The writers' configs differ, or their keys cannot be merged.
    """
    location = resolve(location)
    parts = read_rank_indexes(location)
    if not parts and existing is None:
        raise DatasetNotFoundError(
            f"No per-writer index files (<rank>.index.json) at {location.url}: nothing to merge."
        )
    ordered = ([] if existing is None else [existing]) + [part for _, part in parts]
    for name, part in parts:
        different = part.config.differences(ordered[0].config)
        if different:
            raise DatasetFormatError(
                f"{name} was written with a config that differs from the rest of the dataset at "
                f"{location.url} in {', '.join(different)}:\n  {part.config.core()}\nvs\n"
                f"  {ordered[0].config.core()}\nAll writers of one dataset must use the same "
                f"chunk size, compression and sample structure."
            )
    chunks = [chunk for part in ordered for chunk in part.chunks]
    keys = _merge_keys(location, existing, parts, chunks)
    merged = publish_index(
        location, ordered[0].config, chunks, (part.plugins for part in ordered), keys=keys
    )
    for name in [
        *(name for name, _ in parts),
        *writer_keys_names(location.storage.list(location.url)),
    ]:
        location.storage.delete(location.join(name))
    return merged


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
    """The per-writer indexes at ``location``, parsed, in natural rank order."""
    names = rank_index_names(location.storage.list(location.url))
    return [(name, index_from_bytes(location.read(name), location.join(name))) for name in names]
