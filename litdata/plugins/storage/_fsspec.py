"""``FsspecStorage``: a storage backend on an fsspec filesystem (memory, S3, GCS, Azure...).

Subclasses name the fsspec protocol and turn litdata's options into the filesystem's. The
filesystem is created lazily in each process (never shared across a fork, where the async
clients of s3fs and gcsfs do not survive), and is not pickled: a spawned DataLoader worker
builds its own from the same options.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping
from typing import Any, ClassVar

__all__ = ["FsspecStorage"]


class FsspecStorage:
    """The storage protocol on an fsspec filesystem.

    Args:
        storage_options: Passed to the filesystem's constructor (credentials, endpoint...).
    """

    name: ClassVar[str]
    #: The fsspec protocol (``"s3"``, ``"gcs"``, ``"memory"``...).
    protocol: ClassVar[str]

    def __init__(self, storage_options: Mapping[str, Any] | None = None) -> None:
        self.storage_options = dict(storage_options or {})
        self._fs: Any = None
        self._pid = 0

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_fs": None, "_pid": 0}

    def filesystem_options(self) -> dict[str, Any]:
        """The keyword arguments of the filesystem's constructor."""
        return dict(self.storage_options)

    @property
    def fs(self) -> Any:
        """This process's filesystem."""
        if self._fs is None or self._pid != os.getpid():
            import fsspec

            self._fs = fsspec.filesystem(
                self.protocol, skip_instance_cache=True, **self.filesystem_options()
            )
            self._pid = os.getpid()
        return self._fs

    def path(self, url: str) -> str:
        """The filesystem path of ``url`` (without its scheme)."""
        return url.split("://", 1)[1] if "://" in url else url

    def download(self, url: str, local_path: str) -> None:
        """Stream the object into ``local_path``.

        Raises:
            FileNotFoundError: No object at ``url``.
        """
        try:
            with self.fs.open(self.path(url), "rb") as source, open(local_path, "wb") as target:
                shutil.copyfileobj(source, target, 8 << 20)
        except FileNotFoundError:
            raise FileNotFoundError(f"No object at {url}.") from None

    def upload(self, local_path: str, url: str) -> None:
        """Put ``local_path`` as the object (one request, or a multipart upload)."""
        self.fs.put_file(local_path, self.path(url))

    def exists(self, url: str) -> bool:
        """Whether an object is at ``url``."""
        return bool(self.fs.isfile(self.path(url)))

    def list(self, url: str) -> list[str]:
        """Names of the objects directly under the prefix ``url``."""
        try:
            entries = self.fs.ls(self.path(url), detail=True, refresh=True)
        except FileNotFoundError:
            return []
        return sorted(
            entry["name"].rstrip("/").rsplit("/", 1)[-1]
            for entry in entries
            if entry.get("type") == "file"
        )

    def delete(self, url: str) -> None:
        """Remove the object (a missing one is not an error)."""
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self.path(url))

    def read_range(self, url: str, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of the object, with one ranged request.

        Raises:
            FileNotFoundError: No object at ``url``.
        """
        try:
            data: bytes = self.fs.cat_file(self.path(url), start=start, end=end)
        except FileNotFoundError:
            raise FileNotFoundError(f"No object at {url}.") from None
        return data
