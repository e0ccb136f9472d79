"""Cells: each field of a sample described for the page, by its kind.

A sample is flattened into named leaves (``"image"``, ``"meta.label"``, ``"0"``); each leaf is a
cell, a JSON object with a ``kind`` (``text``, ``number``, ``image``, ``array``, ``bytes``,
``audio``, ``video``, ``tree``, ``none``, ``error``...) and what the page needs to draw it. Text
is cut to :data:`TEXT_HEAD` characters (the page asks for the rest); nothing here is HTML.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from litdata.viewer.images import ImageRefused, image_size, sniff

__all__ = ["MAX_LEAVES", "TEXT_HEAD", "as_array", "cell", "leaf", "leaves", "value_kind"]

#: Leaves shown per sample; a sample with more shows the rest folded in a tree cell.
MAX_LEAVES = 48
#: Nesting flattened into named leaves; deeper values are tree cells.
MAX_DEPTH = 3
#: Characters of a text cell sent with the page ("more" fetches up to FULL_TEXT).
TEXT_HEAD = 300
FULL_TEXT = 1 << 20
#: Bytes of a bytes cell shown in hex.
HEX_HEAD = 32
#: Points of a 1-D array's plot.
PLOT_POINTS = 200
#: Depth of a tree cell.
TREE_DEPTH = 6
_PLANE = 2
_MIN_SIDE = 8
_CHANNELS = (1, 3, 4)


def leaves(sample: Any, prefix: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    """``(name, value)`` of each leaf of a sample, names joined with ``"."``."""
    if depth < MAX_DEPTH and isinstance(sample, Mapping):
        for key, value in sample.items():
            yield from leaves(
                value, f"{prefix}{key}" if not prefix else f"{prefix}.{key}", depth + 1
            )
    elif depth < MAX_DEPTH and isinstance(sample, list | tuple) and len(sample) <= MAX_LEAVES:
        if depth and all(isinstance(item, int | float | str) for item in sample):
            yield prefix, sample  # a short list of scalars is one leaf
            return
        for position, value in enumerate(sample):
            name = str(position) if not prefix else f"{prefix}.{position}"
            yield from leaves(value, name, depth + 1)
    else:
        yield prefix or "value", sample


def leaf(sample: Any, name: str) -> Any:
    """The leaf called ``name`` in ``sample``.

    Raises:
        KeyError: The sample has no leaf of that name.
    """
    for found, value in leaves(sample):
        if found == name:
            return value
    raise KeyError(f"the sample has no field {name!r}")


def as_array(value: Any) -> np.ndarray | None:
    """A numpy view of an array or tensor leaf, ``None`` for anything else."""
    if isinstance(value, np.ndarray):
        return value
    if type(value).__module__.startswith("torch") and hasattr(value, "numpy"):
        try:
            return np.asarray(value.detach().cpu().numpy())
        except (TypeError, RuntimeError):
            return None
    return None


def _image_like(array: np.ndarray) -> bool:
    """A uint8 array of at least ``_MIN_SIDE`` a side: grey (H, W) or (C, H, W) / (H, W, C)."""
    if array.dtype != np.uint8 or array.ndim not in (_PLANE, _PLANE + 1):
        return False
    if array.ndim == _PLANE:
        return bool(min(array.shape) >= _MIN_SIDE)
    channels_first = array.shape[0] in _CHANNELS and min(array.shape[1:]) >= _MIN_SIDE
    channels_last = array.shape[-1] in _CHANNELS and min(array.shape[:2]) >= _MIN_SIDE
    return bool(channels_first or channels_last)


def value_kind(value: Any) -> str:
    """The kind of a leaf: how the page draws it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float | np.integer | np.floating):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, bytes | bytearray | memoryview):
        found = sniff(bytes(value[:16]))
        return found[0] if found else "bytes"
    if hasattr(value, "size") and hasattr(value, "mode") and hasattr(value, "getbands"):
        return "image"
    array = as_array(value)
    if array is not None:
        return "image" if _image_like(array) else "array"
    if isinstance(value, Mapping | list | tuple):
        return "tree"
    return "object"


def _number(value: Any) -> Any:
    number = value.item() if isinstance(value, np.generic) else value
    if isinstance(number, float) and not math.isfinite(number):
        return str(number)
    return number


def _array_cell(array: np.ndarray) -> dict[str, Any]:
    out: dict[str, Any] = {"shape": list(array.shape), "dtype": str(array.dtype)}
    if array.size and array.dtype.kind in "biuf":
        values = array.astype(np.float64, copy=False)
        finite = values[np.isfinite(values)]
        if finite.size:
            out.update(min=float(finite.min()), max=float(finite.max()), mean=float(finite.mean()))
        if array.ndim == 1:
            step = max(1, -(-array.size // PLOT_POINTS))
            line = np.nan_to_num(values[::step], nan=0.0, posinf=0.0, neginf=0.0)
            out["plot"] = [float(x) for x in line]
        elif array.ndim == _PLANE:
            out["heat_map"] = True
    return out


def _tree(value: Any, budget: list[int], depth: int = 0) -> Any:
    """A JSON view of a nested value, bounded in nodes and depth."""
    budget[0] -= 1
    if budget[0] < 0 or depth > TREE_DEPTH:
        return "..."
    if isinstance(value, Mapping):
        return {str(k): _tree(v, budget, depth + 1) for k, v in list(value.items())[:50]}
    if isinstance(value, list | tuple):
        return [_tree(v, budget, depth + 1) for v in value[:50]]
    if isinstance(value, str):
        return value[:TEXT_HEAD]
    if isinstance(value, bool | int | float | np.generic) or value is None:
        return _number(value)
    return describe_short(value)


def describe_short(value: Any) -> str:
    """A one-line description of a value that has no cell of its own."""
    array = as_array(value)
    if array is not None:
        return f"{type(value).__name__}(shape={list(array.shape)}, dtype={array.dtype})"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"{len(value):,} bytes"
    return f"{type(value).__name__} {repr(value)[:80]}"


def cell(value: Any) -> dict[str, Any]:
    """The cell of one leaf (without pictures: the page fetches those from ``/api/field``)."""
    kind = value_kind(value)
    out: dict[str, Any] = {"kind": kind}
    if kind in ("number", "bool"):
        out["value"] = _number(value)
    elif kind == "text":
        out.update(value=value[:TEXT_HEAD], length=len(value), cut=len(value) > TEXT_HEAD)
    elif kind == "bytes":
        data = bytes(value[:HEX_HEAD])
        out.update(size=len(value), hex=data.hex(" "))
    elif kind in ("audio", "video"):
        out.update(size=len(value), mime=sniff(bytes(value[:16]))[1])  # type: ignore[index]
    elif kind == "image":
        try:
            width, height = image_size(value)
        except ImageRefused as error:
            return {"kind": "error", "error": f"image: {error}"}
        out.update(width=width, height=height)
    elif kind == "array":
        out.update(_array_cell(as_array(value)))  # type: ignore[arg-type]
    elif kind == "tree":
        out["tree"] = _tree(value, [200])
    elif kind == "object":
        out["value"] = describe_short(value)
    return out
