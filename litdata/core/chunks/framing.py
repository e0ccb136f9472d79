"""Compressed chunk layouts, turned back into plain chunks, with bounded decompression.

``compression_level`` (a config key of LitData 0.2.7x) says how a chunk was compressed:

- ``None`` or ``"chunk"``: the whole file is one frame; ``chunk_bytes`` is the plain size.
- ``"batch"``: an ``LDFZ01`` file: a header, the offsets of the items in their plain
  concatenation, a table of frames (each holding consecutive items), then the frames.
- ``"sample"``: a plain chunk header whose items are each one frame.

Every frame is decompressed with an output bound (``Compressor.decompress(data, max_size)``),
so a frame that inflates past what is expected (a decompression bomb) is refused once it
passes the bound, never allocated in full:

- a whole-file frame: ``chunk_bytes``, the plain size index.json records;
- a ``"batch"`` frame: its plain size in the file's frame table;
- a ``"sample"`` item: what is left of :func:`framed_limit` for the whole chunk.

Both the framed layouts record the file's on-disk size as ``chunk_bytes``, so how far they
inflate is the file's word alone: the frame table's total, or the items' sum, must stay within
:func:`framed_limit` of the file's size.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable

from litdata.core.chunks.layout import header_size, pack_chunk, read_offsets
from litdata.core.errors import ChunkCorruptError, PluginValidationError
from litdata.core.index import ChunkEntry

__all__ = ["FRAMED_FLOOR", "FRAMED_MAGIC", "FRAMED_RATIO", "framed_limit", "unframe"]

FRAMED_MAGIC = b"LDFZ01\x00\x00"
_FRAMED_HEADER = struct.Struct("<8sHHIII")
_FRAME = struct.Struct("<IIQII")
_LITTLE = array("I", [1]).tobytes() == b"\x01\x00\x00\x00"

#: A framed chunk may inflate to this many times its size on disk (deflate's own ceiling;
#: real data compresses 2-10x) ...
FRAMED_RATIO = 1024
#: ... or to this many bytes, whichever is more: room for any chunk of ordinary size however
#: compressible (LitData's chunks are usually 64 MB).
FRAMED_FLOOR = 256 << 20
#: The most a chunk can hold: its offsets are 32-bit.
_LAYOUT_MAX = (1 << 32) - 1

Decompress = Callable[[bytes | memoryview, int], bytes | bytearray]


def framed_limit(stored: int) -> int:
    """The most a ``"batch"`` or ``"sample"`` chunk of ``stored`` bytes may inflate to."""
    return min(max(FRAMED_FLOOR, FRAMED_RATIO * stored), _LAYOUT_MAX)


def _framed_why(stored: int) -> str:
    return (
        f"index.json records only the {stored:,} bytes stored, and a framed chunk may inflate "
        f"to {framed_limit(stored):,}"
    )


def _inflate(
    decompress: Decompress, data: bytes | memoryview, max_size: int, name: str, why: str
) -> bytes | bytearray:
    """``decompress(data, max_size)``; a failure, or output past the bound, names the chunk."""
    try:
        plain = decompress(data, max_size)
    except PluginValidationError:  # the plugin's fault, not the file's
        raise
    except Exception as error:
        raise ChunkCorruptError(
            f"Chunk {name} failed to decompress (at most {max_size:,} plain bytes: {why}): "
            f"{error}. It is corrupt or hostile; re-download or re-create the dataset."
        ) from error
    if len(plain) > max_size:
        raise ChunkCorruptError(
            f"Chunk {name}: the compressor returned {len(plain):,} bytes though it was allowed "
            f"{max_size:,} ({why}); the plugin ignores the bound it is given."
        )
    return plain


def _batch(data: bytes, decompress: Decompress, name: str) -> bytes:
    if not data.startswith(FRAMED_MAGIC):
        raise ChunkCorruptError(f"Chunk {name} is indexed as framed but lacks the LDFZ01 magic.")
    _, _, _, count, _, frames = _FRAMED_HEADER.unpack_from(data)
    position = _FRAMED_HEADER.size
    offsets = array("I", data[position : position + 4 * (count + 1)])
    if not _LITTLE:
        offsets.byteswap()
    if len(offsets) != count + 1:
        raise ChunkCorruptError(f"Chunk {name} is too short for the {count:,} items it lists.")
    position += 4 * (count + 1)
    if frames > (len(data) - position) // _FRAME.size:
        raise ChunkCorruptError(f"Chunk {name} is too short for the {frames:,} frames it lists.")
    table = [_FRAME.unpack_from(data, position + _FRAME.size * frame) for frame in range(frames)]
    declared = sum(expected for *_, expected in table)
    if declared != offsets[-1]:
        raise ChunkCorruptError(f"Chunk {name}: its frames do not add up to its items.")
    if declared > framed_limit(len(data)):
        raise ChunkCorruptError(
            f"Chunk {name}: its frame table declares {declared:,} plain bytes, but "
            f"{_framed_why(len(data))}. It is corrupt or a decompression bomb; re-download or "
            f"re-create the dataset."
        )
    view = memoryview(data)
    plain = []
    for _, _, start, size, expected in table:
        block = _inflate(
            decompress, view[start : start + size], expected, name, "its frame table's size"
        )
        if len(block) != expected:
            raise ChunkCorruptError(f"Chunk {name}: a frame decompressed to the wrong size.")
        plain.append(block)
    shift = header_size(count)
    header = array("I", [count, *(offset + shift for offset in offsets)])
    if not _LITTLE:
        header.byteswap()
    return b"".join([header.tobytes(), *plain])


def _sample(data: bytes, entry: ChunkEntry, decompress: Decompress, name: str) -> bytes:
    left = framed_limit(len(data)) - header_size(entry.chunk_size)
    why = f"what is left once the items before it are decompressed; {_framed_why(len(data))}"
    view = memoryview(data)
    items = []
    for position in range(entry.chunk_size):
        start, end = read_offsets(data, position)
        item = _inflate(decompress, view[start:end], max(left, 0), name, why)
        left -= len(item)
        items.append(item)
    return pack_chunk(items)


def unframe(
    data: bytes, entry: ChunkEntry, level: str | None, decompress: Decompress, name: str
) -> bytes | bytearray:
    """Return the plain chunk (LitData's layout) stored compressed in ``data``.

    Args:
        data: The chunk file's bytes.
        entry: Its index entry.
        level: The dataset's ``compression_level``.
        decompress: The codec's bounded decompression, ``Compressor.decompress``.
        name: The file, for error messages.

    Raises:
        ChunkCorruptError: The file does not decode to what its index entry says, or would
            inflate past its bound.
    """
    try:
        if level in (None, "chunk"):
            why = "the plain size index.json records"
            plain = _inflate(decompress, data, max(entry.chunk_bytes, 0), name, why)
            if len(plain) != entry.chunk_bytes:
                raise ChunkCorruptError(
                    f"Chunk {name} decompressed to {len(plain)} bytes, but index.json records "
                    f"{entry.chunk_bytes}. The chunk is corrupt."
                )
            return plain
        if level == "batch":
            return _batch(data, decompress, name)
        if level == "sample":
            return _sample(data, entry, decompress, name)
    except (ChunkCorruptError, PluginValidationError):  # the file's fault, or the plugin's
        raise
    except Exception as error:
        raise ChunkCorruptError(f"Chunk {name} failed to decompress: {error}") from error
    raise ChunkCorruptError(
        f"{name}: compression_level={level!r} is unknown; it may come from a newer LitData."
    )
