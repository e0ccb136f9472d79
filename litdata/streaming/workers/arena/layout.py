"""Where each leaf of a batch lies in an arena slot, and how to read it back from there.

A batch (dicts, lists and tuples of tensors, numpy arrays, ``bytes``, lists of ``bytes`` and
small scalars) becomes a ``Layout``: a small picklable *spec* tree that says, for each leaf, its
kind, offset and shape, plus the number of bytes the leaves need. Scalars and strings stay in
the spec. Anything else (a custom collate's objects, tensor subclasses, sparse or autograd
tensors) has no layout: such a batch travels the pipe as before.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
import torch

__all__ = ["ALIGN", "Layout", "owner_of", "plan", "read", "write"]

#: Every leaf starts at a multiple of this many bytes (a cache line; any dtype's alignment).
ALIGN = 64

_INLINE = (str, int, float, bool, complex, type(None))
_NUMPY_KINDS = frozenset("biufcmM")
_TORCH_DTYPES = {str(kind): kind for kind in vars(torch).values() if isinstance(kind, torch.dtype)}
#: The numpy dtype of each torch dtype that has one (the others go as same-sized integers).
_NUMPY_OF: dict[torch.dtype, Any] = {
    torch.bool: np.bool_,
    torch.uint8: np.uint8,
    torch.int8: np.int8,
    torch.int16: np.int16,
    torch.uint16: np.uint16,
    torch.int32: np.int32,
    torch.uint32: np.uint32,
    torch.int64: np.int64,
    torch.uint64: np.uint64,
    torch.float16: np.float16,
    torch.float32: np.float32,
    torch.float64: np.float64,
    torch.complex64: np.complex64,
    torch.complex128: np.complex128,
}
_RAW = {1: (torch.uint8, np.uint8), 2: (torch.int16, np.int16), 4: (torch.int32, np.int32)}
_RAW[8] = (torch.int64, np.int64)

_QUANTIZED = frozenset((torch.qint8, torch.quint8, torch.qint32, torch.quint4x2, torch.quint2x4))

Spec = tuple[Any, ...]
Bytes = npt.NDArray[np.uint8]


class Layout(NamedTuple):
    """A batch's spec tree, its leaves with their offsets, and the bytes they take in a slot."""

    spec: Spec
    leaves: list[tuple[int, Any]]
    size: int


