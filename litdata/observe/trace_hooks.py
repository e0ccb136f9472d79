"""The pipeline tracer as a hook plugin: the events litdata publishes become trace-log spans.

It subscribes to the events every plugin can see (chunks downloaded, decompressed, opened,
closed, evicted, written; locks waited for; workers started and stopped; failures; where the
process stands) and writes them with the process's tracer when their category is on
(``litdata.observe.enable_tracer``); it wraps an epoch's batches and a chunk's reads only
while their categories are recorded. With tracing off each hook returns after one check.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

from litdata.core.registry.hookspecs import hookimpl
from litdata.observe import tracer as tracing
from litdata.observe.traced import traced_batches, traced_read

__all__ = [
    "litdata_chunk_closed",
    "litdata_chunk_decompressed",
    "litdata_chunk_downloaded",
    "litdata_chunk_evicted",
    "litdata_chunk_opened",
    "litdata_chunk_written",
    "litdata_failed",
    "litdata_lock_waited",
    "litdata_process_context",
    "litdata_work_began",
    "litdata_work_ended",
    "litdata_wrap_batches",
    "litdata_wrap_read",
]


def _name(path: str) -> str:
    return os.path.basename(path.rstrip("/"))


@hookimpl
def litdata_chunk_downloaded(url: str, nbytes: int, seconds: float) -> None:
    """A ``download`` span: one chunk fetched from storage."""
    tracer = tracing.current()
    if tracer is not None and tracer.on("download"):
        tracer.span("download", "download", seconds, chunk=_name(url), bytes=nbytes)


@hookimpl
def litdata_chunk_decompressed(path: str, nbytes: int, seconds: float) -> None:
    """A ``decompress`` span: one chunk checked and decompressed."""
    tracer = tracing.current()
    if tracer is not None and tracer.on("decompress"):
        tracer.span("decompress", "decompress", seconds, chunk=_name(path), bytes=nbytes)


@hookimpl
def litdata_chunk_opened(url: str, chunk_index: int, items: int) -> None:
    """Opens the ``read`` span of a chunk a reader entered."""
    tracer = tracing.current()
    if tracer is not None and tracer.on("read"):
        tracer.begin("read", "read", chunk=_name(url), index=chunk_index, size=items)


@hookimpl
def litdata_chunk_closed(url: str, chunk_index: int) -> None:
    """Closes the ``read`` span of a chunk a reader left."""
    tracer = tracing.current()
    if tracer is not None and tracer.on("read"):
        tracer.end("read", "read", chunk=_name(url), index=chunk_index)


@hookimpl
def litdata_chunk_evicted(path: str, nbytes: int) -> None:
    """A ``delete`` span: a cached chunk evicted."""
    tracer = tracing.current()
    if tracer is not None and tracer.on("delete"):
        tracer.span("delete", "delete", 0.0, chunk=_name(path), bytes=nbytes)


@hookimpl
def litdata_chunk_written(path: str, chunk: dict[str, Any], seconds: float) -> None:
    """A ``write`` span: a writer made a chunk file, from its first sample to the file."""
    tracer = tracing.current()
    if tracer is not None and tracer.on("write"):
        tracer.span("write", "write", seconds, chunk=_name(path), items=chunk.get("chunk_size"))


@hookimpl
def litdata_lock_waited(chunk: str, mode: str, granted: bool, seconds: float) -> None:
    """A ``lock`` span: the wait for a cached chunk's lock."""
    tracer = tracing.current()
    if tracer is not None and tracer.on("lock"):
        tracer.span("lock", "lock", seconds, chunk=chunk, mode=mode, granted=granted)


@hookimpl
def litdata_work_began(job: str, rank: int) -> None:
    """Opens the span of a worker's work (``optimize``, category ``epoch``)."""
    tracer = tracing.current()
    if tracer is not None and tracer.on("epoch"):
        tracer.begin(job, "epoch", worker=rank)


@hookimpl
def litdata_work_ended(job: str, rank: int, inputs: int) -> None:
    """Closes the span of a worker's work."""
    tracer = tracing.current()
    if tracer is not None and tracer.on("epoch"):
        tracer.end(job, "epoch", worker=rank, inputs=inputs)


@hookimpl
def litdata_failed(where: str, error: BaseException) -> None:
    """A ``crash`` moment."""
    tracer = tracing.current()
    if tracer is not None and tracer.on("crash"):
        tracer.instant("crash", "crash", exception=type(error).__name__, error=error, where=where)


@hookimpl
def litdata_process_context(fields: dict[str, int]) -> None:
    """Where the process stands goes on every line it writes."""
    tracing.set_context(**fields)


@hookimpl
def litdata_wrap_batches(batches: Iterator[Any], epoch: int) -> Iterator[Any] | None:
    """The ``dataloader`` span of an epoch and its ``batch`` spans, while recorded."""
    tracer = tracing.current()
    if tracer is None or not (tracer.on("batch") or tracer.on("epoch")):
        return None
    return traced_batches(batches, tracer, epoch)


@hookimpl
def litdata_wrap_read(
    read: Callable[[Any, int], Any], chunk_index: int
) -> Callable[[Any, int], Any] | None:
    """A ``sample`` span per item read, while samples are recorded (level ``sample``)."""
    tracer = tracing.current()
    if tracer is None or not tracer.on("sample"):
        return None
    return traced_read(read, tracer, chunk_index)
