"""``zstd`` and ``zstd:<level>`` (1 to 22, default 4, as LitData): standard zstd frames."""

from __future__ import annotations

from typing import Any, ClassVar

from litdata.core.imports import require

__all__ = ["ZstdCompressor"]

DEFAULT_LEVEL = 4
MAX_LEVEL = 22


def _zstandard() -> Any:
    return require("zstandard", extra="zstd", purpose="The zstd compressor")


class ZstdCompressor:
    """Zstandard compression of whole chunks.

    Args:
        level: The compression level, 1 (fastest) to 22 (smallest); 4 by default.
    """

    name: ClassVar[str] = "zstd"

    def __init__(self, level: int | None = None) -> None:
        level = DEFAULT_LEVEL if level is None else level
        if not 1 <= level <= MAX_LEVEL:
            raise ValueError(f"zstd levels go from 1 to 22, got {level} (e.g. 'zstd:7').")
        self.level = level
        _zstandard()  # fail now, with the install hint, rather than on the first chunk

    def compress(self, data: bytes | memoryview) -> bytes:
        """One zstd frame (with its content size, so it decompresses in one call)."""
        return _zstandard().ZstdCompressor(level=self.level).compress(data)  # type: ignore[no-any-return]

    def decompress(self, data: bytes | memoryview) -> bytes:
        """The original bytes; also reads frames written without a content size."""
        decompressor = _zstandard().ZstdDecompressor()
        try:
            return decompressor.decompress(data)  # type: ignore[no-any-return]
        except _zstandard().ZstdError:
            # Frames without a recorded size (some writers stream) need the streaming reader.
            reader = decompressor.stream_reader(bytes(data))
            return reader.read()  # type: ignore[no-any-return]
