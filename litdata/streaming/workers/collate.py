"""``litdata_collate``: PyTorch's default collation, with fast paths for common leaves.

Results are exactly what ``torch.utils.data.default_collate`` returns; stacking numpy arrays
once instead of converting each, and building int/float tensors from Python lists, just makes
it several times faster on small samples. Graphs, which ``default_collate`` cannot batch, are
batched as LitData does: PyG graphs into one PyG ``Batch``, ``Graph`` wrappers (read without
torch-geometric) into a list; at the top level or as values of dict samples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
import torch
from torch.utils.data import default_collate

from litdata.engine.items.wrappers import Graph
from litdata.streaming.workers.transport import SHARED_MEMORY_BYTES

__all__ = ["into_arena", "litdata_collate"]

_NUMERIC = frozenset("biufc")


#: Stacked leaves at least this large are written to lent memory (smaller ones come from the
#: allocator's warm heap anyway, and ``torch.stack(out=)`` costs more per piece: W2's 1 MiB
#: batches of 4 KiB blocks streamed 4% slower lent).
LENT_BYTES = 8 << 20
#: Lends the memory a stacked leaf is written to: ``(shape, dtype) -> tensor``.
Lender = Callable[[tuple[int, ...], torch.dtype], torch.Tensor]

#: Whether the batch being collated will be copied into an arena slot (set by its collate).
_INTO_ARENA: ContextVar[bool] = ContextVar("litdata_into_arena", default=False)
#: Where such a batch's stacked leaves are written (memory reused batch after batch), if set.
_LENDER: ContextVar[Lender | None] = ContextVar("litdata_lender", default=None)


@contextmanager
def into_arena(lend: Lender | None = None) -> Iterator[None]:
    """Within it, batches are collated to be copied into an arena slot, not sent by pipe.

    Args:
        lend: Gives the tensors that stacked leaves are written to; the caller reuses them
            once the batch is in its slot (fresh memory each batch costs a page fault per
            4 KiB: a quarter of the stacking time of a batch of images).
    """
    token, lent = _INTO_ARENA.set(True), _LENDER.set(lend)
    try:
        yield
    finally:
        _LENDER.reset(lent)
        _INTO_ARENA.reset(token)


def _stack_tensors(values: list[Any]) -> torch.Tensor | None:
    """``values`` stacked, when they are plain CPU tensors alike and shared memory cannot pay.

    In a worker process ``default_collate`` allocates each batch tensor in a new shared-memory
    segment: about 40 µs a batch, plus a page fault per 4 KiB of it. That pays only for a large
    batch sent by pipe. A small one is copied on its way anyway (``transport``), and one bound
    for an arena slot is copied into the slot, so those are stacked in ordinary memory.
    ``None`` leaves the batch to ``default_collate``.
    """
    first = values[0]
    shape, dtype = first.shape, first.dtype
    size = first.element_size() * first.numel() * len(values)
    large = size >= SHARED_MEMORY_BYTES
    if first.is_nested or (large and not _INTO_ARENA.get()):
        return None
    for value in values:
        if type(value) is not torch.Tensor or value.shape != shape or value.dtype != dtype:
            return None
        if value.layout is not torch.strided or value.device.type != "cpu":
            return None
    lend = _LENDER.get() if _INTO_ARENA.get() and size >= LENT_BYTES else None
    if lend is not None:
        return torch.stack(values, out=lend((len(values), *shape), dtype))
    return torch.stack(values)


def _leaves(values: list[Any]) -> Any:
    first = values[0]
    kind = type(first)
    if kind is torch.Tensor:
        stacked = _stack_tensors(values)
        if stacked is not None:
            return stacked
    if kind is int and all(type(value) is int for value in values):
        return torch.tensor(values, dtype=torch.int64)
    if kind is float and all(type(value) is float for value in values):
        return torch.tensor(values, dtype=torch.float64)
    if kind is np.ndarray and first.dtype.kind in _NUMERIC:
        shape, dtype = first.shape, first.dtype
        if all(type(v) is np.ndarray and v.shape == shape and v.dtype == dtype for v in values):
            return torch.from_numpy(np.stack(values))
    if kind in (str, bytes):
        return values
    if kind is Graph:
        return values
    if kind.__module__.startswith("torch_geometric.data"):
        return _pyg_batch(values)
    return default_collate(values)


def _pyg_batch(graphs: list[Any]) -> Any:
    """One PyG ``Batch`` of PyG graphs (``Data`` or ``HeteroData``)."""
    from torch_geometric.data import Batch  # type: ignore[import-untyped]

    return Batch.from_data_list(graphs)


def _stacked(values: list[Any], where: str) -> Any:
    """``_leaves(values)``; values of different shapes fail with what to do about them."""
    try:
        return _leaves(values)
    except TypeError as error:
        if not str(error).startswith("default_collate: batch must contain"):
            raise
        raise TypeError(
            f"{where}: a batch cannot hold {type(values[0]).__qualname__} values as they are. "
            f"Turn them into arrays or tensors in a transform (torchvision's pil_to_tensor for "
            f"images), or batch them another way with StreamingDataLoader(collate_fn=...), e.g. "
            f"collate_fn=list for a list of samples. ({error})"
        ) from error
    except RuntimeError as error:
        shapes = list(dict.fromkeys(tuple(v.shape) for v in values if hasattr(v, "shape")))
        if len(shapes) <= 1 and "equal size" not in str(error):
            raise
        seen = f" ({shapes[0]}, {shapes[1]}...)" if len(shapes) > 1 else ""
        raise RuntimeError(
            f"{where}: the samples of this batch have different shapes{seen}, and a batch "
            f"stacks them into one tensor. Give them one shape (resize or crop them in a "
            f"transform), or batch them another way with StreamingDataLoader(collate_fn=...), "
            f"e.g. collate_fn=list for a list of samples. ({error})"
        ) from error


def litdata_collate(batch: Sequence[Any]) -> Any:
    """Collate a list of samples into a batch, as ``default_collate`` does.

    Raises:
        RuntimeError: Tensors or arrays of different shapes in one place of the samples; the
            message names the place and says how to batch them.
        TypeError: Values no batch can hold (PIL images...), with the same advice.
    """
    samples = list(batch)
    first = samples[0]
    if type(first) is dict:
        return {
            key: _stacked([sample[key] for sample in samples], f"sample[{key!r}]") for key in first
        }
    return _stacked(samples, "sample")
