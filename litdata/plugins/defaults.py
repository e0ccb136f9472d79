"""litdata's own hook implementations: the defaults, run after any plugin's (``trylast``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from litdata.core.index import INDEX_FILENAME, ChunkColumns, ChunkEntry, DatasetIndex
from litdata.core.location import scheme_of
from litdata.core.registry.hookspecs import hookimpl
from litdata.engine.native.rank_indexes import rank_index_names

if TYPE_CHECKING:
    from litdata.core.location import Location

__all__ = [
    "litdata_default_executor",
    "litdata_default_item_loader",
    "litdata_detect_format",
    "litdata_resolve_storage",
    "litdata_shuffle_for",
]


@hookimpl(trylast=True)
def litdata_resolve_storage(url: str) -> str | None:
    """The URL's scheme names its backend; a plain path is ``file``."""
    return scheme_of(url) or "file"


@hookimpl(trylast=True)
def litdata_detect_format(location: Location, index: DatasetIndex | None) -> str | None:
    """Native chunks: a location with ``index.json``, a supplied index, or per-writer indexes.

    Per-writer indexes (``<rank>.index.json``) whose merge did not run are merged on open.
    """
    if index is not None or location.storage.probe(location.join(INDEX_FILENAME)):
        return "chunks"
    if location.pattern is None and rank_index_names(location.storage.list(location.url)):
        return "chunks"
    return None


@hookimpl(trylast=True)
def litdata_shuffle_for(url: str, shuffle: bool) -> str | None:
    """A full shuffle of chunks and items, or index order."""
    return "full" if shuffle else "none"


@hookimpl(trylast=True)
def litdata_default_item_loader(index: DatasetIndex | None) -> str | None:
    """PyTree items; token windows for an old index (no ``item_loader``) that counts tokens."""
    counted = index is not None and bool(index.chunks) and len(index.config.data_format) == 1
    if counted and index is not None and _all_have_dims(index.chunks):
        return "TokensLoader"
    return "PyTreeLoader"


@hookimpl(trylast=True)
def litdata_default_executor() -> str | None:
    """Processes on this machine."""
    return "local"


def _all_have_dims(chunks: Sequence[ChunkEntry]) -> bool:
    if isinstance(chunks, ChunkColumns):
        return bool((chunks.dims >= 0).all())
    return all(chunk.dim is not None for chunk in chunks)
