"""``lz4``: LZ4 frames, faster than zstd but larger. LitData has no lz4, so it cannot read them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from litdata.core.decompression import STEP, gather, too_large
from litdata.core.imports import require

__all__ = ["LZ4Compressor"]

MAX_LEVEL = 16


def _frame() -> Any:
    return require("lz4.frame", extra="lz4", purpose="The lz4 compressor")


def _pieces(data: bytes | memoryview) -> Iterator[bytes]:
    """The frame's plain bytes, :data:`STEP` at a time (what follows the frame is ignored)."""
    decompressor = _frame().LZ4FrameDecompressor()
    piece: bytes = decompressor.decompress(data, max_length=STEP)
    while piece:
        yield piece
        if decompressor.eof:
            return
        piece = decompressor.decompress(b"", max_length=STEP)
    if not decompressor.eof:
        raise ValueError("the lz4 frame is truncated: it ends before its end mark")


class LZ4Compressor:
    """LZ4 frame compression of whole chunks.

    Args:
        level: LZ4 compression level (0 fast ... 16 high compression); 0 by default.
    """

    name: ClassVar[str] = "lz4"

    def __init__(self, level: int | None = None) -> None:
        level = 0 if level is None else level
        if not isinstance(level, int) or isinstance(level, bool):
            raise ValueError(f"lz4: the level must be an integer from 0 to 16, got {level!r}.")
        if not 0 <= level <= MAX_LEVEL:
            raise ValueError(f"lz4 levels go from 0 to 16, got {level} (e.g. 'lz4:9').")
        self.level = level
        _frame()

    def compress(self, data: bytes | memoryview) -> bytes:
        """One LZ4 frame, with its content size."""
        return _frame().compress(data, compression_level=self.level, store_size=True)  # type: ignore[no-any-return]

    def decompress(self, data: bytes | memoryview, max_size: int) -> bytearray:
        """The original bytes, at most ``max_size``, decompressed a piece at a time.

        Raises:
            OutputLimitError: The frame holds (or declares) more than ``max_size`` bytes.
            RuntimeError: ``data`` is no LZ4 frame, or a damaged one.
        """
        declared = _frame().get_frame_info(data)["content_size"]  # 0: not recorded
        if declared > max_size:
            raise too_large("lz4", max_size, declared)
        return gather(_pieces(data), max_size, codec="lz4")
