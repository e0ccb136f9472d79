"""``bz2`` and ``bz2:<level>`` (1 to 9): chunk compression with the standard library's bz2."""

from __future__ import annotations

import bz2
from typing import ClassVar

#: The most plain bytes asked of the decompressor at a time.
_STEP = 1 << 20


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

    def decompress(self, data: bytes | memoryview, max_size: int) -> bytearray:
        """The original bytes, a megabyte at a time, refused once past ``max_size``.

        Raises:
            ValueError: The stream holds more than ``max_size`` bytes, or is truncated.
        """
        decompressor = bz2.BZ2Decompressor()
        out = bytearray(decompressor.decompress(data, _STEP))
        while not decompressor.eof and len(out) <= max_size:
            if decompressor.needs_input:
                raise ValueError("the bz2 stream is truncated")
            out += decompressor.decompress(b"", _STEP)
        if len(out) > max_size:
            raise ValueError(f"the bz2 stream holds more than {max_size:,} bytes")
        return out
