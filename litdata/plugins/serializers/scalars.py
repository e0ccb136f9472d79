"""Python scalars: ``bool``, ``int``, ``float`` (fixed sizes), ``str`` and ``bytes``."""

from __future__ import annotations

import numbers
import struct
from typing import Any, ClassVar

__all__ = ["BoolSerializer", "BytesSerializer", "FloatSerializer", "IntSerializer", "StrSerializer"]

_INT = struct.Struct("<q")
_FLOAT = struct.Struct("<d")


class _Plain:
    """Serializers that need no setup."""

    def setup(self, data_format: str) -> None:
        """Nothing to prepare."""


class BoolSerializer(_Plain):
    """``bool`` as one byte (checked before ``int``, since ``bool`` is an ``int``)."""

    name: ClassVar[str] = "bool"
    types: ClassVar[tuple[str, ...]] = ("builtins.bool",)
    priority: ClassVar[int] = 200
    fixed_size: ClassVar[int] = 1
    #: LitData's name for the fixed size.
    size: ClassVar[int] = 1

    def can_serialize(self, item: Any) -> bool:
        """Claims ``bool`` values."""
        return type(item) is bool

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """One byte, 1 or 0."""
        if type(item) is not bool:
            raise TypeError(f"expected a bool, got {type(item).__qualname__}")
        return (b"\x01" if item else b"\x00"), None

    def deserialize(self, data: bytes | memoryview) -> bool:
        """Any non-zero byte is ``True``."""
        return data[0] != 0


class IntSerializer(_Plain):
    """``int`` as a little-endian int64."""

    name: ClassVar[str] = "int"
    types: ClassVar[tuple[str, ...]] = ("builtins.int",)
    priority: ClassVar[int] = 190
    fixed_size: ClassVar[int] = 8

    def can_serialize(self, item: Any) -> bool:
        """Claims ``int`` values (not ``bool``)."""
        return isinstance(item, int) and not isinstance(item, bool)

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """Eight bytes; values outside int64 are refused.

        Any integer is accepted where the first sample had an ``int`` (a numpy ``int64``
        from the same computation, say), and read back as an ``int``, as in LitData.
        """
        if isinstance(item, bool) or not isinstance(item, numbers.Integral):
            raise TypeError(f"expected an int, got {type(item).__qualname__}")
        try:
            return _INT.pack(int(item)), None
        except struct.error:
            raise OverflowError(f"{item} does not fit in a signed 64-bit integer") from None

    def deserialize(self, data: bytes | memoryview) -> int:
        """The int64 value."""
        return _INT.unpack(data)[0]  # type: ignore[no-any-return]


class FloatSerializer(_Plain):
    """``float`` as a little-endian float64."""

    name: ClassVar[str] = "float"
    types: ClassVar[tuple[str, ...]] = ("builtins.float",)
    priority: ClassVar[int] = 180
    fixed_size: ClassVar[int] = 8

    def can_serialize(self, item: Any) -> bool:
        """Claims ``float`` values (including ``numpy.float64``, a float subclass)."""
        return isinstance(item, float)

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """Eight bytes."""
        if not isinstance(item, float):
            raise TypeError(f"expected a float, got {type(item).__qualname__}")
        return _FLOAT.pack(item), None

    def deserialize(self, data: bytes | memoryview) -> float:
        """The float64 value."""
        return _FLOAT.unpack(data)[0]  # type: ignore[no-any-return]


class StrSerializer(_Plain):
    """``str`` as UTF-8."""

    name: ClassVar[str] = "str"
    types: ClassVar[tuple[str, ...]] = ("builtins.str",)
    priority: ClassVar[int] = 210

    def can_serialize(self, item: Any) -> bool:
        """Claims ``str`` values (image paths are claimed first by the ``image`` serializer)."""
        return isinstance(item, str)

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """UTF-8 bytes."""
        if not isinstance(item, str):
            raise TypeError(f"expected a str, got {type(item).__qualname__}")
        return item.encode("utf-8"), None

    def deserialize(self, data: bytes | memoryview) -> str:
        """The decoded string."""
        return str(data, "utf-8")


class BytesSerializer(_Plain):
    """``bytes`` as they are."""

    name: ClassVar[str] = "bytes"
    types: ClassVar[tuple[str, ...]] = ("builtins.bytes",)
    priority: ClassVar[int] = 140

    def can_serialize(self, item: Any) -> bool:
        """Claims ``bytes`` (not ``bytearray``, as LitData)."""
        return isinstance(item, bytes)

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """The bytes themselves."""
        if not isinstance(item, bytes):
            raise TypeError(f"expected bytes, got {type(item).__qualname__}")
        return item, None

    def deserialize(self, data: bytes | memoryview) -> bytes:
        """A copy as ``bytes`` (never a view of a memory-mapped chunk)."""
        return bytes(data)
