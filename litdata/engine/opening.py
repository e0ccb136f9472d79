"""Finding a dataset: the storage backend that serves its location, and the format it is in."""

from __future__ import annotations

import dataclasses
import fnmatch
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from litdata.core import config
from litdata.core.dataset_file import open_regular
from litdata.core.errors import DatasetFormatError, DatasetNotFoundError, StorageError
from litdata.core.formats import FormatAdapter
from litdata.core.index import INDEX_FILENAME, ChunkColumns, DatasetIndex, index_from_bytes
from litdata.core.location import Location, is_url
from litdata.core.media_kinds import raw_files_hint
from litdata.core.registry import hooks, kinds
from litdata.engine.boundary.options import resolve_plugin
from litdata.engine.boundary.resolve import relocate, resolve
from litdata.engine.cache.directory import cache_home, recall, remember
from litdata.engine.native.compact_index import compact_index, fresh_copy, node_lock

__all__ = ["Dataset", "load_index_file", "open_dataset"]

logger = logging.getLogger(__name__)

#: A name with glob characters: ``train-*.parquet``, ``part-?.jsonl``, ``shard-[0-3].bin``.
_GLOB = re.compile(r"[*?\[]")
#: The format whose index a node keeps as ``index.json`` (with its compact index).
NATIVE = "chunks"
#: Object names an error message shows.
_SHOWN = 5


@dataclass(frozen=True)
class Dataset:
    """A dataset found at a location.

    Attributes:
        location: Where its chunks are.
        index: Its index.
        format: The format adapter that reads it.
    """

    location: Location
    index: DatasetIndex
    format: FormatAdapter


def _missing(location: Location) -> DatasetNotFoundError | DatasetFormatError:
    if location.pattern is not None:
        names = location.storage.list(location.url)
        if location.pattern in names:  # one file, not a glob: no format reads it
            formats = ", ".join(kinds.formats.names())
            media = raw_files_hint(location.url, None, [location.pattern], one_file=True)
            return DatasetNotFoundError(
                f"No dataset at {location.join(location.pattern)}: it is a file that no "
                f"installed format reads as a dataset. Pass the folder of a dataset (written by "
                f"optimize(), or in a format installed: {formats}).{media}"
            )
        shown = ", ".join(names[:_SHOWN]) + (", ..." if len(names) > _SHOWN else "")
        there = f"it holds {len(names)} objects ({shown})" if names else "it is empty or absent"
        return DatasetNotFoundError(
            f"No dataset at {location.join(location.pattern)}: nothing in {location.url} "
            f"matches {location.pattern!r} ({there}). Check the pattern and the folder."
        )
    local = location.local_path
    if local is not None and not os.path.isdir(local):
        what = "is a file, not a dataset directory" if os.path.exists(local) else "does not exist"
        return DatasetNotFoundError(f"The provided dataset path `{location.url}` {what}.")
    if local is not None and os.path.lexists(index := os.path.join(local, INDEX_FILENAME)):
        try:  # there, but not a file: say what it is
            open_regular(index, where=location.join(INDEX_FILENAME)).close()
        except DatasetFormatError as error:
            return error
    names = location.storage.list(location.url)
    media = raw_files_hint(location.url, local, names)
    if media:
        hint = media
    elif names:
        hint = f" It holds {len(names)} objects but no {INDEX_FILENAME}: did optimize() finish?"
    else:
        hint = " Nothing is there."
    return DatasetNotFoundError(
        f"No dataset at {location.url}: no {INDEX_FILENAME}, nor files another installed format "
        f"recognises.{hint}"
    )


