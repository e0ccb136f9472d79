"""The chunk file layout, LitData's: ``[u32 N][u32 offsets (N+1 of them)][item bytes...]``.

``offsets[i]`` is the byte position of item ``i`` in the file, ``offsets[N]`` the file's length.
All integers are little-endian.
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Callable, Sequence
from itertools import accumulate

import numpy as np

from litdata.core.errors import ChunkCorruptError

__all__ = [
    "chunk_header",
    "header_size",
    "pack_chunk",
    "read_offsets",
    "read_offsets_in_range",
    "validate_header",
]

_U32 = struct.Struct("<I")
_LITTLE = sys.byteorder == "little"


def header_size(num_items: int) -> int:
    """Bytes taken by the header of a chunk with ``num_items`` items."""
    return 4 * (num_items + 2)


def chunk_header(sizes: Sequence[int]) -> bytes:
    """The header of a chunk whose items have the given sizes.

    Raises:
        OverflowError: The chunk would exceed 4 GiB (offsets are 32-bit).
    """
    offsets = array("I", [len(sizes)])
    try:
        offsets.extend(accumulate(sizes, initial=header_size(len(sizes))))
    except OverflowError:
        raise OverflowError(
            "A chunk cannot exceed 4 GiB (its offsets are 32-bit); use a smaller chunk_bytes."
        ) from None
    if not _LITTLE:
        offsets.byteswap()
    return offsets.tobytes()


def pack_chunk(items: Sequence[bytes | bytearray | memoryview]) -> bytes:
    """Assemble a chunk file's bytes from encoded items."""
    return b"".join((chunk_header([len(item) for item in items]), *items))


def read_offsets(buffer: bytes | memoryview, item: int) -> tuple[int, int]:
    """The ``[start, end)`` byte range of item ``item`` of the chunk in ``buffer``."""
    return struct.unpack_from("<II", buffer, 4 + 4 * item)


def read_offsets_in_range(
    header: Callable[[int, int], bytes], item: int, *, num_items: int, file_size: int, where: str
) -> tuple[int, int]:
    """The ``[start, end)`` byte range of item ``item``, read with ``header(start, end)``.

    For a file read in ranges (a remote chunk or shard not cached), whose header was never
    checked as a whole.

    Args:
        header: Reads bytes ``[start, end)`` of the file.
        item: The item's position in the file.
        num_items: The number of items the index lists for the file.
        file_size: The number of bytes the index lists for the file.
        where: The file and item, for the error message.

    Raises:
        ChunkCorruptError: The offsets fall outside the file.
    """
    start, end = struct.unpack("<II", header(4 + 4 * item, 12 + 4 * item))
    if not header_size(num_items) <= start <= end <= file_size:
        raise ChunkCorruptError(
            f"{where}: its offsets {start}..{end} fall outside the file's {file_size} bytes. "
            f"The file is corrupt; re-download or re-create the dataset."
        )
    return start, end


def validate_header(
    buffer: bytes | memoryview,
    *,
    num_items: int,
    file_size: int,
    name: str,
    exact: bool = True,
) -> None:
    """Check that a chunk's header agrees with its index entry and its size.

    Every item's offsets are checked (they run forwards, inside the file), so that no item
    of the chunk can be read past its end or with a negative length.

    Args:
        buffer: The chunk's bytes (at least its header).
        num_items: The number of items the index lists for it.
        file_size: The number of bytes the file has.
        name: The file, for error messages.
        exact: The layout of LitData's chunks (items right after the offsets, the file may
            hold more after them); ``False``: MosaicML's shards (a config between the offsets
            and the items, which end exactly at the end of the file).

    Raises:
        ChunkCorruptError: The chunk is truncated or its header is inconsistent.
    """
    needed = header_size(num_items)
    if file_size < needed:
        raise ChunkCorruptError(
            f"Chunk {name} is truncated: {file_size} bytes, but its header alone needs "
            f"{needed}. Re-download or re-create the dataset."
        )
    (count,) = _U32.unpack_from(buffer, 0)
    if count != num_items:
        raise ChunkCorruptError(
            f"Chunk {name} says it holds {count} items, but index.json lists {num_items}. "
            f"The file or the index is corrupt or from another dataset."
        )
    offsets = np.frombuffer(buffer, dtype="<u4", count=num_items + 1, offset=4)
    first, last = int(offsets[0]), int(offsets[-1])
    starts = first == needed if exact else first >= needed
    ends = last <= file_size if exact else last == file_size
    if not (starts and ends and first <= last):
        raise ChunkCorruptError(
            f"Chunk {name} is corrupt or truncated: its items span bytes {first}..{last} but "
            f"the file has {file_size} bytes. Re-download or re-create the dataset."
        )
    backwards = np.flatnonzero(offsets[1:] < offsets[:-1])
    if backwards.size:
        item = int(backwards[0])
        raise ChunkCorruptError(
            f"Chunk {name} is corrupt: item {item} ends at byte {int(offsets[item + 1])}, "
            f"before it starts ({int(offsets[item])}). Re-download or re-create the dataset."
        )
