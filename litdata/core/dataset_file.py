"""A dataset's file, opened only when it is a regular file, and its JSON decoded with a bound.

A dataset folder comes from someone else's disk or bucket. A plain ``open()`` of a FIFO named
``index.json`` or ``chunk-0-0.bin`` blocks until a writer appears (forever); a directory or a
symbolic link to nothing in a file's place fails with an ``OSError`` that says nothing about
the dataset. :func:`open_regular` opens without blocking (``O_NONBLOCK``, which a regular
file ignores) and refuses anything but a regular file with a ``DatasetFormatError`` naming the
file and what it is. Every reader of a dataset's files (chunks, indexes, shard tables, the
compact index, cached copies) opens them here.

JSON from a dataset is decoded by :func:`decode_json`: nesting deeper than the interpreter's
recursion limit (``sys.getrecursionlimit()``, 1,000 by default: 100,000 ``[`` in a row would
exhaust the stack; an index nests 4 deep) and invalid text are a ``DatasetFormatError`` naming
the file, like any other malformed index.
"""

from __future__ import annotations

import errno
import fcntl
import io
import json
import os
import stat
import sys
from typing import Any

from litdata.core.errors import DatasetFormatError

__all__ = ["decode_json", "open_regular", "read_regular"]

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


def _not_regular(path: str, what: str, where: str) -> DatasetFormatError:
    return DatasetFormatError(
        f"{where}: {path} is {what}, not a regular file; it was not read. A dataset's files "
        f"are regular files: replace it with the file the dataset lists, or re-create the "
        f"dataset."
    )


def open_regular(path: str | os.PathLike[str], *, where: str | None = None) -> io.BufferedReader:
    """Open the dataset file at ``path`` for reading, if it is a regular file; never block.

    Args:
        path: The local file (a symbolic link to a regular file is followed).
        where: What names the file for the user (a URL, ``"index.json of s3://b/ds"``); the
            path when ``None``.

    Returns:
        The file, opened ``rb`` (unbuffered reads block as usual: it is a regular file).

    Raises:
        FileNotFoundError: There is no such file (a missing file is not a malformed one).
        DatasetFormatError: It is a FIFO, directory, socket or device, or a symbolic link to
            nothing.
    """
    name = os.fspath(path)
    label = where or name
    try:
        descriptor = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        if os.path.islink(name):
            target = os.readlink(name)
            what = f"a symbolic link to {target!r}, which does not exist"
            raise _not_regular(name, what, label) from None
        raise
    except OSError as error:
        if error.errno == errno.ENXIO:  # a socket file, or a FIFO no one writes (on some systems)
            raise _not_regular(name, "a socket or FIFO", label) from None
        raise
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(name, _KINDS.get(stat.S_IFMT(mode), "not a regular file"), label)
        flags = fcntl.fcntl(descriptor, fcntl.F_GETFL)
        fcntl.fcntl(descriptor, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_regular(path: str | os.PathLike[str], *, where: str | None = None) -> bytes:
    """The whole content of the regular file at ``path`` (see :func:`open_regular`).

    Raises:
        FileNotFoundError: There is no such file.
        DatasetFormatError: It is not a regular file.
    """
    with open_regular(path, where=where) as handle:
        return handle.read()


def _too_deep(where: str) -> DatasetFormatError:
    return DatasetFormatError(
        f"{where} nests JSON values deeper than the {sys.getrecursionlimit():,} levels Python "
        f"decodes; litdata writes nothing like it, so it was not decoded. The file is damaged "
        f"or crafted: re-create the dataset, or restore the file from a backup."
    )


def decode_json(data: str | bytes | bytearray | memoryview, *, where: str) -> Any:
    """The JSON value in ``data``, read from ``where``, with its nesting bounded.

    Args:
        data: The text (UTF-8 bytes or ``str``).
        where: The file or field it comes from (a path, a URL, ``"data_spec of ..."``).

    Raises:
        DatasetFormatError: It is not valid UTF-8 JSON, or nests more than
            ``sys.getrecursionlimit()`` levels.
    """
    raw = bytes(data) if isinstance(data, (bytearray, memoryview)) else data
    try:
        return json.loads(raw)
    except RecursionError:  # the decoder counts its depth against the recursion limit
        raise _too_deep(where) from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise DatasetFormatError(
            f"{where} is not valid JSON ({error}); it may be truncated or damaged. Re-create "
            f"the dataset, or restore the file from a backup."
        ) from None
