"""``lz4``: LZ4 frames, faster than zstd but larger. LitData has no lz4, so it cannot read them."""

from __future__ import annotations

from typing import Any, ClassVar

from litdata.core.imports import require

__all__ = ["LZ4Compressor"]

MAX_LEVEL = 16


def _frame() -> Any:
    return require("lz4.frame", extra="lz4", purpose="The lz4 compressor")


class LZ4Compressor:
    """LZ4 frame compression of whole chunks.

    Args:
        level: LZ4 compression level (0 fast ... 16 high compression); 0 by default.
    """

    name: ClassVar[str] = "lz4"

    def __init__(self, level: int | None = None) -> None:
        level = 0 if level is None else level
        if not 0 <= level <= MAX_LEVEL:
            raise ValueError(f"lz4 levels go from 0 to 16, got {level} (e.g. 'lz4:9').")
        self.level = level
        _frame()

    def compress(self, data: bytes | memoryview) -> bytes:
        """One LZ4 frame."""
        return _frame().compress(data, compression_level=self.level, store_size=True)  # type: ignore[no-any-return]

    def decompress(self, data: bytes | memoryview) -> bytes:
        """The original bytes."""
        return _frame().decompress(data)  # type: ignore[no-any-return]
