"""Torch tensors: ``tensor`` (with a dtype and shape header) and ``no_header_tensor`` (1-D).

Layouts and dtype numbers are LitData's. The ``tensor`` header is big-endian
``[u32 dtype][u32 ndim][u32 dims]``. Torch is imported only when a tensor is met.
"""

from __future__ import annotations

import struct
import sys
from typing import TYPE_CHECKING, Any, ClassVar

from litdata.engine.items.wrappers import Tensor
from litdata.plugins.serializers._dtypes import NoHeader, torch_dtype, torch_dtype_index

if TYPE_CHECKING:
    import torch

__all__ = ["NoHeaderTensorSerializer", "TensorSerializer"]


def _is_tensor(item: Any) -> bool:
    torch_module = sys.modules.get("torch")
    return torch_module is not None and isinstance(item, torch_module.Tensor)


def _unwrap(item: Any) -> Any:
    """The tensor a ``Tensor(array=...)`` wrapper holds; any other item as it is."""
    if not isinstance(item, Tensor):
        return item
    if item.array is None:
        raise TypeError(
            "Tensor(path=/bytes=, dtype=) is raw 1-D data, stored by no_header_tensor, not here"
        )
    import torch

    return torch.as_tensor(item.array)


def _raw_wrapped(item: Tensor) -> tuple[bytes, str]:
    """The raw data of ``Tensor(path=/bytes=, dtype=)`` as it is, and its format name.

    Raises:
        TypeError: The dtype has no LitData number.
        ValueError: The data is not a whole number of items of that dtype.
    """
    index = torch_dtype_index(item.dtype)
    if index is None:
        raise TypeError(
            f"Tensor(dtype={item.dtype!r}): the dtype has no LitData tensor number; use a "
            f"native-order numpy or torch dtype such as 'int16' or 'bfloat16'"
        )
    data = item.read()
    itemsize = torch_dtype(index).itemsize
    if len(data) % itemsize:
        source = item.path or "bytes="
        raise ValueError(
            f"Tensor({source}, dtype={item.dtype!r}): {len(data)} bytes are not a whole "
            f"number of {itemsize}-byte items"
        )
    return data, f"no_header_tensor:{index}"


def _raw(tensor: torch.Tensor) -> bytes:
    import torch

    flat = tensor.detach().cpu().contiguous().reshape(-1)
    if flat.numel() == 0:
        return b""
    return flat.view(torch.uint8).numpy().tobytes()  # works for bfloat16, unlike .numpy()


def _from_raw(data: bytes | memoryview, dtype: torch.dtype) -> torch.Tensor:
    import torch

    if len(data) == 0:
        return torch.empty(0, dtype=dtype)
    return torch.frombuffer(bytearray(data), dtype=dtype)


def _index_of(tensor: torch.Tensor) -> int:
    index = torch_dtype_index(tensor.dtype)
    if index is None:
        raise TypeError(f"torch dtype {tensor.dtype} has no LitData number; it is not stored")
    return index


class TensorSerializer:
    """Tensors that are not 1-D (including 0-d), with their dtype and shape."""

    name: ClassVar[str] = "tensor"
    types: ClassVar[tuple[str, ...]] = (
        "torch.Tensor",
        "litdata.engine.items.wrappers.Tensor",
    )
    priority: ClassVar[int] = 115

    def can_serialize(self, item: Any) -> bool:
        """Claims tensors whose ``ndim`` is not 1 and whose dtype has a number."""
        if isinstance(item, Tensor):
            return item.array is not None and len(item.shape) != 1
        return _is_tensor(item) and item.ndim != 1 and torch_dtype_index(item.dtype) is not None

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """Big-endian header, then the C-order data."""
        item = _unwrap(item)
        if not _is_tensor(item):
            raise TypeError(f"expected a torch.Tensor, got {type(item).__qualname__}")
        header = struct.pack(f">{2 + item.ndim}I", _index_of(item), item.ndim, *item.shape)
        return header + _raw(item), None

    def deserialize(self, data: bytes | memoryview) -> torch.Tensor:
        """A tensor of the stored dtype and shape."""
        index, ndim = struct.unpack_from(">II", data)
        shape = struct.unpack_from(f">{ndim}I", data, 8)
        return _from_raw(data[8 + 4 * ndim :], torch_dtype(index)).reshape(shape)

    def setup(self, data_format: str) -> None:
        """Nothing to prepare: the header says everything."""


class NoHeaderTensorSerializer(NoHeader):
    """1-D tensors, data only; the dtype is in the format name (``no_header_tensor:18``)."""

    name: ClassVar[str] = "no_header_tensor"
    types: ClassVar[tuple[str, ...]] = (
        "torch.Tensor",
        "litdata.engine.items.wrappers.Tensor",
    )
    priority: ClassVar[int] = 120

    def can_serialize(self, item: Any) -> bool:
        """Claims 1-D tensors whose dtype has a number."""
        if isinstance(item, Tensor):
            return item.array is None or len(item.shape) == 1
        return _is_tensor(item) and item.ndim == 1 and torch_dtype_index(item.dtype) is not None

    def serialize(self, item: Any) -> tuple[bytes, str]:
        """The raw data; the name records the dtype."""
        if isinstance(item, Tensor) and item.array is None:
            return _raw_wrapped(item)
        item = _unwrap(item)
        if not _is_tensor(item) or item.ndim != 1:
            raise TypeError(f"expected a 1-D torch.Tensor, got {type(item).__qualname__}")
        return _raw(item), f"no_header_tensor:{_index_of(item)}"

    def deserialize(self, data: bytes | memoryview) -> torch.Tensor:
        """A 1-D tensor that owns its memory."""
        return _from_raw(data, self.dtype)
