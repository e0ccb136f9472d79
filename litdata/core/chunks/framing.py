"""Compressed chunk layouts, turned back into plain chunks.

``compression_level`` (a config key of LitData 0.2.7x) says how a chunk was compressed:

- ``None`` or ``"chunk"``: the whole file is one frame; ``chunk_bytes`` is the plain size.
- ``"batch"``: an ``LDFZ01`` file: a header, the offsets of the items in their plain
  concatenation, a table of frames (each holding consecutive items), then the frames.
- ``"sample"``: a plain chunk header whose items are each one frame.

Both the framed layouts record the file's on-disk size as ``chunk_bytes``.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable

from litdata.core.chunks.layout import header_size, pack_chunk, read_offsets
from litdata.core.errors import ChunkCorruptError
from litdata.core.index import ChunkEntry

__all__ = ["FRAMED_MAGIC", "unframe"]

FRAMED_MAGIC = b"LDFZ01\x00\x00"
_FRAMED_HEADER = struct.Struct("<8sHHIII")
_FRAME = struct.Struct("<IIQII")

Decompress = Callable[[bytes | memoryview], bytes]


def _batch(data: bytes, decompress: Decompress, name: str) -> bytes:
    if not data.startswith(FRAMED_MAGIC):
        raise ChunkCorruptError(f"Chunk {name} is indexed as framed but lacks the LDFZ01 magic.")
    _, _, _, count, _, frames = _FRAMED_HEADER.unpack_from(data)
    position = _FRAMED_HEADER.size
    offsets = array("I", data[position : position + 4 * (count + 1)])
    if array("I", [1]).tobytes() != b"\x01\x00\x00\x00":
        offsets.byteswap()
    position += 4 * (count + 1)
    plain = []
    for _ in range(frames):
        _, _, start, size, expected = _FRAME.unpack_from(data, position)
        position += _FRAME.size
        block = decompress(memoryview(data)[start : start + size])
        if len(block) != expected:
            raise ChunkCorruptError(f"Chunk {name}: a frame decompressed to the wrong size.")
        plain.append(block)
    payload = b"".join(plain)
    if len(payload) != offsets[-1]:
        raise ChunkCorruptError(f"Chunk {name}: its frames do not add up to its items.")
    shift = header_size(count)
    header = array("I", [count, *(offset + shift for offset in offsets)])
    if array("I", [1]).tobytes() != b"\x01\x00\x00\x00":
        header.byteswap()
    return header.tobytes() + payload


def _sample(data: bytes, entry: ChunkEntry, decompress: Decompress) -> bytes:
    items = []
    for position in range(entry.chunk_size):
        start, end = read_offsets(data, position)
        items.append(decompress(memoryview(data)[start:end]))
    return pack_chunk(items)


def unframe(
    data: bytes, entry: ChunkEntry, level: str | None, decompress: Decompress, name: str
) -> bytes:
    """Return the plain chunk (LitData's layout) stored compressed in ``data``.

    Args:
        data: The chunk file's bytes.
        entry: Its index entry.
        level: The dataset's ``compression_level``.
        decompress: The codec's decompression function.
        name: The file, for error messages.

    Raises:
        ChunkCorruptError: The file does not decode to what its index entry says.
    """
    try:
        if level in (None, "chunk"):
            plain = decompress(data)
            if len(plain) != entry.chunk_bytes:
                raise ChunkCorruptError(
                    f"Chunk {name} decompressed to {len(plain)} bytes, but index.json records "
                    f"{entry.chunk_bytes}. The chunk is corrupt."
                )
            return plain
        if level == "batch":
            return _batch(data, decompress, name)
        if level == "sample":
            return _sample(data, entry, decompress)
    except ChunkCorruptError:
        raise
    except Exception as error:
        raise ChunkCorruptError(f"Chunk {name} failed to decompress: {error}") from error
    raise ChunkCorruptError(
        f"{name}: compression_level={level!r} is unknown; it may come from a newer LitData."
    )
