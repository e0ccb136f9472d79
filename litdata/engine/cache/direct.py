"""``write_direct``: a chunk's bytes copied from memory into a cache file, around the page cache.

A chunk fetched into memory and read from there (:mod:`~litdata.engine.cache.memory`) is also
written into the cache folder for the next epoch and the node's other readers. Written the usual
way, each of its pages is copied once more into a page of the system's file cache, newly
allocated: that copy, and the memory it takes, cost more CPU per byte than fetching the chunk
did (on a VM whose free memory goes back to the host, several times more). Here the file is
written with ``O_DIRECT``: the disk reads the pages where they are, and the file cache is left
to what is read from it later. Where the file system refuses ``O_DIRECT``, the copy is written
the usual way.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import mmap
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["ALIGN", "write_direct"]

#: What ``O_DIRECT`` asks of offsets, lengths and addresses (a page: every device's block fits).
ALIGN = mmap.PAGESIZE
#: Bytes handed to one write.
_PIECE = 8 << 20


def write_direct(source: str | os.PathLike[str], destination: Path, mode: int = 0o600) -> int:
    """Copy the file ``source`` (a chunk in memory) into the new file ``destination``.

    Args:
        source: The file to copy (a ``memfd``'s path, or any regular file).
        destination: The file to create (or truncate) and fill.
        mode: The permission bits of a file created.

    Returns:
        The bytes copied.

    Raises:
        OSError: The destination cannot be written (a full disk included).
    """
    with open(source, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        with _opened(destination, mode) as (descriptor, direct):
            if size:
                with mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_READ) as mapped:
                    _write_all(descriptor, mapped, direct)
    return size


@contextlib.contextmanager
def _opened(destination: Path, mode: int) -> Iterator[tuple[int, bool]]:
    """The destination's descriptor, and whether it was opened with ``O_DIRECT``."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    direct = getattr(os, "O_DIRECT", 0)
    try:
        descriptor, opened = os.open(destination, flags | direct, mode), bool(direct)
    except OSError as error:
        if not direct or error.errno != errno.EINVAL:
            raise
        descriptor, opened = os.open(destination, flags, mode), False
    try:
        yield descriptor, opened
    finally:
        os.close(descriptor)


def _write_all(descriptor: int, mapped: mmap.mmap, direct: bool) -> None:
    """Write ``mapped`` from offset 0: its whole pages directly, then its tail the usual way.

    The view of the map is released before any error leaves (the map can then be closed).
    """
    data = memoryview(mapped)
    try:
        _write_view(descriptor, data, direct)
    finally:
        data.release()


def _write_view(descriptor: int, data: memoryview, direct: bool) -> None:
    at = 0
    if direct:
        whole = len(data) - len(data) % ALIGN
        try:
            _write_range(descriptor, data, 0, whole)
            at = whole
        except OSError as error:
            if error.errno != errno.EINVAL:  # refused only once tried (some network file systems)
                raise
        flags = fcntl.fcntl(descriptor, fcntl.F_GETFL)
        fcntl.fcntl(descriptor, fcntl.F_SETFL, flags & ~os.O_DIRECT)
    _write_range(descriptor, data, at, len(data))  # the tail, or all of it where refused


def _write_range(descriptor: int, data: memoryview, at: int, end: int) -> None:
    """Write ``data[at:end]`` at its own offset, a piece at a time."""
    while at < end:
        at += os.pwrite(descriptor, data[at : min(end, at + _PIECE)], at)