def open_dataset(
    location: str | os.PathLike[str] | Location,
    index_path: str | os.PathLike[str] | None = None,
    cache_dir: str | None = None,
    cache_mode: int | None = None,
) -> Dataset:
    """Find the dataset at ``location``: its storage backend, format and index.

    The backend comes from the ``litdata_resolve_storage`` hook, the format from
    ``litdata_detect_format``.

    Args:
        location: A path, a URL, or a resolved location (with its storage options).
        index_path: Use the index in this file (or in the directory holding it) instead of the
            dataset's own.
        cache_dir: The cache root: a remote dataset's index is kept there, and used when the
            storage is unreachable (a warm cache needs no network).
        cache_mode: The cache's file mode (``LITDATA_CACHE_MODE``, else ``0o600``).

    Raises:
        DatasetNotFoundError: There is no dataset at ``location``.
        UnknownPluginError: No storage backend serves its URL scheme, or the format it is in
            is not installed.
    """
    where = resolve(location)
    if where.pattern is None and _GLOB.search(where.url.rpartition("/")[2]):
        where = where.parent()
    given = None if index_path is None else _read_index_file(where, os.fspath(index_path))
    remote = where.local_path is None
    home = cache_home(where.url, cache_dir)
    mode = config.cache_mode() if cache_mode is None else cache_mode
    if not remote:
        return _found(where, given, home, mode)
    with node_lock(home, mode):  # the ranks of a node: one of them asks the store
        if given is None and where.pattern is None and fresh_copy(home):
            return Dataset(
                where, compact_index(where, home, mode), resolve_plugin("formats", NATIVE)
            )
        try:
            return _found(where, given, home, mode)
        except StorageError as error:
            if (home / INDEX_FILENAME).exists():  # a native dataset's index, kept
                index = compact_index(where, home, mode, offline=True)
                name = NATIVE
            else:
                kept = recall(home)
                if kept is None:
                    raise
                name, index = kept
            logger.warning(
                "%s is unreachable (%s); using the index kept in the cache", where, error
            )
            return Dataset(where, index, resolve_plugin("formats", name))  # parsed: checked


def _found(where: Location, given: DatasetIndex | None, home: Path, mode: int) -> Dataset:
    """The dataset at ``where`` as its store says now (a remote one's index remembered)."""
    with where.storage.probing():  # every format looks at index.json: fetch it once
        name, index, adapter, where = _detect(where, given, home, mode)
    if where.local_path is None and not isinstance(index.chunks, ChunkColumns):
        remember(home, name, index, mode)  # a native index is kept as index.json (compact)
    return Dataset(where, index, adapter)


def _detect(
    where: Location, given: DatasetIndex | None, home: Path, mode: int
) -> tuple[str, DatasetIndex, FormatAdapter, Location]:
    """The format of the dataset at ``where``, its index and adapter, and where its chunks are.

    ``home`` is the dataset's cache folder, where a format may keep a derived form of its
    index (files of ``mode``).
    """
    name = hooks.detect_format(where, given)
    file = name is None and where.pattern is None and _names_a_file(where)
    if file:
        where = where.parent()  # ``data/train-0.parquet``: that file of its folder
        name = hooks.detect_format(where, given)
    if name is None:
        raise _missing(where)
    adapter = resolve_plugin("formats", name)  # its index comes back checked
    try:
        index = _matching(given or adapter.read_cached_index(where, home, mode), where)
    except DatasetNotFoundError:
        if not file:
            raise
        raise DatasetNotFoundError(
            f"No dataset at {where.join(where.pattern or '')}: the path is a file, not a "
            f"dataset directory (and not a file a format reads as a dataset). Pass its "
            f"folder, {where.url}."
        ) from None
    return name, index, adapter, where


def _names_a_file(where: Location) -> bool:
    """Whether ``where`` is a file (an object), not a folder: a dataset of that one file."""
    local = where.local_path
    if local is not None:
        return os.path.isfile(local)
    return "/" in where.url.split("://", 1)[-1] and where.storage.exists(where.url)


def _matching(index: DatasetIndex, where: Location) -> DatasetIndex:
    """``index`` without the chunks whose file names do not match ``where.pattern``.

    Raises:
        DatasetNotFoundError: No chunk matches.
    """
    if where.pattern is None or not isinstance(index, DatasetIndex):
        return index
    chunks = tuple(c for c in index.chunks if fnmatch.fnmatchcase(c.filename, where.pattern))
    if not chunks:
        raise _missing(where)
    return dataclasses.replace(index, chunks=chunks)


def _read_index_file(where: Location, path: str) -> DatasetIndex:
    """The index stored at ``path`` (a file, or a directory holding ``index.json``)."""
    if not is_url(path) and os.path.isdir(path):
        path = os.path.join(path, INDEX_FILENAME)
    folder, _, name = path.replace(os.sep, "/").rpartition("/")
    try:
        data = relocate(where, folder or ".").read(name)
    except FileNotFoundError:
        raise DatasetNotFoundError(f"index_path {path} does not exist.") from None
    return index_from_bytes(data, path)


def load_index_file(input_dir: str | os.PathLike[str] | Location) -> dict[str, Any]:
    """The index of the dataset at ``input_dir``, as JSON: ``{"chunks": [...], "config": ...}``.

    LitData's ``litdata.utilities.dataset_utilities.load_index_file``. Any format litdata
    reads answers (a Parquet folder's or an MDS dataset's index is the one litdata builds).

    Raises:
        DatasetNotFoundError: There is no dataset at ``input_dir``.
    """
    return open_dataset(input_dir).index.to_json()
