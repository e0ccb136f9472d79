"""Resolving a path or URL to a :class:`~litdata.core.location.Location`: its storage backend.

Every path argument (``input_dir``, ``output_dir``, ``cache_dir``...) goes through
:func:`resolve`. A string with a scheme (``s3://bucket/prefix``) is a URL, served by the storage
plugin that ``litdata_resolve_storage`` names; anything else is a local path. A URL whose
scheme no installed plugin serves is an error, never a local folder named ``s3:``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from litdata.core.errors import UnknownPluginError
from litdata.core.location import Location, is_url
from litdata.core.registry import hooks, kinds
from litdata.engine.boundary.options import resolve_plugin
from litdata.engine.boundary.storage import Storage

__all__ = ["relocate", "resolve"]


def relocate(location: Location, other: str | os.PathLike[str]) -> Location:
    """Another path or URL, with ``location``'s storage options when its backend is the same.

    For paths next to a dataset: an ``index_path``, a folder of its files.
    """
    target = resolve(other)
    if target.backend == location.backend:
        return Location(target.url, location.backend, location.storage)
    return target


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
    if backend not in kinds.storage:
        raise _no_backend(url, backend)
    options: dict[str, Any] = {}
    if storage_options:
        options["storage_options"] = dict(storage_options)
    if session_options:
        options["session_options"] = dict(session_options)
    plugin = resolve_plugin("storage", backend, wrap=False, **options)
    return Location(url, backend, Storage(plugin, backend))


def _no_backend(url: str, backend: str) -> UnknownPluginError:
    installed = ", ".join(f"{name}://" for name in kinds.storage.names())
    return UnknownPluginError(
        f"No storage backend serves {backend}:// URLs like {url}. Installed schemes: "
        f"{installed}. Check the URL, or install the plugin that serves {backend}:// "
        f"(`litdata plugins --kind storage` lists what is installed). Nothing was read or "
        f"written."
    )
