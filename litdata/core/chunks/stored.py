"""From a chunk file as stored to the plain chunk: checksum, then decompression and unframing.

Where the cache checks and decodes compressed and downloaded chunks (``litdata verify``
checks first and decodes only what passed, to say why a chunk failed).
"""

from __future__ import annotations

from litdata.core.chunks.checksum import Buffer, verify_checksum
from litdata.core.chunks.framing import unframe
from litdata.core.index import ChunkEntry
from litdata.core.protocols import Compressor

__all__ = ["plain_chunk"]


def plain_chunk(
    data: Buffer,
    entry: ChunkEntry,
    *,
    compressor: Compressor | None,
    level: str | None,
    where: str,
) -> Buffer:
    """Check a chunk file's stored bytes and return its plain bytes (LitData's layout).

    Args:
        data: The file's bytes as stored.
        entry: Its index entry.
        compressor: The dataset's codec, or ``None`` when it is not compressed.
        level: The dataset's ``compression_level`` (LitData 0.2.7x framings).
        where: The file or URL, for messages.

    Raises:
        ChunkCorruptError: The checksum differs, or it does not decompress to what the index
            says (decompression stops at that bound: see :mod:`~litdata.core.chunks.framing`).
    """
    verify_checksum(data, entry, where)
    if compressor is None:
        return data
    codec = f"{where} (compressed with the {compressor.name!r} compressor)"
    return unframe(bytes(data), entry, level, compressor.decompress, codec)
