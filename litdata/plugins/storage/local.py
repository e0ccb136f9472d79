"""``file``: local paths and ``file://`` URLs. Files are read in place (never copied)."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import unquote, urlparse

from litdata.core.dataset_file import open_regular
from litdata.core.publish import publishing

__all__ = ["LocalStorage", "local_path_of"]


def local_path_of(url: str) -> str:
    """The local path behind a path or a ``file://`` URL."""
    if url.startswith("file://"):
        return unquote(urlparse(url).path)
    return url


class LocalStorage:
    """The local filesystem (and NFS or other mounts seen as local paths).

    Args:
        storage_options: Accepted for symmetry with remote backends; local paths need none.
    """

    name: ClassVar[str] = "file"

    def __init__(self, storage_options: Mapping[str, Any] | None = None) -> None:
        del storage_options  # nothing to configure

    def local_path(self, url: str) -> str:
        """The file behind ``url``; readers memory-map it in place."""
        return local_path_of(url)

    def download(self, url: str, local_path: str) -> None:
        """Copy the file (only used when a copy is explicitly wanted).

        Raises:
            FileNotFoundError: There is no file at ``url``.
        """
        source = local_path_of(url)
        if not os.path.isfile(source):
            raise FileNotFoundError(f"No file at {source}.")
        shutil.copyfile(source, local_path)

    def upload(self, local_path: str, url: str) -> None:
        """Copy ``local_path`` to ``url`` atomically, creating parent directories."""
        target = local_path_of(url)
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        with publishing(target, os.path.getsize(local_path)) as temporary:
            shutil.copyfile(local_path, temporary)

    def exists(self, url: str) -> bool:
        """Whether a file is at ``url``."""
        return os.path.isfile(local_path_of(url))

    def list(self, url: str) -> list[str]:
        """Names of the files in the directory (empty if it does not exist)."""
        path = local_path_of(url)
        if not os.path.isdir(path):
            return []
        return sorted(entry.name for entry in os.scandir(path) if entry.is_file())

    def delete(self, url: str) -> None:
        """Remove the file if present."""
        with contextlib.suppress(FileNotFoundError):
            os.remove(local_path_of(url))

    def read_range(self, url: str, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of the file.

        Raises:
            FileNotFoundError: There is no file at ``url``.
        """
        with open_regular(local_path_of(url), where=url) as handle:
            handle.seek(start)
            return handle.read(end - start)