def _aligned(size: int) -> int:
    return -(-size // ALIGN) * ALIGN


def _arena_tensor(value: torch.Tensor) -> bool:
    return (
        value.is_cpu
        and value.layout is torch.strided
        and not value.requires_grad
        and value.dtype not in _QUANTIZED
        and (value.dtype in _NUMPY_OF or value.element_size() in _RAW)
    )


class _Planner:
    """Walks a batch once, assigning each leaf its place (``None`` from ``node``: no layout)."""

    def __init__(self) -> None:
        self.leaves: list[tuple[int, Any]] = []
        self.size = 0

    def _take(self, nbytes: int, leaf: Any) -> int:
        offset = self.size
        self.size += _aligned(nbytes)
        self.leaves.append((offset, leaf))
        return offset

    def node(self, value: Any) -> Spec | None:
        kind = type(value)
        if kind is torch.Tensor:
            if not _arena_tensor(value):
                return None
            return ("t", self._take(value.nbytes, value), str(value.dtype), tuple(value.shape))
        if kind is np.ndarray:
            if value.dtype.kind not in _NUMPY_KINDS:
                return None
            return ("n", self._take(value.nbytes, value), value.dtype.str, value.shape)
        if kind is bytes:
            return ("b", self._take(len(value), value), len(value))
        if kind is list and value and all(type(item) is bytes for item in value):
            return self._bytes_list(value)
        if kind in _INLINE:
            return ("v", value)
        return self._container(kind, value)

    def _bytes_list(self, items: list[bytes]) -> Spec:
        ends = np.cumsum([len(item) for item in items], dtype=np.int64)
        at = self._take(int(ends[-1]), items)
        return ("B", at, self._take(ends.nbytes, ends), len(items))

    def _container(self, kind: type, value: Any) -> Spec | None:
        if kind is dict:
            children = [self.node(item) for item in value.values()]
            return None if None in children else ("d", tuple(value), tuple(children))
        if kind in (list, tuple):
            children = [self.node(item) for item in value]
            return None if None in children else ("l" if kind is list else "u", tuple(children))
        return None


def plan(batch: Any) -> Layout | None:
    """The layout of ``batch``, or ``None`` when some leaf cannot go through an arena."""
    planner = _Planner()
    spec = planner.node(batch)
    return None if spec is None else Layout(spec, planner.leaves, planner.size)


def _as_array(tensor: torch.Tensor) -> Any:
    """A numpy array viewing ``tensor``'s memory (same-sized integers for bfloat16 and such)."""
    if tensor.is_complex():
        tensor = tensor.resolve_conj().resolve_neg()
    if tensor.dtype not in _NUMPY_OF:
        tensor = tensor.view(_RAW[tensor.element_size()][0])
    return tensor.numpy()


def _write_leaf(slot: Bytes, at: int, leaf: Any) -> None:
    if type(leaf) is torch.Tensor:
        leaf = _as_array(leaf)
    if type(leaf) is np.ndarray:
        slot[at : at + leaf.nbytes].view(leaf.dtype).reshape(leaf.shape)[...] = leaf
    elif type(leaf) is bytes:
        slot[at : at + len(leaf)] = np.frombuffer(leaf, dtype=np.uint8)
    else:  # a list of bytes, one after the other
        view = memoryview(slot)  # type: ignore[arg-type]
        for item in leaf:
            view[at : at + len(item)] = item
            at += len(item)


def write(slot: Bytes, layout: Layout) -> None:
    """Copy the leaves of ``layout`` into ``slot`` (at least ``layout.size`` bytes)."""
    for at, leaf in layout.leaves:
        _write_leaf(slot, at, leaf)


def owner_of(buffer: Any, offset: int) -> Any:
    """A weak-referenceable object exporting the bytes of ``buffer`` from ``offset`` on.

    Every array and tensor ``read`` makes keeps it alive, so a ``weakref.finalize`` on it runs
    once the consumer has dropped the whole batch. It spans the rest of the buffer, whatever
    the batch's size: ctypes makes (and keeps forever) one array type per length, about 12 µs
    each, so a length per batch would cost that on every message and grow without bound.
    """
    return (ctypes.c_ubyte * (len(buffer) - offset)).from_buffer(buffer, offset)


def read(spec: Spec, slot: Bytes) -> Any:
    """The batch ``spec`` describes, its tensors and arrays viewing ``slot``; ``bytes`` copied."""
    kind = spec[0]
    if kind == "t":
        _, at, dtype_name, shape = spec
        dtype = _TORCH_DTYPES[dtype_name]
        array_type = _NUMPY_OF.get(dtype)
        raw = _RAW[dtype.itemsize][1] if array_type is None else array_type
        nbytes = math.prod(shape) * dtype.itemsize
        tensor = torch.from_numpy(slot[at : at + nbytes].view(raw).reshape(shape))
        return tensor if array_type is not None else tensor.view(dtype)
    if kind == "n":
        _, at, dtype_str, shape = spec
        array_dtype = np.dtype(dtype_str)
        nbytes = math.prod(shape) * array_dtype.itemsize
        return slot[at : at + nbytes].view(array_dtype).reshape(shape)
    if kind == "b":
        return slot[spec[1] : spec[1] + spec[2]].tobytes()
    if kind == "B":
        _, at, ends_at, count = spec
        ends = slot[ends_at : ends_at + 8 * count].view(np.int64).tolist()
        view = memoryview(slot)  # type: ignore[arg-type]
        starts = [0, *ends[:-1]]
        return [bytes(view[at + start : at + end]) for start, end in zip(starts, ends, strict=True)]
    if kind == "v":
        return spec[1]
    if kind == "d":
        return {key: read(child, slot) for key, child in zip(spec[1], spec[2], strict=True)}
    items = [read(child, slot) for child in spec[1]]
    return items if kind == "l" else tuple(items)
