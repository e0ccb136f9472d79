"""The column encodings of MosaicML's MDS shards: one decoder per column, from its encoding name.

Each MDS column names how its values are stored (``"int"``, ``"str"``, ``"jpeg"``,
``"ndarray:float32:3,4"``...). Values come back as Mosaic's own reader returns them: Python
``int``/``float``/``str``/``bytes``, NumPy scalars for the sized scalar encodings, NumPy arrays
(writable copies) for ``ndarray``, PIL images for ``pil``/``jpeg``/``png``. ``pkl`` columns go
through litdata's ``pickle`` serializer, so they only import code with ``allow_pickle=True``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from decimal import Decimal
from io import BytesIO
from typing import Any

from litdata.core.dataset_file import decode_json
from litdata.core.errors import DatasetFormatError
from litdata.plugins.serializers.images import raw_pil

__all__ = ["ColumnDecoder", "column_decoder", "column_size", "known_encodings"]

#: Decodes one column's bytes.
ColumnDecoder = Callable[[memoryview], Any]

#: The sized scalar encodings, each named after its NumPy dtype (little-endian, as written).
_SCALARS = frozenset(
    (
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "float32",
        "float64",
    )
)
#: ``ndarray`` value dtypes by the byte that names them in a variable-dtype column.
_ARRAY_DTYPES = {
    8: "uint8",
    9: "int8",
    16: "uint16",
    17: "int16",
    18: "float16",
    32: "uint32",
    33: "int32",
    34: "float32",
    64: "uint64",
    65: "int64",
    66: "float64",
}
#: ``ndarray`` shape dtypes by the two low bits of the shape byte.
_SHAPE_DTYPES = {0: "uint8", 1: "uint16", 2: "uint32", 3: "uint64"}
_VARIABLE = (
    "bytes",
    "str",
    "str_int",
    "str_float",
    "str_decimal",
    "pil",
    "jpeg",
    "png",
    "json",
    "jpeg_array",
    "jpegarray",
    "list[pil]",
    "list[jpeg]",
    "list[png]",
)
_FIXED = {"int": 8, "float": 8}
#: ``ndarray:<dtype>:<shape>`` has at most two parts after the name.
_ARRAY_PARTS = 2


def known_encodings() -> list[str]:
    """The MDS encodings litdata reads (``ndarray`` also as ``ndarray:<dtype>[:<shape>]``)."""
    return sorted({*_SCALARS, *_VARIABLE, *_FIXED, "ndarray", "pkl"})


def _unknown(encoding: str, column: str, where: str, problem: str = "") -> DatasetFormatError:
    return DatasetFormatError(
        f"{where}: column {column!r} uses the MDS encoding {encoding!r}, which litdata cannot "
        f"read{problem}. It reads: {', '.join(known_encodings())}. Convert that column with "
        f"MosaicML Streaming (or optimize() the dataset) to read it here."
    )


def _array_spec(
    encoding: str, column: str, where: str
) -> tuple[str | None, tuple[int, ...] | None]:
    parts = encoding.split(":")[1:]
    if len(parts) > _ARRAY_PARTS:
        raise _unknown(encoding, column, where, " (too many ':' parts)")
    dtype = parts[0] if parts and parts[0] else None
    if dtype is not None and dtype not in _ARRAY_DTYPES.values():
        raise _unknown(encoding, column, where, f" (no ndarray dtype {dtype!r})")
    shape = None
    if len(parts) == _ARRAY_PARTS:
        try:
            shape = tuple(int(dim) for dim in parts[1].split(","))
        except ValueError:
            raise _unknown(encoding, column, where, f" (shape {parts[1]!r})") from None
        if any(dim < 1 for dim in shape):
            raise _unknown(encoding, column, where, f" (shape {parts[1]!r})")
    return dtype, shape


def column_size(encoding: str, column: str, where: str) -> int | None:
    """The fixed byte size of a column's values, or ``None`` when each value has its own.

    Raises:
        DatasetFormatError: The encoding is not one litdata reads.
    """
    import numpy as np

    base = encoding.split(":", 1)[0]
    if base in _SCALARS and base == encoding:
        return int(np.dtype(base).itemsize)
    if encoding in _FIXED:
        return _FIXED[encoding]
    if base == "ndarray":
        dtype, shape = _array_spec(encoding, column, where)
        if dtype is None or shape is None:
            return None
        return int(np.prod(shape)) * int(np.dtype(dtype).itemsize)
    if encoding in _VARIABLE or encoding == "pkl":
        return None
    raise _unknown(encoding, column, where)


def _decode_array(dtype: str | None, shape: tuple[int, ...] | None) -> ColumnDecoder:
    import numpy as np

    def decode(data: memoryview) -> Any:
        position = 0
        kind = dtype
        if kind is None:
            kind = _ARRAY_DTYPES[data[0]]
            position = 1
        dims: Any = shape
        if dims is None:
            byte = data[position]
            ndim, shape_kind = byte >> 2, _SHAPE_DTYPES[byte & 3]
            width = ndim * np.dtype(shape_kind).itemsize
            dims = tuple(int(d) for d in np.frombuffer(data[position + 1 :], shape_kind, ndim))
            position += 1 + width
        return np.frombuffer(data[position:], kind).reshape(dims).copy()

    return decode


def _image(data: memoryview) -> Any:
    from PIL import Image

    return Image.open(BytesIO(bytes(data)))


def _sized_parts(data: memoryview, count: int, start: int) -> list[memoryview]:
    """``count`` consecutive values whose ``u32`` sizes start at byte ``start``."""
    sizes = struct.unpack_from(f"<{count}I", data, start)
    position = start + 4 * count
    parts = []
    for size in sizes:
        parts.append(data[position : position + size])
        position += size
    if position != len(data):
        raise ValueError(f"its {count} values take {position} bytes, not {len(data)}")
    return parts


def _image_list(decode: ColumnDecoder) -> ColumnDecoder:
    """``list[...]``: a reserved ``u32``, the count, one ``u32`` size per image, the images."""

    def decode_list(data: memoryview) -> list[Any]:
        (count,) = struct.unpack_from("<I", data, 4)
        return [decode(part) for part in _sized_parts(data, count, 8)]

    return decode_list


def _jpeg_array(data: memoryview) -> list[Any]:
    """``jpeg_array``: the count, one ``u32`` size per JPEG, the JPEGs."""
    (count,) = struct.unpack_from("<I", data)
    return [_image(part) for part in _sized_parts(data, count, 4)]


def _scalar(dtype: str) -> ColumnDecoder:
    import numpy as np

    return lambda data: np.frombuffer(data, dtype, 1)[0]


_SIMPLE: dict[str, ColumnDecoder] = {
    "bytes": bytes,
    "str": lambda data: str(data, "utf-8"),
    "int": lambda data: struct.unpack("<q", data)[0],
    "float": lambda data: struct.unpack("<d", data)[0],
    "str_int": lambda data: int(str(data, "utf-8")),
    "str_float": lambda data: float(str(data, "utf-8")),
    "str_decimal": lambda data: Decimal(str(data, "utf-8")),
    "json": lambda data: decode_json(data, where="an MDS json value"),
    "pil": raw_pil,
    "jpeg": _image,
    "png": _image,
    "jpeg_array": _jpeg_array,
    "jpegarray": _jpeg_array,
    "list[pil]": _image_list(raw_pil),
    "list[jpeg]": _image_list(_image),
    "list[png]": _image_list(_image),
}


def column_decoder(
    encoding: str, column: str, where: str, unpickle: Callable[[memoryview], Any]
) -> ColumnDecoder:
    """The function that decodes a column's values.

    Args:
        encoding: The column's MDS encoding.
        column: Its name (for messages).
        where: The dataset's ``index.json`` (for messages).
        unpickle: Loads ``pkl`` values (litdata's restricted unpickler unless the reader opted
            in with ``allow_pickle``).

    Raises:
        DatasetFormatError: The encoding is not one litdata reads.
    """
    base = encoding.split(":", 1)[0]
    if base == "ndarray":
        return _decode_array(*_array_spec(encoding, column, where))
    if encoding in _SCALARS:
        return _scalar(encoding)
    if encoding == "pkl":
        return unpickle
    found = _SIMPLE.get(encoding)
    if found is None:
        raise _unknown(encoding, column, where)
    return found
