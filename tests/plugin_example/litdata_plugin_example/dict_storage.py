"""``dict://``: a download-only storage backend keeping objects in a dictionary of this process.

It cannot be read in place nor in ranges, so litdata fetches every chunk into its cache, and
``optimize`` uploads what it writes: the paths every remote backend takes.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, ClassVar

#: The objects, by URL. One store per process (workers started with fork inherit it).
OBJECTS: dict[str, bytes] = {}
_LOCK = threading.Lock()


class DictStorage:
    """Objects in :data:`OBJECTS`, keyed by their ``dict://`` URL.

    Args:
        storage_options: Unused (there is nothing to configure).
    """

    name: ClassVar[str] = "dict"

    def __init__(self, storage_options: Mapping[str, Any] | None = None) -> None:
        self.options = dict(storage_options or {})

    def download(self, url: str, local_path: str) -> None:
        """Write the object into ``local_path``."""
        with _LOCK:
            data = OBJECTS.get(url)
        if data is None:
            raise FileNotFoundError(f"No object at {url}.")
        with open(local_path, "wb") as handle:
            handle.write(data)

    def upload(self, local_path: str, url: str) -> None:
        """Store ``local_path``'s bytes as the object (replacing it whole)."""
        with open(local_path, "rb") as handle:
            data = handle.read()
        with _LOCK:
            OBJECTS[url] = data

    def exists(self, url: str) -> bool:
        """Whether the object exists."""
        with _LOCK:
            return url in OBJECTS

    def list(self, url: str) -> list[str]:
        """Names of the objects directly under ``url``."""
        prefix = url.rstrip("/") + "/"
        with _LOCK:
            keys = list(OBJECTS)
        return sorted(
            key[len(prefix) :]
            for key in keys
            if key.startswith(prefix) and "/" not in key[len(prefix) :]
        )

    def delete(self, url: str) -> None:
        """Remove the object, if any."""
        with _LOCK:
            OBJECTS.pop(url, None)
