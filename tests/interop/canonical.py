"""Canonical, JSON-able description of a streamed sample, identical on both sides of a test.

Used by ``read_with_litdata.py`` (under the peers' interpreter, with Lightning AI's LitData) and
by our own test-suite (with our package), so the two dumps can be compared with ``==``.
Only the standard library and NumPy are required; torch tensors and PIL images are recognised
by duck typing, so neither package has to be importable.

Rules (one JSON object per value, always with a ``"t"`` key):

* ``None``/``bool``/``int``/``str`` keep their value; ``float`` is stored as ``float.hex`` so
  NaN, infinities and the last bit survive; ``complex`` as two hex floats.
* ``bytes``/``bytearray``/``memoryview`` are all ``"bytes"`` (LitData may hand back a
  ``memoryview``), described by length and SHA-256.
* NumPy scalars keep their dtype; arrays and torch tensors keep dtype, shape, SHA-256 of the
  C-order little-endian data and, when small, the values.
* PIL images keep mode, size and SHA-256 of ``tobytes()``.
* ``dict`` keeps key order; ``list``/``tuple`` are distinguished; a namedtuple records its
  class name and fields.
* Anything else becomes ``{"t": "other", "type": ..., "repr": ...}`` so a mismatch is visible.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

#: Arrays/tensors with at most this many elements also carry their values (readable diffs).
SMALL = 64


def _sha(data: bytes | memoryview) -> str:
    return hashlib.sha256(data).hexdigest()


def _float(value: float) -> str:
    return float(value).hex()


def _array_entry(kind: str, dtype: str, array: np.ndarray) -> dict[str, Any]:
    array = np.ascontiguousarray(array)
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    entry: dict[str, Any] = {
        "t": kind,
        "dtype": dtype,
        "shape": list(array.shape),
        "sha256": _sha(array.tobytes()),
    }
    if array.size <= SMALL and array.dtype.kind in "biuf":
        flat = array.reshape(-1)
        if array.dtype.kind == "f":
            entry["values"] = [_float(v) for v in flat.tolist()]
        else:
            entry["values"] = [
                int(v) if not isinstance(v, bool) else bool(v) for v in flat.tolist()
            ]
    return entry


def _is_torch_tensor(value: Any) -> bool:
    cls = type(value)
    return (
        cls.__module__.startswith("torch") and hasattr(value, "dtype") and hasattr(value, "numpy")
    )


def _is_pil_image(value: Any) -> bool:
    return any(
        klass.__module__ == "PIL.Image" and klass.__name__ == "Image"
        for klass in type(value).__mro__
    )


def _torch_entry(value: Any) -> dict[str, Any]:
    dtype = str(value.dtype).replace("torch.", "")
    tensor = value.detach().cpu().contiguous()
    if dtype == "bfloat16":
        # NumPy has no bfloat16: hash the raw 2-byte words instead.
        import torch  # local: only reached when torch is installed

        array = tensor.view(torch.int16).numpy()
    else:
        array = tensor.numpy()
    return _array_entry("tensor", dtype, array)


def canonical(value: Any) -> Any:
    """Return the canonical JSON-able description of ``value`` (see module docstring)."""
    if value is None:
        return {"t": "none"}
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    if isinstance(value, int) and type(value) is int:
        return {"t": "int", "v": value}
    if isinstance(value, float) and type(value) is float:
        return {"t": "float", "v": _float(value)}
    if type(value) is complex:
        return {"t": "complex", "v": [_float(value.real), _float(value.imag)]}
    if isinstance(value, str) and type(value) is str:
        return {"t": "str", "v": value}
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        entry: dict[str, Any] = {"t": "bytes", "len": len(raw), "sha256": _sha(raw)}
        if len(raw) <= SMALL:
            entry["hex"] = raw.hex()
        return entry
    if isinstance(value, np.generic):
        item = value.item()
        if isinstance(item, float):
            item = _float(item)
        elif isinstance(item, complex):
            item = [_float(item.real), _float(item.imag)]
        elif isinstance(item, bytes):
            item = item.hex()
        return {"t": "np.scalar", "dtype": value.dtype.name, "v": item}
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "OUSV":
            return {
                "t": "ndarray",
                "dtype": value.dtype.str,
                "shape": list(value.shape),
                "items": [canonical(v) for v in value.reshape(-1).tolist()],
            }
        return _array_entry("ndarray", value.dtype.name, value)
    if _is_torch_tensor(value):
        return _torch_entry(value)
    if _is_pil_image(value):
        return {
            "t": "pil",
            "mode": value.mode,
            "size": list(value.size),
            "sha256": _sha(value.tobytes()),
        }
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {
            "t": "namedtuple",
            "type": type(value).__name__,
            "fields": list(value._fields),
            "items": [canonical(v) for v in value],
        }
    if isinstance(value, tuple):
        return {"t": "tuple", "items": [canonical(v) for v in value]}
    if isinstance(value, list):
        return {"t": "list", "items": [canonical(v) for v in value]}
    if isinstance(value, dict):
        return {
            "t": "dict",
            "items": [
                [k if isinstance(k, str) else canonical(k), canonical(v)] for k, v in value.items()
            ],
        }
    return {
        "t": "other",
        "type": f"{type(value).__module__}.{type(value).__qualname__}",
        "repr": repr(value),
    }


def dumps(obj: Any) -> str:
    """Serialise an already-canonical object deterministically (sorted keys, compact)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def first_difference(left: Any, right: Any, path: str = "$") -> str | None:
    """Return a human-readable path to the first difference between two canonical objects."""
    if type(left) is not type(right):
        kinds = f"{type(left).__name__} != {type(right).__name__}"
        return f"{path}: {kinds} ({left!r:.200} vs {right!r:.200})"
    if isinstance(left, dict):
        for key in sorted(set(left) | set(right), key=str):
            if key not in left or key not in right:
                return f"{path}.{key}: missing on one side"
            found = first_difference(left[key], right[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(left, list):
        if len(left) != len(right):
            return f"{path}: length {len(left)} != {len(right)}"
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if left == right else f"{path}: {left!r:.200} != {right!r:.200}"
