"""Where data lives: a local path or a URL, and the storage backend that serves it.

Every path argument (``input_dir``, ``output_dir``, ``cache_dir``...) goes through
:func:`resolve`. A string with a scheme (``s3://bucket/prefix``) is a URL, served by the storage
plugin that ``litdata_resolve_storage`` names; anything else is a local path. A URL whose
scheme no installed plugin serves is an error, never a local folder named ``s3:``.
"""

from __future__ import annotations

import fnmatch
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from litdata.core.errors import UnknownPluginError
from litdata.core.registry import hooks, registries
from litdata.core.storage.checked import Storage
from litdata.core.storage.publish import publish_bytes

__all__ = ["Location", "is_url", "resolve", "scheme_of"]

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")


def scheme_of(location: str) -> str | None:
    """The URL scheme of ``location`` (``"s3"``), or ``None`` for a local path."""
    match = _SCHEME.match(location)
    return match.group(1).lower() if match else None


def is_url(location: str) -> bool:
    """Whether ``location`` is a URL (has a scheme) rather than a local path."""
    return scheme_of(location) is not None


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
    storage: Storage = field(repr=False, compare=False)
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

    def at(self, location: str | os.PathLike[str]) -> Location:
        """Another location, served with this one's storage options when the backend is the same."""
        other = resolve(location)
        if other.backend == self.backend:
            return Location(other.url, self.backend, self.storage)
        return other

    def read(self, name: str) -> bytes:
        """The bytes of the object ``name`` inside this location (downloaded when remote).

        Raises:
            FileNotFoundError: There is no such object.
        """
        local = self.local_path
        if local is not None:
            return Path(local, name).read_bytes()
        with tempfile.TemporaryDirectory(prefix="litdata-") as scratch:
            target = os.path.join(scratch, "object")
            self.storage.download(self.join(name), target)
            return Path(target).read_bytes()

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


def _normalized(location: str) -> str:
    if is_url(location):
        return location.rstrip("/") if not location.endswith("://") else location
    return os.path.abspath(os.path.expanduser(location))


def resolve(
    location: str | os.PathLike[str] | Location,
    *,
    storage_options: Mapping[str, Any] | None = None,
    session_options: Mapping[str, Any] | None = None,
) -> Location:
    """The location of a path or URL, with the storage backend that serves it.

    Args:
        location: A local path, a URL, or an already resolved location (returned as it is).
        storage_options: Passed to the backend (credentials, endpoint...), as LitData does.
        session_options: Passed to backends whose clients take session settings (S3).

    Raises:
        UnknownPluginError: No installed storage plugin serves the URL's scheme; the message
            names the scheme, the installed ones, and what to install.
        TypeError: The backend does not take ``session_options``.
    """
    if isinstance(location, Location):
        return location
    url = _normalized(os.fspath(location))
    backend = hooks.resolve_storage(url)
    if backend not in registries.storage:
        raise _no_backend(url, backend)
    options: dict[str, Any] = {}
    if storage_options:
        options["storage_options"] = dict(storage_options)
    if session_options:
        options["session_options"] = dict(session_options)
    plugin_class = registries.storage.load(backend)
    try:
        plugin = plugin_class(**options)
    except TypeError as error:
        raise TypeError(
            f"The {backend!r} storage backend does not take {sorted(options)} (for {url}): {error}"
        ) from error
    return Location(url, backend, Storage(plugin, backend))


def _no_backend(url: str, backend: str) -> UnknownPluginError:
    installed = ", ".join(f"{name}://" for name in registries.storage.names())
    return UnknownPluginError(
        f"No storage backend serves {backend}:// URLs like {url}. Installed schemes: "
        f"{installed}. Check the URL, or install the plugin that serves {backend}:// "
        f"(`litdata plugins --kind storage` lists what is installed). Nothing was read or "
        f"written."
    )
