"""``bz2`` and ``bz2:<level>`` (1 to 9): chunk compression with the standard library's bz2."""

from __future__ import annotations

import bz2
from typing import ClassVar


class Bz2Compressor:
    """bz2 compression of whole chunks.

    Args:
        level: 1 (fastest) to 9 (smallest, the default).
    """

    name: ClassVar[str] = "bz2"

    def __init__(self, level: int | None = None) -> None:
        level = 9 if level is None else level
        if not 1 <= level <= 9:  # bz2's own range
            raise ValueError(f"bz2 levels go from 1 to 9, got {level}")
        self.level = level

    def compress(self, data: bytes | memoryview) -> bytes:
        """One bz2 stream."""
        return bz2.compress(data, self.level)

    def decompress(self, data: bytes | memoryview) -> bytes:
        """The original bytes."""
        return bz2.decompress(data)
