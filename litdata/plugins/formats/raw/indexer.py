"""Finding the files of a raw dataset, and keeping their list as ``index.json.zstd``.

``FileIndexer`` lists a local folder (``os.walk``) or a remote prefix (the storage backend's
recursive ``find``) down to ``max_depth`` levels, optionally only some extensions. The list
is kept as LitData keeps it, zstd-compressed JSON ``{"source", "files": [{"path", "size"}],
"created_at"}``: in the local cache, and next to the files when they are remote (so other
machines skip the listing). It is read back from the cache, else from next to the files,
else rebuilt.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from litdata.core import config
from litdata.core.chunks.framing import framed_limit
from litdata.core.dataset_file import decode_json
from litdata.core.errors import UnknownPluginError
from litdata.core.guards import is_member
from litdata.core.location import Location
from litdata.core.publish import publish_bytes
from litdata.engine.boundary.resolve import resolve
from litdata.engine.cache.directory import cache_home, make_folder, record_source
from litdata.plugins.compression.zstd import ZstdCompressor

__all__ = ["INDEX_NAME", "BaseIndexer", "FileIndexer", "FileMetadata", "load_or_build_index"]

logger = logging.getLogger(__name__)

#: The raw index's file name, in the cache and next to the files.
INDEX_NAME = "index.json.zstd"
_upload_warned: set[str] = set()


@dataclass(frozen=True)
class FileMetadata:
    """One file of a raw dataset.

    Attributes:
        path: Its absolute path or URL.
        size: Its size in bytes.
    """

    path: str
    size: int

    def to_dict(self) -> dict[str, Any]:
        """``{"path", "size"}``, as the kept list stores it."""
        return {"path": self.path, "size": self.size}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FileMetadata:
        """The metadata ``to_dict`` described."""
        return cls(path=str(data["path"]), size=int(data["size"]))


@runtime_checkable
class TreeListing(Protocol):
    """A storage backend that lists every object under a prefix, with sizes (recursively)."""

    def find(self, url: str, max_depth: int | None = None) -> dict[str, int]:
        """``{relative name: size}`` of the objects under ``url``, ``max_depth`` levels deep."""
        ...


class BaseIndexer(Protocol):
    """Finds the files of a raw dataset (subclass ``FileIndexer`` or write your own).

    The signature is LitData's, so an indexer written for LitData works here.
    """

    def discover_files(
        self, input_dir: str, storage_options: Mapping[str, Any] | None
    ) -> list[FileMetadata]:
        """Every file of the dataset at ``input_dir`` (a path or URL), sorted by path."""
        ...


def _resolve_input(input_dir: str, storage_options: Mapping[str, Any] | None) -> Location:
    try:
        return resolve(input_dir, storage_options=storage_options)
    except UnknownPluginError as error:
        scheme = input_dir.split("://", 1)[0]
        raise UnknownPluginError(
            f"Unsupported input directory scheme: `{scheme}`. {error}"
        ) from None


class FileIndexer:
    """Lists the files of a folder or prefix, recursively.

    Args:
        max_depth: How many folder levels to descend (1: only files directly in the folder).
        extensions: Keep only files with these suffixes (``[".jpg", "png"]``), any case.
    """

    def __init__(self, max_depth: int = 5, extensions: Sequence[str] | None = None) -> None:
        if max_depth < 1:
            raise ValueError(f"max_depth must be at least 1, got {max_depth}")
        self.max_depth = max_depth
        #: The suffixes kept, lower case with their dot (``[]``: every file), as LitData has it.
        self.extensions = [("." + ext.lstrip(".")).lower() for ext in extensions or ()]

    def _wanted(self, name: str) -> bool:
        if name.rsplit("/", 1)[-1] == INDEX_NAME:
            return False
        return not self.extensions or os.path.splitext(name)[1].lower() in self.extensions

    def build_or_load_index(
        self,
        input_dir: str,
        cache_dir: str | None,
        storage_options: Mapping[str, Any] | None = None,
        recompute_index: bool = False,
    ) -> list[FileMetadata]:
        """The files under ``input_dir``: the list kept in the cache, or a new listing (kept).

        LitData's method; ``StreamingRawDataset`` calls the same code with its indexer.

        Raises:
            UnknownPluginError: No storage backend serves ``input_dir``'s URL scheme (also a
                ``ValueError``, as LitData raises).
            ValueError: There are no files.
        """
        location = _resolve_input(input_dir, storage_options)
        return load_or_build_index(location, self, cache_dir, recompute_index, storage_options)

    def discover_files(
        self, input_dir: str, storage_options: Mapping[str, Any] | None = None
    ) -> list[FileMetadata]:
        """Every file under ``input_dir`` within ``max_depth`` levels, sorted by path.

        Raises:
            FileNotFoundError: The folder does not exist.
            TypeError: The storage backend cannot list recursively.
            UnknownPluginError: No storage backend serves its URL scheme (also a
                ``ValueError``, as LitData raises).
        """
        location = _resolve_input(input_dir, storage_options)
        local = location.local_path
        if local is not None:
            return self._walk(local)
        backend = getattr(location.storage, "backend", location.storage)
        if not isinstance(backend, TreeListing):
            raise TypeError(
                f"The storage backend serving {location.url} cannot list a folder recursively "
                f"(it has no find()); pass a custom indexer= to StreamingRawDataset."
            )
        found = backend.find(location.url, self.max_depth)
        return [
            FileMetadata(location.join(name), size)
            for name, size in sorted(found.items())
            if self._wanted(name)
        ]

    def _walk(self, root: str) -> list[FileMetadata]:
        if not os.path.isdir(root):
            raise FileNotFoundError(f"{root} is not a folder: there are no raw files to read.")
        files: list[FileMetadata] = []
        folders = [(root, 1)]
        status = os.stat(root)
        visited = {(status.st_dev, status.st_ino)}  # a link back up (``loop -> .``) is not new
        while folders:
            folder, depth = folders.pop()
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir():
                        found = entry.stat()
                        if depth < self.max_depth and (found.st_dev, found.st_ino) not in visited:
                            visited.add((found.st_dev, found.st_ino))
                            folders.append((entry.path, depth + 1))
                    elif entry.is_file() and self._wanted(entry.name):
                        files.append(FileMetadata(entry.path, entry.stat().st_size))
        return sorted(files, key=lambda file: file.path)


def _encode(source: str, files: list[FileMetadata]) -> bytes:
    import zstandard

    record = {
        "source": source,
        "files": [file.to_dict() for file in files],
        "created_at": time.time(),
    }
    return bytes(zstandard.ZstdCompressor().compress(json.dumps(record).encode()))


def _decode(data: bytes, where: str) -> list[FileMetadata] | None:
    import zstandard

    try:
        plain = ZstdCompressor().decompress(data, framed_limit(len(data)))
        raw: Any = decode_json(plain, where=where)
        return [FileMetadata.from_dict(item) for item in raw["files"]]
    except (ValueError, KeyError, TypeError, zstandard.ZstdError) as error:
        logger.warning("ignoring the unreadable raw index %s (%s); listing again", where, error)
        return None


def load_or_build_index(
    location: Location,
    indexer: BaseIndexer,
    cache_dir: str | None,
    recompute: bool,
    storage_options: Mapping[str, Any] | None = None,
) -> list[FileMetadata]:
    """The files of the raw dataset at ``location``: the kept list, or a new listing.

    Raises:
        ValueError: There are no files.
        TypeError: The indexer did not return a list of ``FileMetadata``.
    """
    kept = cache_home(location.url, cache_dir) / INDEX_NAME
    remote = location.local_path is None
    files = None if recompute else _kept(location, kept, remote)
    if files is None:
        files = indexer.discover_files(location.url, storage_options)
        if not isinstance(files, list) or not all(isinstance(f, FileMetadata) for f in files):
            raise TypeError(
                f"The indexer {type(indexer).__name__} returned {type(files).__name__} for "
                f"{location.url}; discover_files must return a list of FileMetadata."
            )
        if not files:
            raise ValueError(
                f"No files found in {location.url} (with the indexer's depth and extension "
                f"filters). Check the path, or the indexer's settings."
            )
        data = _encode(location.url, files)
        make_folder(kept.parent)
        record_source(kept.parent, location.url)
        publish_bytes(kept, data, mode=config.cache_mode())
        if remote:
            _share(location, data)
    return files


def _ours(files: list[FileMetadata] | None, location: Location, where: str) -> bool:
    """Whether a kept list is this folder's (a list copied along with the files is not)."""
    if files is None:
        return False
    prefix = location.url.rstrip("/") + "/"
    if all(
        file.path.startswith(prefix) and is_member(file.path[len(prefix) :]) and file.size >= 0
        for file in files
    ):
        return True
    logger.warning("ignoring %s: it lists files outside %s; listing again", where, location.url)
    return False


def _kept(location: Location, kept: Path, remote: bool) -> list[FileMetadata] | None:
    if kept.is_file():
        files = _decode(kept.read_bytes(), str(kept))
        return files if _ours(files, location, str(kept)) else None
    if not remote:
        return None
    try:
        data = location.read(INDEX_NAME)
    except FileNotFoundError:
        return None
    files = _decode(data, location.join(INDEX_NAME))
    if not _ours(files, location, location.join(INDEX_NAME)):
        return None
    if files is not None:
        make_folder(kept.parent)
        record_source(kept.parent, location.url)
        publish_bytes(kept, data, mode=config.cache_mode())
    return files


def _share(location: Location, data: bytes) -> None:
    """Put the list next to the files; read-only credentials only cost a warning."""
    try:
        location.write(INDEX_NAME, data)
    except Exception as error:
        if location.url not in _upload_warned:
            _upload_warned.add(location.url)
            logger.warning(
                "could not store %s next to the files (%s); each machine lists them itself",
                location.join(INDEX_NAME),
                error,
            )
