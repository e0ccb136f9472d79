"""``Location``: where data lives, a local path or a URL, with the storage that serves it.

A plain value: the engine resolves a path or URL to one
(:func:`litdata.engine.boundary.resolve.resolve` asks the ``litdata_resolve_storage`` hook which
backend serves it); the kernel only carries it, and reads and writes through the storage it holds
(:class:`Store`: the backend as the core uses it, checked and retried).
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from litdata.core.dataset_file import open_regular, read_regular
from litdata.core.guards import read_metadata
from litdata.core.publish import publish_bytes

__all__ = ["Location", "Store", "is_url", "scheme_of"]

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")


def scheme_of(location: str) -> str | None:
    """The URL scheme of ``location`` (``"s3"``), or ``None`` for a local path."""
    match = _SCHEME.match(location)
    return match.group(1).lower() if match else None


def is_url(location: str) -> bool:
    """Whether ``location`` is a URL (has a scheme) rather than a local path."""
    return scheme_of(location) is not None


class Store(Protocol):
    """A storage backend as the core uses it: what ``engine.boundary.storage.Storage`` offers.

    Attributes:
        name: The name the backend is registered under (the URL scheme).
        backend: The plugin instance itself (a ``StorageBackend``), for what only it can do.
    """

    name: str
    backend: Any

    @property
    def origin(self) -> str:
        """The plugin and its distribution, for messages."""
        ...

    @property
    def in_place(self) -> bool:
        """Whether objects are local files that may be read where they lie."""
        ...

    @property
    def ranged(self) -> bool:
        """Whether byte ranges can be read."""
        ...

    @property
    def streams_ranges(self) -> bool:
        """Whether the pieces of a byte range can be had as they arrive."""
        ...

    def probing(self) -> contextlib.AbstractContextManager[None]:
        """A block within which each object is fetched at most once."""
        ...

    def download(self, url: str, local_path: str, size: int | None = None) -> None:
        """Download the object at ``url`` into the new file ``local_path``."""
        ...

    def upload(self, local_path: str, url: str) -> None:
        """Upload ``local_path`` as the object ``url``."""
        ...

    def exists(self, url: str) -> bool:
        """Whether an object exists at ``url``."""
        ...

    def probe(self, url: str) -> bool:
        """Whether a small object read next if present (an index) exists, in one request."""
        ...

    def list(self, url: str) -> list[str]:
        """The names of the objects directly under the prefix ``url``."""
        ...

    def delete(self, url: str) -> None:
        """Remove the object at ``url``."""
        ...

    def read_range(
        self,
        url: str,
        start: int,
        end: int,
        on_retry: Callable[[BaseException], None] | None = None,
    ) -> bytes:
        """Bytes ``[start, end)`` of the object at ``url`` (``on_retry``: told of retries)."""
        ...

    def read_range_into(
        self,
        url: str,
        start: int,
        end: int,
        sink: Callable[[int, bytes | memoryview], None],
        on_retry: Callable[[BaseException], None] | None = None,
    ) -> None:
        """Hand bytes ``[start, end)`` of ``url`` to ``sink(offset, data)`` as they arrive."""
        ...

    def local_path(self, url: str) -> str:
        """The local file behind ``url``."""
        ...


@dataclass(frozen=True)
class Location:
    """A resolved location.

    Attributes:
        url: The location: a URL without a trailing slash, or an absolute local path.
        backend: The name of the storage backend serving it.
        storage: That backend, configured with the caller's options (checked and retried).
        pattern: A glob over the names of the objects directly under ``url`` (the last part
            of ``"data/train-*.parquet"``): only those belong to the dataset. ``None``: all.
    """

    url: str
    backend: str
    storage: Store = field(repr=False, compare=False)
    pattern: str | None = None

    @property
    def local_path(self) -> str | None:
        """The local directory behind the location when its files can be read in place."""
        return self.storage.local_path(self.url) if self.storage.in_place else None

    def names(self) -> list[str]:
        """The names of the objects directly under the location that match its ``pattern``."""
        names = self.storage.list(self.url)
        return names if self.pattern is None else fnmatch.filter(names, self.pattern)

    def parent(self) -> Location:
        """The folder holding this location, whose pattern is this location's name (a glob).

        ``data/train-*.parquet`` becomes ``data`` with the pattern ``train-*.parquet``.
        """
        folder, _, name = self.url.rpartition("/")
        return Location(folder or "/", self.backend, self.storage, name)

    def join(self, name: str) -> str:
        """The URL (or path) of ``name`` inside this location."""
        return f"{self.url}/{name}"

    def child(self, name: str) -> Location:
        """The location ``name`` inside this one, served by the same storage."""
        return Location(self.join(name), self.backend, self.storage)

    def read(self, name: str) -> bytes:
        """The bytes of the metadata object ``name`` inside this location (downloaded if remote).

        Raises:
            FileNotFoundError: There is no such object.
            DatasetFormatError: It is larger than ``LITDATA_MAX_METADATA_BYTES``.
        """
        return self._read(name, metadata=True)

    def read_file(self, name: str) -> bytes:
        """The bytes of the object ``name`` whatever its size (a raw dataset's sample file).

        Raises:
            FileNotFoundError: There is no such object.
        """
        return self._read(name, metadata=False)

    def _read(self, name: str, *, metadata: bool) -> bytes:
        local = self.local_path
        with contextlib.ExitStack() as stack:
            if local is not None:
                path = os.path.join(local, name)
            else:
                scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="litdata-"))
                path = os.path.join(scratch, "object")
                self.storage.download(self.join(name), path)
            if metadata:
                return read_metadata(path, where=self.join(name))
            return read_regular(path, where=self.join(name))

    def read_ends(self, name: str, size: int) -> tuple[bytes, bytes]:
        """The first and the last ``size`` bytes of the object ``name`` (each whole if shorter).

        A local file is read only there (a format sniffing a 100 MB ``index.json`` reads
        kilobytes); a remote object is downloaded (once, while the storage is probing).

        Raises:
            FileNotFoundError: There is no such object.
        """
        local = self.local_path
        if local is None:
            data = self.read(name)
            return data[:size], data[-size:]
        with open_regular(os.path.join(local, name), where=self.join(name)) as handle:
            head = handle.read(size)
            end = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, end - size))
            return head, handle.read(size)

    def write(self, name: str, data: bytes) -> None:
        """Publish ``data`` as the object ``name`` inside this location (atomically)."""
        local = self.local_path
        if local is not None:
            os.makedirs(local, exist_ok=True)
            publish_bytes(os.path.join(local, name), data, durable=True)
            return
        with tempfile.TemporaryDirectory(prefix="litdata-") as scratch:
            source = os.path.join(scratch, "object")
            Path(source).write_bytes(data)
            self.storage.upload(source, self.join(name))

    def __str__(self) -> str:
        return self.url
