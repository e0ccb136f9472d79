"""The pipeline tracer as a hook plugin: chunk events become trace-log spans.

It subscribes to the chunk events every plugin can see (downloaded, decompressed, opened,
closed, evicted, written) and writes them with the process's tracer when their category is
on (``litdata.observe.enable_tracer``). With tracing off each hook returns after one check.
"""

from __future__ import annotations

import os
from typing import Any

from litdata.core.registry.hookspecs import hookimpl
from litdata.observe import tracer as tracing

__all__ = [
    "litdata_chunk_closed",
    "litdata_chunk_decompressed",
    "litdata_chunk_downloaded",
    "litdata_chunk_evicted",
    "litdata_chunk_opened",
    "litdata_chunk_written",
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
