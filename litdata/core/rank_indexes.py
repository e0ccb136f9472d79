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
from litdata.core.storage.location import Location, resolve

__all__ = ["merge_rank_indexes", "publish_index", "rank_index_filename", "rank_index_names"]

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
) -> DatasetIndex:
    """Publish a new ``index.json`` at ``location`` listing ``chunks``, stamped with the time.

    Args:
        location: The dataset's location.
        config: The dataset's config.
        chunks: Its chunks, in global item order.
        plugin_sets: The ``plugins`` of each index the chunks come from, merged into one.

    Returns:
        The index published.
    """
    location = resolve(location)
    plugins: dict[str, dict[str, str]] = {}
    for extra in plugin_sets:
        for kind, names in extra.items():
            plugins.setdefault(kind, {}).update(names)
    index = DatasetIndex(config, tuple(chunks), str(time.time()), FORMAT_VERSION, plugins)
    location.write(INDEX_FILENAME, index_bytes(index))
    return index


def merge_rank_indexes(
    location: Location | str | os.PathLike[str], existing: DatasetIndex | None = None
) -> DatasetIndex:
    """Merge the per-writer indexes at ``location`` into ``index.json``, then delete them.

    Chunks are concatenated in rank order after those of ``existing`` (append mode). The
    ``index.json`` appears atomically; the per-writer indexes are deleted only after it exists.

    Raises:
        DatasetFormatError: Two writers (or the existing dataset) used different configs.
        DatasetNotFoundError: There is nothing to merge.
    """
    location = resolve(location)
    shards = rank_index_names(location.storage.list(location.url))
    if not shards and existing is None:
        raise DatasetNotFoundError(
            f"No per-writer index files (<rank>.index.json) at {location.url}: nothing to merge."
        )
    parts = [] if existing is None else [existing]
    for shard in shards:
        part = index_from_bytes(location.read(shard), location.join(shard))
        different = part.config.differences(parts[0].config) if parts else []
        if different:
            raise DatasetFormatError(
                f"{shard} was written with a config that differs from the rest of the dataset at "
                f"{location.url} in {', '.join(different)}:\n  {part.config.core()}\nvs\n"
                f"  {parts[0].config.core()}\nAll writers of one dataset must use the same "
                f"chunk size, compression and sample structure."
            )
        parts.append(part)
    merged = publish_index(
        location,
        parts[0].config,
        (chunk for part in parts for chunk in part.chunks),
        (part.plugins for part in parts),
    )
    for shard in shards:
        location.storage.delete(location.join(shard))
    return merged
