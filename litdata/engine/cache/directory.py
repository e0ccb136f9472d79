"""Where a dataset's cached files live: ``<cache root>/<md5 of its URL>/<version>/``.

The version is the index's ``updated_at``: a dataset rewritten under the same URL gets a new
directory, and the directories of other versions are removed. A remote dataset's index is
kept there too, so a warm cache opens with no network at all: a native one as ``index.json``
with its ``index.compact`` (see :mod:`litdata.engine.native.compact_index`), another format's in
``dataset.json`` (with the format's name). ``<cache root>/<md5 of its URL>/source.txt`` names
the dataset (its URL or path), so that ``litdata cache du`` can say which dataset each folder
holds.

The version comes from the dataset's index, so it must be a version token (checked when the
index is read) and its folder is checked to resolve inside the dataset's cache folder before
anything is written or removed there. A dataset's cache folder is created ``0700`` (no other
local user may read chunks of a bucket only these credentials can read) unless the cache mode
(``cache_mode``, ``LITDATA_CACHE_MODE``) shares it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from litdata.core import config
from litdata.core.dataset_file import decode_json, read_regular
from litdata.core.guards import check_version, inside
from litdata.core.index import DatasetIndex, parse_index
from litdata.core.publish import publish_bytes, stale_temporaries

_RECORD = "dataset.json"
_SOURCE = "source.txt"
#: The folder of a dataset's cache folder recording which in-place chunks passed their check.
VERIFIED = "verified"
#: The folder of a cache folder holding its files' locks (``ChunkLock``).
LOCKS = ".locks"
#: The longest cache file name kept as the dataset names it (bytes), and the characters of a
#: longer one's end kept beside its digest (4 bytes each at most: within the bound).
_LONGEST_NAME = 160
_KEPT_END = 32

__all__ = [
    "LOCKS",
    "VERIFIED",
    "cache_home",
    "flat_name",
    "folder_mode",
    "make_folder",
    "recall",
    "record_source",
    "recorded_source",
    "remember",
    "version_dir",
]


def _digest(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def flat_name(name: str) -> str:
    """A file's name in a cache folder, which is flat (a format may list nested files).

    A name longer than :data:`_LONGEST_NAME` bytes (an object key may be 1,024; a file name 255,
    less the suffixes of its temporary, lock and record files) becomes a digest of it and its
    end, so that any dataset's files can be cached.
    """
    flat = name.replace("/", "%2F")
    if len(os.fsencode(flat)) <= _LONGEST_NAME:
        return flat
    digest = hashlib.sha256(os.fsencode(flat)).hexdigest()[:32]
    return f"{digest}~{flat[-_KEPT_END:]}"


def folder_mode(mode: int) -> int:
    """The mode of the cache folders that hold files of ``mode``: each read bit searchable."""
    return mode | (mode & 0o444) >> 2


def make_folder(path: Path, mode: int | None = None) -> Path:
    """Create ``path`` and its missing parents, private unless ``mode`` shares them.

    Folders that exist are left as they are.

    Args:
        path: The folder.
        mode: The mode of the files it will hold; ``None``: the configured cache mode.
    """
    missing = []
    while not path.is_dir() and path != path.parent:
        missing.append(path)
        path = path.parent
    bits = folder_mode(config.cache_mode() if mode is None else mode)
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=bits)
        except FileExistsError:  # another process made it meanwhile
            continue
        os.chmod(folder, bits)  # whatever the umask
    return missing[0] if missing else path


def cache_home(url: str, cache_dir: str | None = None) -> Path:
    """The cache folder of the dataset at ``url`` (all its versions); not created here.

    Args:
        url: Where the dataset lives (a URL, or an absolute local path).
        cache_dir: The cache root; defaults to ``LITDATA_CACHE_DIR`` or ``~/.lightning/chunks``.
    """
    root = Path(cache_dir).expanduser() if cache_dir else config.cache_root()
    return root / _digest(url)


def record_source(home: Path, url: str, mode: int | None = None) -> None:
    """Name the dataset whose cache folder ``home`` is (once; the folder is created).

    Args:
        home: The dataset's cache folder.
        url: The dataset's URL or path.
        mode: The cache's file mode; ``None``: the configured one.
    """
    if recorded_source(home) == url:
        return
    make_folder(home, mode)
    data = url.encode()
    publish_bytes(home / _SOURCE, data, mode=config.cache_mode() if mode is None else mode)


def recorded_source(home: Path) -> str | None:
    """The URL or path of the dataset cached in ``home``, if it was recorded."""
    try:
        return (home / _SOURCE).read_text(encoding="utf-8", errors="replace").strip() or None
    except OSError:
        return None


def remember(home: Path, format_name: str, index: DatasetIndex, mode: int | None = None) -> None:
    """Keep a remote dataset's format and index, for opening it offline later.

    Args:
        home: The dataset's cache folder.
        format_name: Its format.
        index: Its index.
        mode: The cache's file mode; ``None``: the configured one.
    """
    make_folder(home, mode)
    record = {"format": format_name, "index": index.to_json()}
    data = json.dumps(record, sort_keys=True).encode()
    publish_bytes(home / _RECORD, data, mode=config.cache_mode() if mode is None else mode)


def recall(home: Path) -> tuple[str, DatasetIndex] | None:
    """The format and index :func:`remember` kept, if any (and readable)."""
    try:
        record = decode_json(read_regular(home / _RECORD), where=str(home / _RECORD))
        return str(record["format"]), parse_index(record["index"], str(home / _RECORD))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def version_dir(
    home: Path, index: DatasetIndex, mode: int | None = None, url: str | None = None
) -> Path:
    """The folder of this version of the dataset, created (and the dataset's ``url`` recorded).

    Other versions are removed, and so are the partial downloads of killed processes.

    Args:
        home: The dataset's cache folder.
        index: Its index (``updated_at`` names the version).
        mode: The mode of the files the folder will hold; ``None``: the configured one.
        url: The dataset's URL or path, recorded for ``litdata cache du``.

    Raises:
        DatasetFormatError: ``updated_at`` is not a version token, or its folder resolves
            outside ``home``.
    """
    version = check_version(index.updated_at or _digest(str(home)), where=f"The index of {home}")
    make_folder(home, mode)
    if url is not None:
        record_source(home, url, mode)
    target = Path(inside(home, version, where=f"The cache folder of {home}"))
    for stale in home.iterdir():
        if (
            stale.is_dir()
            and not stale.is_symlink()
            and stale.name not in (version, VERIFIED, LOCKS)
        ):
            shutil.rmtree(stale, ignore_errors=True)
    make_folder(target, mode)
    for partial in stale_temporaries(target):  # downloads of processes that were killed
        partial.unlink(missing_ok=True)
    return target
