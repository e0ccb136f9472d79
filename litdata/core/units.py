"""Byte-size strings such as ``"64MB"``: decimal units, as LitData parses them (and shows them)."""

from __future__ import annotations

import re

__all__ = ["counted", "format_size", "parse_size"]

_UNITS = {
    "tb": 10**12,
    "gb": 10**9,
    "mb": 10**6,
    "kb": 10**3,
    "t": 10**12,
    "g": 10**9,
    "m": 10**6,
    "k": 10**3,
    "b": 1,
}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([a-z]*)\s*$")


def parse_size(value: int | str, *, what: str = "size") -> int:
    """Return a byte count from an int or a size string.

    Args:
        value: An int (bytes) or a string such as ``"64MB"``, ``"1.5g"`` or ``"512kb"``.
        what: The name of the argument, used in error messages.

    Returns:
        The number of bytes (decimal units: ``"1KB"`` is 1,000 bytes).

    Raises:
        ValueError: The value is negative, not a number, or has an unknown unit.
    """
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int or a size string like '64MB', got {value!r}")
    if isinstance(value, int):
        if value <= 0:
            raise ValueError(f"{what} must be positive, got {value}")
        return value
    if not isinstance(value, str):
        raise TypeError(f"{what} must be an int or a size string like '64MB', got {value!r}")
    match = _SIZE.match(value.lower())
    if not match or match.group(2) not in _UNITS:
        raise ValueError(
            f"{what}={value!r} is not a size. Use a number with one of the units "
            f"{sorted(set(_UNITS), key=len)} (decimal: 1KB = 1000 bytes), e.g. '64MB'."
        )
    size = int(float(match.group(1)) * _UNITS[match.group(2)])
    if size <= 0:
        raise ValueError(f"{what} must be positive, got {value!r}")
    return size


def format_size(size: float) -> str:
    """A byte count for people, in the largest decimal unit it fills: ``"31.9 KB"``, ``"512 B"``."""
    for unit, factor in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if abs(size) >= factor:
            return f"{size / factor:,.1f} {unit}"
    return f"{size:,.0f} B"


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless one: ``"1 chunk"``, ``"1,000 samples"``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"
