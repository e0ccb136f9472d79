"""Bounded decompression: output that stops at the caller's limit, memory that follows output.

A compressed frame says nothing trustworthy about its plain size: a few kilobytes can inflate
to gigabytes (a decompression bomb). Every codec here therefore decompresses with a limit the
caller takes from the index, refuses the frame as soon as its output passes that limit, and
allocates only as output arrives: at first no more than :data:`GUESS` times the compressed
size, then doubling, so an honest chunk costs one allocation and a bomb at most its limit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["GUESS", "STEP", "OutputLimitError", "fill", "gather", "too_large"]

#: The first buffer holds this many times the compressed size (most chunks compress 2-10x).
GUESS = 64

#: The most a codec that produces pieces (:func:`gather`) is asked for at a time.
STEP = 4 << 20

#: The smallest first buffer, so that tiny frames of compressible data do not regrow.
_FLOOR = 64 << 10


class OutputLimitError(ValueError):
    """The data decompresses to more than the limit it was given."""


def too_large(codec: str, max_size: int, declared: int | None = None) -> OutputLimitError:
    """The error for ``codec`` data that decompresses (or says it does) past ``max_size``."""
    if declared is None:
        return OutputLimitError(
            f"the {codec} data decompresses to more than {max_size:,} bytes, the most "
            f"expected; decompression stopped there"
        )
    return OutputLimitError(
        f"the {codec} data declares {declared:,} plain bytes, more than the {max_size:,} "
        f"expected; it was refused before decompressing"
    )


def fill(
    readinto: Callable[[memoryview], int],
    max_size: int,
    *,
    codec: str,
    compressed: int,
    declared: int | None = None,
) -> bytearray:
    """Read a decompressing stream to its end, never past ``max_size`` bytes.

    Args:
        readinto: Decompresses into the view it is given; returns the bytes written, 0 at the
            end of the stream.
        max_size: The most the stream may hold.
        codec: Its name, for the error.
        compressed: The compressed size, to size the first buffer.
        declared: The plain size the stream declares, if it does (the caller has checked it
            against ``max_size``): reading stops there, so nothing after it is decoded.

    Raises:
        OutputLimitError: The stream holds more than ``max_size`` bytes.
    """
    end = max_size + 1 if declared is None else declared  # one more: a stream that goes on
    buffer = bytearray(min(end, max(GUESS * compressed, _FLOOR)))
    filled = 0
    while filled < end:
        if filled == len(buffer):
            buffer.extend(bytes(min(len(buffer), end - len(buffer))))
        with memoryview(buffer) as whole, whole[filled:] as free:
            written = readinto(free)
        if not written:
            break
        filled += written
    if filled > max_size:
        raise too_large(codec, max_size)
    del buffer[filled:]
    return buffer


def gather(pieces: Iterable[bytes], max_size: int, *, codec: str) -> bytearray:
    """Join the ``pieces`` a codec decompresses (each at most about :data:`STEP` bytes).

    Raises:
        OutputLimitError: They add up to more than ``max_size`` bytes; no further piece is
            asked for.
    """
    out = bytearray()
    for piece in pieces:
        if len(out) + len(piece) > max_size:
            raise too_large(codec, max_size)
        out += piece
    return out
