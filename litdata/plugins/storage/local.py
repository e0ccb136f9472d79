"""``file``: local paths and ``file://`` URLs. Files are read in place (never copied)."""

from __future__ import annotations

import contextlib
import os
import shutil
from typing import ClassVar
from urllib.parse import urlparse

__all__ = ["LocalStorage", "local_path_of"]


def local_path_of(url: str) -> str:
    """The local path behind a path or a ``file://`` URL."""
    if url.startswith("file://"):
        return urlparse(url).path
    return url


class LocalStorage:
    """The local filesystem (and NFS or other mounts seen as local paths)."""

    name: ClassVar[str] = "file"

    def local_path(self, url: str) -> str:
        """The file behind ``url``; readers memory-map it in place."""
        return local_path_of(url)

    def download(self, url: str, local_path: str) -> None:
        """Copy the file (only used when a copy is explicitly wanted)."""
        shutil.copyfile(local_path_of(url), local_path)

    def upload(self, local_path: str, url: str) -> None:
        """Copy ``local_path`` to ``url``, creating parent directories."""
        target = local_path_of(url)
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        shutil.copyfile(local_path, target)

    def exists(self, url: str) -> bool:
        """Whether the path exists."""
        return os.path.exists(local_path_of(url))

    def list(self, url: str) -> list[str]:
        """File names in the directory (empty if it does not exist)."""
        path = local_path_of(url)
        return sorted(os.listdir(path)) if os.path.isdir(path) else []

    def delete(self, url: str) -> None:
        """Remove the file if present."""
        with contextlib.suppress(FileNotFoundError):
            os.remove(local_path_of(url))
