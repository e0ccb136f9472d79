"""What a dataset may say: names that stay inside its folder, version tokens, bounded counts.

Every index, shard table and listing comes from someone else's bucket. Whatever a file says
about a path (a chunk's file name, an MDS basename, ``updated_at``, which names the dataset's
cache folder) is checked here before it is joined to anything, and every path it leads to is
checked again once resolved (symlinks followed) to stay inside its dataset or cache folder. A
violation is a ``DatasetFormatError`` naming the file, the field and the value. A metadata
file (an index, a shard table) is read only when its size is within
``LITDATA_MAX_METADATA_BYTES``.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Any

from litdata.core.config import max_metadata_bytes
from litdata.core.dataset_file import open_regular
from litdata.core.errors import DatasetFormatError

__all__ = [
    "check_count",
    "check_member",
    "check_metadata_size",
    "check_version",
    "inside",
    "is_count",
    "is_member",
    "read_metadata",
]

#: A version token: what ``updated_at`` may be (``str(time.time())``, a short digest...).
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
#: Characters no member name may hold: path separators of other systems, NUL, controls.
_FORBIDDEN = re.compile(r"[\\\x00-\x1f\x7f]")
#: A safe member name: parts of allowed characters, none of them ``.`` or ``..``.
_PART = r"(?!\.\.?(?:/|$))[^/\\\x00-\x1f\x7f]+"
_MEMBER = re.compile(rf"(?:{_PART}/)*{_PART}")


def _refuse(
    where: str, field: str, value: Any, problem: str, *, name: bool = False
) -> DatasetFormatError:
    what = (
        "The dataset is malformed or was crafted to reach outside its folder; nothing was "
        "read or written there."
        if name
        else "The index is malformed (or crafted); nothing was read or allocated for it."
    )
    return DatasetFormatError(
        f"{where}: {field} is {value!r}, which {problem}. {what} Re-create the dataset, or "
        f"restore its index from a backup."
    )


def check_member(value: Any, *, where: str, field: str, nested: bool = False) -> str:
    """``value`` if it names a file inside a dataset's folder, else raise.

    Args:
        value: The name as the dataset states it.
        where: The file that states it (index, shard table), for the message.
        field: Where in that file (``"chunks[3].filename"``).
        nested: Allow sub-folders (``"data/train-0.parquet"``); a plain name otherwise.

    Raises:
        DatasetFormatError: It is not a string, is empty, absolute, holds ``..``, ``.`` or an
            empty part, a backslash, NUL or another control character (or a ``/`` when not
            ``nested``).
    """
    if not isinstance(value, str) or not value:
        raise _refuse(where, field, value, "is not a file name", name=True)
    if _FORBIDDEN.search(value):
        problem = "holds a backslash, NUL or control character"
        raise _refuse(where, field, value, problem, name=True)
    parts = value.split("/")
    if len(parts) > 1 and not nested:
        raise _refuse(where, field, value, "is not a plain file name", name=True)
    if any(part in ("", ".", "..") for part in parts):
        raise _refuse(where, field, value, "is not a path inside the dataset's folder", name=True)
    return value


def is_member(value: Any) -> bool:
    """Whether ``value`` passes :func:`check_member` with ``nested=True`` (a fast test)."""
    return isinstance(value, str) and _MEMBER.fullmatch(value) is not None


def check_version(value: Any, *, where: str, field: str = "updated_at") -> str:
    """``value`` if it may name a cache folder (letters, digits, ``._+-``; 128 at most).

    Raises:
        DatasetFormatError: It is anything else (a path, ``..``, an empty string...).
    """
    if not isinstance(value, str) or not _VERSION.fullmatch(value):
        problem = "is not a version token (letters, digits, '._+-')"
        raise _refuse(where, field, value, problem, name=True)
    return value


def is_count(value: Any) -> bool:
    """Whether ``value`` is a non-negative ``int`` (not a ``bool``)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_count(
    value: Any, *, where: str, field: str, most: int | None = None, least: int = 0
) -> int:
    """``value`` if it is an integer count from ``least`` to ``most``, else raise.

    Args:
        value: The count as the dataset states it.
        where: The file that states it.
        field: Where in that file.
        most: The largest count the bytes on hand can hold; ``None``: no bound known.
        least: The smallest count that makes sense (1 for a positive one).

    Raises:
        DatasetFormatError: It is not an integer of at least ``least``, or exceeds ``most``.
    """
    if not is_count(value) or value < least:
        noun = "a positive integer" if least == 1 else "a non-negative integer"
        raise _refuse(where, field, value, f"is not {noun}")
    if most is not None and value > most:
        raise _refuse(where, field, value, f"is more than the {max(most, 0):,} its bytes can hold")
    return int(value)


def _is_link(path: str) -> bool:
    """Whether ``path`` is a symbolic link (one ``lstat``)."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:  # missing: nothing to follow (opening it fails, naming it)
        return False


def inside(root: str | os.PathLike[str], *names: str, where: str) -> str:
    """The path of ``names`` under ``root``, once resolved (symlinks followed) still inside it.

    Args:
        root: The dataset's (or cache's) folder.
        names: Checked member names, joined under it.
        where: What names the path, for the message.

    Raises:
        DatasetFormatError: The resolved path leaves ``root`` (a symlink pointing out).
    """
    path = os.path.join(root, *names)
    parts = [part for name in names for part in re.split(r"[/\\]", name)]
    plain = all(part not in ("", ".", "..") for part in parts)
    if plain and not any(_is_link(os.path.join(root, *parts[: n + 1])) for n in range(len(parts))):
        return path  # only plain names and no link below the root: it stays inside
    resolved, base = os.path.realpath(path), os.path.realpath(root)
    if resolved != base and not resolved.startswith(base.rstrip(os.sep) + os.sep):
        raise DatasetFormatError(
            f"{where}: {path} resolves to {resolved}, outside {base}. A dataset's files must "
            f"stay inside its folder; a symbolic link pointing out is refused. Copy the file "
            f"into the folder instead of linking it."
        )
    return path


def check_metadata_size(size: int, *, where: str) -> None:
    """Refuse a metadata file of ``size`` bytes that is too big to parse (before reading it).

    Raises:
        DatasetFormatError: ``size`` is more than ``LITDATA_MAX_METADATA_BYTES``.
    """
    limit = max_metadata_bytes()
    if size > limit:
        raise DatasetFormatError(
            f"{where} is {size:,} bytes, more than the {limit:,} a metadata file may hold; it "
            f"was not read. It is not an index litdata would write: check the path, or raise "
            f"LITDATA_MAX_METADATA_BYTES if the file is trusted."
        )


def read_metadata(path: str | os.PathLike[str], *, where: str) -> bytes:
    """The bytes of the metadata file at ``path``, refused unread when it is too big to parse.

    Args:
        path: The local file (a remote object is downloaded first).
        where: The object as the user knows it (its URL), for the message.

    Raises:
        FileNotFoundError: There is no such file.
        DatasetFormatError: The file is larger than ``LITDATA_MAX_METADATA_BYTES``, or not a
            regular file (a FIFO, a directory, a symbolic link to nothing).
    """
    with open_regular(path, where=where) as handle:
        size = os.fstat(handle.fileno()).st_size
        check_metadata_size(size, where=where)
        data = handle.read(size + 1)  # no more: it may have grown meanwhile
    check_metadata_size(len(data), where=where)
    return data
