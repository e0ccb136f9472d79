"""Trace events of the streaming loop, used only while tracing is on.

The loader and the dataset pick these wrappers when ``tracing.current()`` is not ``None``;
otherwise their loops run unchanged, so tracing costs nothing per batch or sample when off.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from litdata.observe.tracer import Tracer

__all__ = ["traced_batches", "traced_read"]


def traced_batches(batches: Iterator[Any], tracer: Tracer, epoch: int) -> Iterator[Any]:
    """``batches`` with a ``dataloader`` span over the epoch and a ``batch`` span per batch.

    A ``batch`` span is the time the training loop waited for that batch: one per batch, as
    LitData records them (the wait for the end of the epoch is no batch; the ``dataloader``
    span covers it).
    """
    tracer.begin("dataloader", "epoch", epoch=epoch)
    number = 0
    try:
        while True:
            asked = time.perf_counter()
            try:
                batch = next(batches)
            except StopIteration:
                return
            tracer.span("batch", "batch", time.perf_counter() - asked, batch=number, epoch=epoch)
            yield batch
            number += 1
    finally:
        tracer.end("dataloader", "epoch", epoch=epoch, batches=number)


def traced_read(read: Callable[[Any, int], Any], tracer: Tracer, chunk: int) -> Callable[..., Any]:
    """``read(handle, position)`` with a ``sample`` span around each item of chunk ``chunk``."""

    def read_traced(handle: Any, position: int) -> Any:
        tracer.begin("sample", "sample", chunk=chunk, index=position)
        try:
            return read(handle, position)
        finally:
            tracer.end("sample", "sample", chunk=chunk, index=position)

    return read_traced
