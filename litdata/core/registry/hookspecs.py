"""Hook specifications: the few decisions several plugins take part in, and chunk events.

Hooks are called with keyword arguments; an implementation may accept a subset of them.
None is called per sample. Every hook is documented in ``docs/plugins/hooks.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from litdata.core.index import DatasetIndex
    from litdata.core.location import Location

__all__ = ["hookimpl", "hookspec"]

hookspec = pluggy.HookspecMarker("litdata")
hookimpl = pluggy.HookimplMarker("litdata")


@hookspec(firstresult=True)
def litdata_resolve_storage(url: str) -> str | None:
    """Name the storage backend (a key of the ``storage`` registry) that serves ``url``.

    The built-in implementation (``trylast``) maps the URL scheme to the backend of that name,
    and local paths to ``"file"``. A plugin can claim paths first, e.g. NFS mounts.

    Args:
        url: A URL (``s3://bucket/prefix``) or a local path.

    Returns:
        A storage backend name, or ``None`` to let the next implementation decide.
    """


@hookspec(firstresult=True)
def litdata_detect_format(location: Location, index: DatasetIndex | None) -> str | None:
    """Name the dataset format (a key of the ``formats`` registry) of the data at ``location``.

    The built-in implementation (``trylast``) answers ``"chunks"`` when the location holds an
    ``index.json``, or when the reader supplies an index (``index_path=``). Format plugins
    answer for their own layouts (Parquet files, MDS shards) and indexes.

    Args:
        location: Where the data is: its ``url``, and the ``storage`` backend to look with.
        index: The index the reader supplies (``index_path=``), if any.

    Returns:
        A format name, or ``None`` to let the next implementation decide.
    """


@hookspec(firstresult=True)
def litdata_shuffle_for(url: str, shuffle: bool) -> str | None:
    """Choose the shuffle (a ``shuffle`` registry name, with options) for a dataset.

    ``StreamingDataset(shuffle=True)`` and ``shuffle=False`` ask this hook. The built-in
    implementation (``trylast``) answers ``"full"`` or ``"none"``; the POSIX-fast plugin answers
    ``"window"`` for shuffled local datasets on network filesystems.

    Args:
        url: The dataset's location (a URL or a local path).
        shuffle: Whether the user asked for a shuffled order.

    Returns:
        A shuffle spec such as ``"window"`` or ``"window:size=8"``, or ``None`` to let the
        next implementation decide.
    """


@hookspec(firstresult=True)
def litdata_default_item_loader(index: DatasetIndex | None) -> str | None:
    """Name the item loader (an ``item_loaders`` registry key) used when none is given.

    The built-in implementation (``trylast``) answers ``"PyTreeLoader"`` for writing
    (``index`` is ``None``) and for indexes that record no ``item_loader`` (LitData before
    0.2.x), unless every chunk counts tokens (``dim``): ``"TokensLoader"``.

    Args:
        index: The index of the dataset being read, or ``None`` for a dataset being written.

    Returns:
        An item loader name, or ``None`` to let the next implementation decide.
    """


@hookspec(firstresult=True)
def litdata_default_executor() -> str | None:
    """Name the executor (an ``executors`` registry key) for jobs that name none.

    ``optimize`` and ``map`` ask it when ``executor`` is not given. The built-in
    implementation (``trylast``) answers ``"local"`` (processes on this machine); a site plugin
    can answer ``"dask"`` or ``"ray"`` to send every job to a cluster.

    Returns:
        An executor name, or ``None`` to let the next implementation decide.
    """


@hookspec
def litdata_chunk_written(path: str, chunk: dict[str, Any], seconds: float) -> None:
    """A writer finished a chunk file.

    Args:
        path: The local path of the chunk file.
        chunk: Its ``index.json`` entry (``filename``, ``chunk_size``, ``chunk_bytes``...).
        seconds: How long the chunk took, from its first sample to its file being written.
    """


@hookspec
def litdata_chunk_downloaded(url: str, path: str, nbytes: int, seconds: float) -> None:
    """A chunk was fetched from storage (or decompressed) into the local cache.

    Args:
        url: Where it came from.
        path: Where it is now.
        nbytes: Its size on disk.
        seconds: How long the transfer took.
    """


@hookspec
def litdata_chunk_evicted(path: str, nbytes: int) -> None:
    """A cached chunk was deleted to stay within the cache budget.

    Args:
        path: The deleted file.
        nbytes: Its size.
    """


@hookspec
def litdata_chunk_decompressed(path: str, nbytes: int, seconds: float) -> None:
    """A fetched chunk was checked and decompressed (or decrypted) into its plain bytes.

    Args:
        path: The plain chunk file it becomes in the cache.
        nbytes: Its plain size.
        seconds: How long checking and decompressing took.
    """


@hookspec
def litdata_chunk_opened(url: str, chunk_index: int, items: int) -> None:
    """A reader opened a chunk to read items from it (once per chunk it enters).

    Args:
        url: The chunk's location (URL or path) in the dataset.
        chunk_index: Its position in ``index.json``.
        items: How many items it holds.
    """


@hookspec
def litdata_chunk_closed(url: str, chunk_index: int) -> None:
    """A reader closed a chunk it had opened (it read all it needs, or stopped).

    Args:
        url: The chunk's location (URL or path) in the dataset.
        chunk_index: Its position in ``index.json``.
    """
