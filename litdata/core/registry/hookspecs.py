"""Hook specifications: the few decisions several plugins take part in, and chunk events.

Hooks are called with keyword arguments; an implementation may accept a subset of them.
None is called per sample. Every hook is documented in ``docs/plugins/hooks.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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


@hookspec
def litdata_lock_waited(chunk: str, mode: str, granted: bool, seconds: float) -> None:
    """A process asked for a cached chunk's lock (to read it, or to fetch it) and got an answer.

    Args:
        chunk: The cached file the lock is for.
        mode: ``"shared"`` (a reader) or ``"exclusive"`` (a fetcher, an evictor).
        granted: Whether it got the lock (a try that found it taken is not).
        seconds: How long it waited.
    """


@hookspec
def litdata_work_began(job: str, rank: int) -> None:
    """A worker of ``optimize`` or ``map`` started on its inputs.

    Args:
        job: What it runs: ``"optimize"`` or ``"map"``.
        rank: The worker's rank in the job.
    """


@hookspec
def litdata_work_ended(job: str, rank: int, inputs: int) -> None:
    """A worker of ``optimize`` or ``map`` stopped (done, or failed).

    Args:
        job: What it ran.
        rank: The worker's rank in the job.
        inputs: How many inputs it handled.
    """


@hookspec
def litdata_failed(where: str, error: BaseException) -> None:
    """Something failed in the background or in a worker (a prefetch thread, a job's worker).

    The error still reaches the training loop or the job's caller; this is for observers.

    Args:
        where: What failed (``"prefetch"``, ``"optimize"``...).
        error: The error.
    """


@hookspec
def litdata_process_context(fields: dict[str, int]) -> None:
    """Where this process stands in the job, as it learns it (rank, worker, world size...).

    Args:
        fields: ``dist_global_rank``, ``dist_world_size``, ``dist_num_nodes``, ``worker_rank``,
            ``worker_world_size`` (those known).
    """


@hookspec
def litdata_wrap_batches(batches: Iterator[Any], epoch: int) -> Iterator[Any] | None:
    """Wrap the iterator of an epoch's batches in the training loop (to observe them).

    Called once per epoch; each implementation wraps what the previous one returned.

    Args:
        batches: The batches, as the training loop will get them.
        epoch: The epoch (from 1).

    Returns:
        An iterator yielding the same batches, or ``None`` to leave them as they are.
    """


@hookspec
def litdata_wrap_read(
    read: Callable[[Any, int], Any], chunk_index: int
) -> Callable[[Any, int], Any] | None:
    """Wrap a streaming worker's ``read(chunk, position)`` of one chunk's items.

    Called once per chunk a worker reads (never per sample); an implementation that returns a
    wrapper sees every item, so observers return one only while they record samples.

    Args:
        read: Decodes the item at ``position`` of an open chunk.
        chunk_index: The chunk's position in ``index.json``.

    Returns:
        A function called like ``read``, or ``None`` to leave it as it is.
    """
