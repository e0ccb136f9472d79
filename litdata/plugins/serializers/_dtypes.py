"""LitData's dtype numbering, part of the format: the numbers are stored in data.

``no_header_numpy:<n>`` and the ``numpy`` header use the numpy table; ``no_header_tensor:<n>``
and the ``tensor`` header use the torch table, where several numbers name one dtype (writers
record the last of them, readers accept all).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

__all__ = [
    "NUMPY_DTYPES",
    "TORCH_DTYPE_NAMES",
    "NoHeader",
    "dtype_of_format",
    "numpy_dtype",
    "numpy_dtype_index",
    "torch_dtype",
    "torch_dtype_index",
]

#: The numpy table; the position is the number stored in data.
NUMPY_DTYPES: tuple[np.dtype[Any], ...] = tuple(
    np.dtype(name)
    for name in (
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "bool",
    )
)
_NUMPY_INDEX = {dtype: index for index, dtype in enumerate(NUMPY_DTYPES)}

#: The torch table, by dtype name.
TORCH_DTYPE_NAMES = (
    "float32",
    "float32",
    "float64",
    "float64",
    "complex64",
    "complex64",
    "complex128",
    "complex128",
    "float16",
    "float16",
    "bfloat16",
    "uint8",
    "int8",
    "int16",
    "int16",
    "int32",
    "int32",
    "int64",
    "int64",
    "bool",
    "uint16",
)


def numpy_dtype_index(dtype: np.dtype[Any]) -> int | None:
    """The number of ``dtype`` (any byte order), or ``None`` if it has none."""
    native: np.dtype[Any] = dtype.newbyteorder("=") if dtype.byteorder in "<>" else dtype
    return _NUMPY_INDEX.get(native)


def numpy_dtype(index: int) -> np.dtype[Any]:
    """The little-endian numpy dtype numbered ``index``.

    Raises:
        ValueError: The number is unknown.
    """
    if not 0 <= index < len(NUMPY_DTYPES):
        raise ValueError(f"numpy dtype number {index} is unknown.")
    little: np.dtype[Any] = NUMPY_DTYPES[index].newbyteorder("<")
    return little


def torch_dtype(index: int) -> torch.dtype:
    """The torch dtype numbered ``index`` (imports torch).

    Raises:
        ValueError: The number is unknown.
    """
    import torch

    if not 0 <= index < len(TORCH_DTYPE_NAMES):
        raise ValueError(f"torch dtype number {index} is unknown.")
    return getattr(torch, TORCH_DTYPE_NAMES[index])  # type: ignore[no-any-return]


def torch_dtype_index(dtype: torch.dtype | np.dtype[Any] | str) -> int | None:
    """The number writers record for ``dtype`` (the last alias), or ``None``.

    Args:
        dtype: A torch dtype, a native-order numpy dtype (or anything ``np.dtype`` accepts),
            or a torch dtype's name (``"bfloat16"``).
    """
    name = str(dtype).removeprefix("torch.")
    if name not in TORCH_DTYPE_NAMES:
        try:
            numpy = np.dtype(dtype)  # type: ignore[arg-type]  # a torch dtype raises TypeError
        except TypeError:  # another torch dtype, or not a dtype
            return None
        if not numpy.isnative:  # torch reads raw data in native byte order only
            return None
        name = numpy.name
    for index in range(len(TORCH_DTYPE_NAMES) - 1, -1, -1):
        if TORCH_DTYPE_NAMES[index] == name:
            return index
    return None


def dtype_of_format(data_format: str) -> Any:
    """The dtype a ``no_header_numpy:<n>`` or ``no_header_tensor:<n>`` name records.

    Raises:
        ValueError: The name carries no valid dtype number.
    """
    base, _, number = data_format.partition(":")
    if not number.isdigit():
        raise ValueError(f"{data_format!r} lacks its dtype number ({base}:<n>).")
    if base == "no_header_tensor":
        return torch_dtype(int(number))
    return numpy_dtype(int(number))


class NoHeader:
    """What the no-header serializers share: the dtype their ``data_format`` names.

    A subclass stores 1-D data only and records the dtype in the format's name
    (``no_header_numpy:9``, ``no_header_tensor:18``); ``setup`` learns it back.
    """

    def __init__(self) -> None:
        self._dtype: Any = None

    def setup(self, data_format: str) -> None:
        """Learn the dtype from ``<name>:<dtype number>``."""
        self._dtype = dtype_of_format(data_format)

    def element_size(self) -> int:
        """Bytes per element of the dtype ``setup`` learnt."""
        return int(self.dtype.itemsize)

    @property
    def dtype(self) -> Any:
        """The dtype ``setup`` learnt.

        Raises:
            RuntimeError: ``setup`` was not called.
        """
        if self._dtype is None:
            raise RuntimeError("setup() must be called with the data_format first")
        return self._dtype
