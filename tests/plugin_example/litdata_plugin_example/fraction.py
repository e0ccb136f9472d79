"""``fraction``: ``fractions.Fraction`` leaves stored as UTF-8 ``"numerator/denominator"``."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, ClassVar


class FractionSerializer:
    """Stores exact fractions (which litdata would otherwise pickle)."""

    name: ClassVar[str] = "fraction"
    types: ClassVar[tuple[str, ...]] = ("fractions.Fraction",)

    def can_serialize(self, item: Any) -> bool:
        """Claims ``Fraction`` values."""
        return isinstance(item, Fraction)

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """``"n/d"`` as UTF-8."""
        if not isinstance(item, Fraction):
            raise TypeError(f"expected a Fraction, got {type(item).__name__}")
        return f"{item.numerator}/{item.denominator}".encode(), None

    def deserialize(self, data: bytes | memoryview) -> Fraction:
        """The fraction."""
        numerator, _, denominator = bytes(data).decode().partition("/")
        return Fraction(int(numerator), int(denominator))

    def setup(self, data_format: str) -> None:
        """Nothing to prepare."""
