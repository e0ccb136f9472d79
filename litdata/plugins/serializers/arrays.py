"""NumPy arrays: ``numpy`` (with a dtype and shape header) and ``no_header_numpy`` (1-D).

Layouts and dtype numbers are LitData's: ``numpy`` stores ``[u32 dtype][u32 ndim][u32 dims]``
then the C-order data; ``no_header_numpy:<dtype>`` stores only the data of a 1-D array.
"""

from __future__ import annotations

import struct
from typing import Any, ClassVar

import numpy as np

from litdata.plugins.serializers._dtypes import NoHeader, numpy_dtype, numpy_dtype_index

__all__ = ["NoHeaderNumpySerializer", "NumpySerializer"]


_BIG = ">" if np.little_endian else "="


def _little_bytes(array: np.ndarray[Any, Any]) -> bytes:
    """The array's data in C order and little-endian byte order."""
    if array.dtype.byteorder == _BIG:
        array = array.astype(array.dtype.newbyteorder("<"))
    return array.tobytes()


class NumpySerializer:
    """Arrays with more than one dimension, with their dtype and shape."""

    name: ClassVar[str] = "numpy"
    types: ClassVar[tuple[str, ...]] = ("numpy.ndarray",)
    priority: ClassVar[int] = 125

    def can_serialize(self, item: Any) -> bool:
        """Claims numeric arrays with ``ndim > 1`` (1-D ones go to ``no_header_numpy``)."""
        return (
            isinstance(item, np.ndarray)
            and item.ndim > 1
            and numpy_dtype_index(item.dtype) is not None
        )

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """Header, then the C-order little-endian data."""
        if not isinstance(item, np.ndarray):
            raise TypeError(f"expected a numpy array, got {type(item).__qualname__}")
        index = numpy_dtype_index(item.dtype)
        if index is None:
            raise TypeError(f"numpy dtype {item.dtype} has no LitData number; it is not stored")
        header = struct.pack(f"<{2 + item.ndim}I", index, item.ndim, *item.shape)
        return header + _little_bytes(item), None

    def deserialize(self, data: bytes | memoryview) -> np.ndarray[Any, Any]:
        """A writable array of the stored dtype and shape."""
        index, ndim = struct.unpack_from("<II", data)
        shape = struct.unpack_from(f"<{ndim}I", data, 8)
        dtype = numpy_dtype(index)
        array: np.ndarray[Any, Any] = np.frombuffer(data, dtype=dtype, offset=8 + 4 * ndim)
        copied: np.ndarray[Any, Any] = array.reshape(shape).copy()
        return copied

    def setup(self, data_format: str) -> None:
        """Nothing to prepare: the header says everything."""


class NoHeaderNumpySerializer(NoHeader):
    """1-D arrays, data only; the dtype is in the format name (``no_header_numpy:9``)."""

    name: ClassVar[str] = "no_header_numpy"
    types: ClassVar[tuple[str, ...]] = ("numpy.ndarray",)
    priority: ClassVar[int] = 130

    def can_serialize(self, item: Any) -> bool:
        """Claims 1-D numeric arrays."""
        return (
            isinstance(item, np.ndarray)
            and item.ndim == 1
            and numpy_dtype_index(item.dtype) is not None
        )

    def serialize(self, item: Any) -> tuple[bytes, str]:
        """The raw data; the name records the dtype."""
        if not isinstance(item, np.ndarray) or item.ndim != 1:
            raise TypeError(f"expected a 1-D numpy array, got {type(item).__qualname__}")
        index = numpy_dtype_index(item.dtype)
        if index is None:
            raise TypeError(f"numpy dtype {item.dtype} has no LitData number; it is not stored")
        return _little_bytes(item), f"no_header_numpy:{index}"

    def deserialize(self, data: bytes | memoryview) -> np.ndarray[Any, Any]:
        """A writable 1-D array."""
        copied: np.ndarray[Any, Any] = np.frombuffer(data, dtype=self.dtype).copy()
        return copied
