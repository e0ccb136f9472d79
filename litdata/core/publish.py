"""Publishing files atomically: write a temporary sibling, then rename it over the target.

Readers (other workers, other training jobs sharing a cache) see either no file or the whole
file, never a partial one. A failure removes the temporary file; a full disk is an error
naming the file and the bytes it needed, and leaves what was there before untouched.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from litdata.core.errors import DiskFullError
from litdata.core.processes import running

__all__ = [
    "disk_full",
    "publish_bytes",
    "publish_parts",
    "published_name",
    "publishing",
    "stale_temporaries",
    "temporary_sibling",
]

_FULL = (errno.ENOSPC, errno.EDQUOT)

T = TypeVar("T")


def temporary_sibling(path: str | os.PathLike[str]) -> Path:
    """A fresh hidden name next to ``path`` (``.<name>.tmp.<pid>.<random>``)."""
    path = Path(path)
    return path.with_name(f".{path.name}.tmp.{os.getpid()}.{uuid.uuid4().hex[:8]}")


def stale_temporaries(folder: str | os.PathLike[str]) -> list[Path]:
    """Temporary files in ``folder`` whose writer process is gone (killed while publishing)."""
    stale = []
    for path in Path(folder).iterdir():
        _, marker, rest = path.name.rpartition(".tmp.")
        pid = rest.partition(".")[0]
        if path.name.startswith(".") and marker and pid.isdigit() and not running(int(pid)):
            stale.append(path)
    return stale


def published_name(name: str) -> str | None:
    """The file a temporary sibling was for (``.x.bin.tmp.12.ab`` -> ``x.bin``), else ``None``.

    A process killed while publishing leaves its temporary file behind; this recognises it.
    """
    if not name.startswith("."):
        return None
    target, marker, _ = name[1:].rpartition(".tmp.")
    return target if marker and target else None


def disk_full(error: OSError, path: str | os.PathLike[str], needed: int) -> DiskFullError | None:
    """The clear error for ``error`` if it says the disk (or quota) is full, else ``None``."""
    if error.errno not in _FULL:
        return None
    full = DiskFullError(
        f"No space left to write {os.fspath(path)} ({needed:,} bytes needed): the disk or quota "
        f"is full. Free space or choose another location; nothing was left half-written."
    )
    full.errno = error.errno
    return full


@contextlib.contextmanager
def publishing(
    path: str | os.PathLike[str], needed: int = 0, mode: int | None = None
) -> Iterator[Path]:
    """Yield a temporary path to write; rename it to ``path`` when the block succeeds.

    Args:
        path: The file to publish.
        needed: Its size, named in the error when the disk is full.
        mode: Permission bits to give the file before it appears (a cache's private
            ``0600``); ``None`` leaves what the writer created (the umask's).

    Raises:
        DiskFullError: The disk filled up while writing (the temporary file is removed).
    """
    temporary = temporary_sibling(path)
    try:
        yield temporary
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise disk_full(error, path, needed) or error from error
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def publish_bytes(
    path: str | os.PathLike[str], data: bytes, *, durable: bool = False, mode: int | None = None
) -> None:
    """Write ``data`` to ``path`` atomically.

    Args:
        path: The file to publish.
        data: Its content.
        durable: Flush it to disk before the rename (for files that must survive a crash of
            the machine, such as ``index.json``).
        mode: Permission bits for the file (see :func:`publishing`).
    """
    with publishing(path, len(data), mode) as temporary, open(temporary, "wb") as handle:
        handle.write(data)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())


def publish_parts(
    path: str | os.PathLike[str],
    parts: Sequence[bytes | memoryview],
    size: int,
    digest: Callable[[mmap.mmap | bytes], T],
) -> T:
    """Write the concatenation of ``parts`` (``size`` bytes) to ``path`` atomically.

    The space is reserved first (``posix_fallocate``), so a full disk is an error here rather
    than a ``SIGBUS`` later; the parts are then copied straight into the file's pages through
    a memory map (faster than ``write`` for large chunks, and no concatenated copy is made).

    Args:
        path: The file to publish.
        parts: Its content, in pieces.
        size: The total size of ``parts``.
        digest: Computes the checksum of the written bytes (without reading them back).

    Returns:
        What ``digest`` returned.
    """
    with publishing(path, size) as temporary:
        descriptor = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            _reserve(descriptor, size)
            if not size:
                return digest(b"")
            with mmap.mmap(descriptor, size) as target:
                position = 0
                for part in parts:
                    end = position + len(part)
                    target[position:end] = part
                    position = end
                return digest(target)
        finally:
            os.close(descriptor)


def _reserve(descriptor: int, size: int) -> None:
    """Allocate ``size`` bytes on disk, or fail now if there is no room."""
    if not size:
        return
    try:
        os.posix_fallocate(descriptor, 0, size)
    except OSError as error:
        if error.errno in _FULL:
            raise
        # A filesystem without fallocate (some FUSE mounts): write zeros to claim the space.
        os.ftruncate(descriptor, 0)
        block = bytes(1 << 20)
        for start in range(0, size, len(block)):
            os.write(descriptor, block[: min(len(block), size - start)])
