"""``zstd`` and ``zstd:<level>`` (1 to 22, default 4, as LitData): standard zstd frames."""

from __future__ import annotations

from typing import Any, ClassVar

from litdata.core.decompression import fill, too_large
from litdata.core.imports import require

__all__ = ["ZstdCompressor", "decompress_zstd"]

DEFAULT_LEVEL = 4
MAX_LEVEL = 22


def _zstandard() -> Any:
    return require("zstandard", extra="zstd", purpose="The zstd compressor")


def decompress_zstd(data: bytes | memoryview, max_size: int) -> bytearray:
    """The plain bytes of the zstd frame at the start of ``data``, at most ``max_size``.

    A frame that declares its content size (as ours and LitData's do) is refused at once when
    that is over ``max_size``; one that does not (streaming writers) is read until it ends or
    passes ``max_size``. Either way the buffer grows with the output, never ahead of it.

    Raises:
        OutputLimitError: The frame holds (or declares) more than ``max_size`` bytes.
        zstandard.ZstdError: ``data`` is no zstd frame, or a damaged one.
    """
    zstandard = _zstandard()
    declared = zstandard.frame_content_size(data)  # -1: not recorded
    if declared > max_size:
        raise too_large("zstd", max_size, declared)
    reader = zstandard.ZstdDecompressor().stream_reader(data, closefd=False)
    return fill(
        reader.readinto,
        max_size,
        codec="zstd",
        compressed=len(data),
        declared=declared if declared >= 0 else None,
    )


class ZstdCompressor:
    """Zstandard compression of whole chunks.

    Args:
        level: The compression level, 1 (fastest) to 22 (smallest); 4 by default.
    """

    name: ClassVar[str] = "zstd"

    def __init__(self, level: int | None = None) -> None:
        level = DEFAULT_LEVEL if level is None else level
        if not isinstance(level, int) or isinstance(level, bool):
            raise ValueError(f"zstd: the level must be an integer from 1 to 22, got {level!r}.")
        if not 1 <= level <= MAX_LEVEL:
            raise ValueError(f"zstd levels go from 1 to 22, got {level} (e.g. 'zstd:7').")
        self.level = level
        _zstandard()  # fail now, with the install hint, rather than on the first chunk

    def compress(self, data: bytes | memoryview) -> bytes:
        """One zstd frame, with its content size."""
        return _zstandard().ZstdCompressor(level=self.level).compress(data)  # type: ignore[no-any-return]

    def decompress(self, data: bytes | memoryview, max_size: int) -> bytearray:
        """The original bytes, at most ``max_size``; frames without a content size read too.

        Raises:
            OutputLimitError: The frame holds more than ``max_size`` bytes.
        """
        return decompress_zstd(data, max_size)
