"""``json``: lists stored as one leaf, in LitData 0.2.7x's tagged binary encoding.

LitData 0.2.7x writes each list of plain values inside a dict sample as a single ``json``
leaf, so its length may vary; litdata does the same (see ``litdata.engine.items.treespec``), and
reads the lists older writers stored as containers. The payload starts with a tag byte:
``0`` JSON text, ``1`` list of str, ``2`` list of int64, ``3`` list of float64, ``4`` list of
bool, ``5`` dict, ``6`` list of flat records, ``7``-``11`` scalars (str, int64, float64,
bool, None). A payload starting with ``[`` or ``{`` is plain JSON text (older writers).
"""

from __future__ import annotations

import json
import struct
from typing import Any, ClassVar

__all__ = ["JsonSerializer", "decode_json_leaf", "encode_json_leaf"]

_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")

_JSON, _STRS, _INTS, _FLOATS, _BOOLS, _DICT, _RECORDS = range(7)
_STR, _INT, _FLOAT, _BOOL, _NONE = range(7, 12)
# Cell tags inside records (tag 6).
_CELL_NONE, _CELL_STR, _CELL_INT, _CELL_FLOAT, _CELL_BOOL = range(0x10, 0x15)
_INT64 = range(-(2**63), 2**63)


class _Reader:
    __slots__ = ("data", "position")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.position = 0

    def take(self, size: int) -> bytes:
        start = self.position
        self.position += size
        if self.position > len(self.data):
            raise ValueError("json leaf is truncated")
        return self.data[start : self.position]

    def u8(self) -> int:
        return self.take(1)[0]

    def u32(self) -> int:
        return int(_U32.unpack(self.take(4))[0])

    def text(self) -> str:
        return self.take(self.u32()).decode("utf-8")

    def i64(self) -> int:
        return int(_I64.unpack(self.take(8))[0])

    def f64(self) -> float:
        return float(_F64.unpack(self.take(8))[0])


def _scalar(reader: _Reader, tag: int) -> Any:
    if tag in (_STR, _CELL_STR):
        return reader.text()
    if tag in (_INT, _CELL_INT):
        return reader.i64()
    if tag in (_FLOAT, _CELL_FLOAT):
        return reader.f64()
    if tag in (_BOOL, _CELL_BOOL):
        return reader.u8() != 0
    if tag in (_NONE, _CELL_NONE):
        return None
    raise ValueError(f"json leaf has an unknown tag {tag}")


def _decode(reader: _Reader) -> Any:
    tag = reader.u8()
    if tag == _JSON:
        return json.loads(reader.text())
    if tag == _STRS:
        return [reader.text() for _ in range(reader.u32())]
    if tag == _INTS:
        return [reader.i64() for _ in range(reader.u32())]
    if tag == _FLOATS:
        return [reader.f64() for _ in range(reader.u32())]
    if tag == _BOOLS:
        return [reader.u8() != 0 for _ in range(reader.u32())]
    if tag == _DICT:
        return {reader.text(): _decode(reader) for _ in range(reader.u32())}
    if tag == _RECORDS:
        rows, width = reader.u32(), reader.u32()
        keys = [reader.text() for _ in range(width)]
        return [{key: _scalar(reader, reader.u8()) for key in keys} for _ in range(rows)]
    return _scalar(reader, tag)


def decode_json_leaf(data: bytes | memoryview) -> Any:
    """Decode a ``json`` leaf payload.

    Raises:
        ValueError: The payload is truncated or has an unknown tag.
    """
    raw = bytes(data)
    if raw[:1] in (b"[", b"{"):
        return json.loads(raw)
    reader = _Reader(raw)
    value = _decode(reader)
    if reader.position != len(raw):
        raise ValueError("json leaf has trailing bytes")
    return value


def _text(value: str) -> bytes:
    encoded = value.encode("utf-8")
    return _U32.pack(len(encoded)) + encoded


def _cell(value: Any) -> bytes | None:
    if value is None:
        return bytes([_CELL_NONE])
    if isinstance(value, bool):
        return bytes([_CELL_BOOL, value])
    if isinstance(value, int) and value in _INT64:
        return bytes([_CELL_INT]) + _I64.pack(value)
    if isinstance(value, float):
        return bytes([_CELL_FLOAT]) + _F64.pack(value)
    if isinstance(value, str):
        return bytes([_CELL_STR]) + _text(value)
    return None


def _records(items: list[Any]) -> bytes | None:
    if not items or not all(type(item) is dict for item in items):
        return None
    keys = list(items[0])
    if not all(isinstance(key, str) for key in keys) or any(list(i) != keys for i in items):
        return None
    cells = [_cell(item[key]) for item in items for key in keys]
    if any(cell is None for cell in cells):
        return None
    header = bytes([_RECORDS]) + _U32.pack(len(items)) + _U32.pack(len(keys))
    return header + b"".join(_text(key) for key in keys) + b"".join(cells)  # type: ignore[arg-type]


def encode_json_leaf(items: list[Any]) -> bytes:
    """Encode a list the way LitData 0.2.7x does (the most specific tag that fits).

    Raises:
        TypeError: The list holds values JSON cannot represent.
    """
    count = _U32.pack(len(items))
    kinds = {type(item) for item in items}
    if not items or kinds == {str}:
        return bytes([_STRS]) + count + b"".join(_text(item) for item in items)
    if kinds == {bool}:
        return bytes([_BOOLS]) + count + bytes(items)
    if kinds == {int} and all(item in _INT64 for item in items):
        return bytes([_INTS]) + count + b"".join(_I64.pack(item) for item in items)
    if kinds == {float}:
        return bytes([_FLOATS]) + count + b"".join(_F64.pack(item) for item in items)
    records = _records(items)
    if records is not None:
        return records
    try:
        text = json.dumps(items, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError) as error:
        raise TypeError(f"the list cannot be stored as JSON: {error}") from error
    return bytes([_JSON]) + _text(text)


class JsonSerializer:
    """A list of plain values as one leaf (the pytree hands over only such lists)."""

    name: ClassVar[str] = "json"
    types: ClassVar[tuple[str, ...]] = ("builtins.list",)
    priority: ClassVar[int] = 1

    def can_serialize(self, item: Any) -> bool:
        """Claims lists: the pytree makes a leaf of a list only when it holds plain values."""
        return type(item) is list

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """The tagged encoding of a list."""
        if not isinstance(item, list):
            raise TypeError(f"expected a list, got {type(item).__qualname__}")
        return encode_json_leaf(item), None

    def deserialize(self, data: bytes | memoryview) -> Any:
        """The decoded list (or value)."""
        return decode_json_leaf(data)

    def setup(self, data_format: str) -> None:
        """Nothing to prepare."""
