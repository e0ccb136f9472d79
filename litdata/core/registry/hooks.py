"""Typed calls into the hooks, so the rest of litdata never touches ``pm.hook`` directly."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from litdata.core.registry.manager import get_plugin_manager

T = TypeVar("T")

if TYPE_CHECKING:
    from litdata.core.index import DatasetIndex
    from litdata.core.location import Location

__all__ = [
    "chunk_closed",
    "chunk_decompressed",
    "chunk_downloaded",
    "chunk_evicted",
    "chunk_opened",
    "chunk_written",
    "default_executor",
    "default_item_loader",
    "detect_format",
    "failed",
    "lock_waited",
    "process_context",
    "resolve_storage",
    "shuffle_for",
    "work_began",
    "work_ended",
    "wrap_batches",
    "wrap_read",
]


def _answer(hook: str, value: Any, **arguments: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(
            f"The {hook} hook answered {value!r} for {arguments}; an implementation returns a "
            f"name, or None to let the next one decide (see `litdata plugins` for who answers)."
        )
    return value


def resolve_storage(url: str) -> str:
    """The name of the storage backend serving ``url`` (a URL or a local path)."""
    name = get_plugin_manager().hook.litdata_resolve_storage(url=url)
    return _answer("litdata_resolve_storage", name, url=url)


def detect_format(location: Location, index: DatasetIndex | None = None) -> str | None:
    """The name of the dataset format found at ``location`` (or of ``index``), if any."""
    name = get_plugin_manager().hook.litdata_detect_format(location=location, index=index)
    return None if name is None else _answer("litdata_detect_format", name, url=location.url)


def shuffle_for(url: str, shuffle: bool) -> str:
    """The shuffle spec for reading the dataset at ``url`` with ``shuffle``."""
    name = get_plugin_manager().hook.litdata_shuffle_for(url=url, shuffle=shuffle)
    return _answer("litdata_shuffle_for", name, url=url, shuffle=shuffle)


def default_item_loader(index: DatasetIndex | None = None) -> str:
    """The item loader to use when none is given (``index``: the dataset being read)."""
    name = get_plugin_manager().hook.litdata_default_item_loader(index=index)
    return _answer("litdata_default_item_loader", name)


def default_executor() -> str:
    """The executor ``optimize`` and ``map`` run on when none is given."""
    name = get_plugin_manager().hook.litdata_default_executor()
    return _answer("litdata_default_executor", name)


def chunk_written(path: str, chunk: dict[str, Any], seconds: float) -> None:
    """Tell plugins a chunk file was written (``seconds`` after its first sample came)."""
    get_plugin_manager().hook.litdata_chunk_written(path=path, chunk=chunk, seconds=seconds)


def chunk_downloaded(url: str, path: str, nbytes: int, seconds: float) -> None:
    """Tell plugins a chunk reached the local cache."""
    get_plugin_manager().hook.litdata_chunk_downloaded(
        url=url, path=path, nbytes=nbytes, seconds=seconds
    )


def chunk_evicted(path: str, nbytes: int) -> None:
    """Tell plugins a cached chunk was deleted."""
    get_plugin_manager().hook.litdata_chunk_evicted(path=path, nbytes=nbytes)


def chunk_decompressed(path: str, nbytes: int, seconds: float) -> None:
    """Tell plugins a fetched chunk was checked and decompressed."""
    get_plugin_manager().hook.litdata_chunk_decompressed(path=path, nbytes=nbytes, seconds=seconds)


def chunk_opened(url: str, chunk_index: int, items: int) -> None:
    """Tell plugins a reader opened a chunk."""
    get_plugin_manager().hook.litdata_chunk_opened(url=url, chunk_index=chunk_index, items=items)


def chunk_closed(url: str, chunk_index: int) -> None:
    """Tell plugins a reader closed a chunk."""
    get_plugin_manager().hook.litdata_chunk_closed(url=url, chunk_index=chunk_index)


def lock_waited(chunk: str, mode: str, granted: bool, seconds: float) -> None:
    """Tell plugins a cache lock was asked for and answered."""
    get_plugin_manager().hook.litdata_lock_waited(
        chunk=chunk, mode=mode, granted=granted, seconds=seconds
    )


def work_began(job: str, rank: int) -> None:
    """Tell plugins a worker of ``job`` started."""
    get_plugin_manager().hook.litdata_work_began(job=job, rank=rank)


def work_ended(job: str, rank: int, inputs: int) -> None:
    """Tell plugins a worker of ``job`` stopped after ``inputs`` inputs."""
    get_plugin_manager().hook.litdata_work_ended(job=job, rank=rank, inputs=inputs)


def failed(where: str, error: BaseException) -> None:
    """Tell plugins something failed (the error is raised to the caller as well)."""
    get_plugin_manager().hook.litdata_failed(where=where, error=error)


def process_context(**fields: int) -> None:
    """Tell plugins where this process stands (rank, worker...)."""
    get_plugin_manager().hook.litdata_process_context(fields=fields)


def _chained(hook: Any, name: str, value: T, **arguments: Any) -> T:
    """``value`` passed through every implementation of a wrapping hook, in call order."""
    for implementation in reversed(hook.get_hookimpls()):  # pluggy calls the last added first
        given = {name: value, **arguments}
        wrapped = implementation.function(**{key: given[key] for key in implementation.argnames})
        if wrapped is not None:
            value = wrapped
    return value


def wrap_batches(batches: Iterator[Any], epoch: int) -> Iterator[Any]:
    """``batches`` as the plugins that observe the training loop wrap them (once per epoch)."""
    hook = get_plugin_manager().hook.litdata_wrap_batches
    return _chained(hook, "batches", batches, epoch=epoch)


def wrap_read(read: Callable[[Any, int], Any], chunk_index: int) -> Callable[[Any, int], Any]:
    """``read`` as the plugins that observe samples wrap it (once per chunk)."""
    hook = get_plugin_manager().hook.litdata_wrap_read
    return _chained(hook, "read", read, chunk_index=chunk_index)
