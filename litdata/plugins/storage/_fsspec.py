"""``FsspecStorage``: a storage backend on an fsspec filesystem (memory, S3, GCS, Azure...).

Subclasses name the fsspec protocol and turn litdata's options into the filesystem's. The
filesystem is created lazily in each process (never shared across a fork, where the async
clients of s3fs and gcsfs do not survive), and is not pickled: a spawned DataLoader worker
builds its own from the same options. Listings are never cached (other processes write too).

Errors leave here as the builtins the core understands, naming the URL: a missing object (or
bucket) is ``FileNotFoundError``, refused credentials ``PermissionError``, an unreachable
server ``ConnectionError`` or ``TimeoutError`` (which the core retries). Subclasses turn their
client library's own errors into those in :meth:`FsspecStorage.translate`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from litdata.core import cpu_stages
from litdata.plugins.storage import _inherited_loop  # noqa: F401  # its fork hooks
from litdata.plugins.storage._network import upload_timeout

__all__ = ["FsspecStorage", "MissingBucketError"]


class MissingBucketError(FileNotFoundError):
    """The bucket (container) of a URL does not exist, or the credentials cannot see it."""


class FsspecStorage:
    """The storage protocol on an fsspec filesystem.

    Args:
        storage_options: Passed to the filesystem's constructor (credentials, endpoint...).
    """

    name: ClassVar[str]
    #: The fsspec protocol (``"s3"``, ``"gcs"``, ``"memory"``...).
    protocol: ClassVar[str]
    #: Whether a URL's first path part is a bucket (container) that must already exist.
    buckets: ClassVar[bool] = False
    #: What the store calls a bucket, for messages.
    bucket_noun: ClassVar[str] = "bucket"
    #: How to create a missing bucket (``{bucket}`` is its name); litdata never creates one.
    create_hint: ClassVar[str] = ""

    def __init__(self, storage_options: Mapping[str, Any] | None = None) -> None:
        self.storage_options = dict(storage_options or {})
        self._fs: Any = None
        self._pid = 0
        self._seen_buckets: set[str] = set()

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_fs": None, "_pid": 0}

    def filesystem_options(self) -> dict[str, Any]:
        """The keyword arguments of the filesystem's constructor."""
        return {"use_listings_cache": False, **self.storage_options}

    def filesystem_class(self) -> type:
        """The fsspec filesystem class to instantiate (fsspec's for :attr:`protocol`)."""
        import fsspec

        cls: type = fsspec.get_filesystem_class(self.protocol)
        return cls

    @property
    def fs(self) -> Any:
        """This process's filesystem."""
        if self._fs is None or self._pid != os.getpid():
            options = self.filesystem_options()
            self._fs = self.filesystem_class()(skip_instance_cache=True, **options)
            self._pid = os.getpid()
            _watch_io_thread(self._fs)
        return self._fs

    def path(self, url: str) -> str:
        """The filesystem path of ``url`` (without its scheme)."""
        return url.split("://", 1)[1] if "://" in url else url

    def translate(self, error: Exception) -> Exception | None:
        """A builtin error for one of the client library's own, or ``None`` to keep it.

        Override to map errors that are not yet ``FileNotFoundError``, ``PermissionError``,
        ``ConnectionError`` or ``TimeoutError`` (a botocore connection error, an HTTP 403...).
        """
        del error
        return None

    # -- errors ------------------------------------------------------------------------------
    def _bucket_missing(self, url: str) -> bool:
        """Whether ``url``'s bucket certainly does not exist (one request; known ones are kept)."""
        bucket = self.path(url).split("/", 1)[0]
        if not self.buckets or bucket in self._seen_buckets:
            return False
        try:
            self.fs.info(bucket)
        except FileNotFoundError:
            return True
        except Exception:  # cannot tell: report the object, not the bucket
            return False
        self._seen_buckets.add(bucket)
        return False

    def _not_found(self, url: str) -> FileNotFoundError:
        if self._bucket_missing(url):
            bucket = self.path(url).split("/", 1)[0]
            how = f" ({self.create_hint.format(bucket=bucket)})" if self.create_hint else ""
            return MissingBucketError(
                f"The {self.bucket_noun} {bucket!r} of {url} does not exist (or these "
                f"credentials cannot see it). litdata writes objects, never {self.bucket_noun}s: "
                f"create it first{how}, or check the URL."
            )
        return FileNotFoundError(f"No object at {url}.")

    def _explained(self, error: Exception, url: str) -> Exception:
        error = self.translate(error) or error
        if isinstance(error, MissingBucketError):
            return error
        if isinstance(error, FileNotFoundError):
            return self._not_found(url)
        if isinstance(error, PermissionError):
            return PermissionError(
                f"Access to {url} was refused: {error}. Check the credentials (the "
                f"storage_options given, or the environment) and their permissions."
            )
        if isinstance(error, ConnectionError):
            return ConnectionError(f"{url}: {error}")
        if isinstance(error, TimeoutError):
            return TimeoutError(f"{url}: {error}")
        return error

    @contextlib.contextmanager
    def _errors(self, url: str) -> Iterator[None]:
        """Turn what the filesystem raises for ``url`` into explained builtin errors."""
        try:
            yield
        except Exception as error:
            explained = self._explained(error, url)
            if explained is error:
                raise
            raise explained from error

    # -- the protocol ------------------------------------------------------------------------
    def download(self, url: str, local_path: str) -> None:
        """Stream the object into ``local_path``.

        Raises:
            FileNotFoundError: No object at ``url``.
        """
        with (
            open(local_path, "wb") as target,
            self._errors(url),
            self.fs.open(self.path(url), "rb") as source,
        ):
            shutil.copyfileobj(source, target, 8 << 20)

    def upload(self, local_path: str, url: str) -> None:
        """Put ``local_path`` as the object (one request, or a multipart upload).

        An asynchronous (HTTP) filesystem's upload is cut off once it took as long as
        :func:`~litdata.plugins.storage._network.upload_timeout` allows for its size.

        Raises:
            FileNotFoundError: There is no file ``local_path``, or no bucket for ``url``.
        """
        if not os.path.isfile(local_path):
            raise FileNotFoundError(f"No file {local_path} to upload to {url}.")
        from fsspec.asyn import AsyncFileSystem

        fs = self.fs
        bound: dict[str, Any] = {}
        if isinstance(fs, AsyncFileSystem):  # HTTP: no write timeout (see _network)
            bound["timeout"] = upload_timeout(os.path.getsize(local_path))
        with self._errors(url):
            fs.put_file(local_path, self.path(url), **bound)

    def exists(self, url: str) -> bool:
        """Whether an object is at ``url``.

        Raises:
            FileNotFoundError: ``url``'s bucket does not exist.
        """
        try:
            with self._errors(url):
                info = self.fs.info(self.path(url))
        except MissingBucketError:
            raise
        except FileNotFoundError:
            return False
        return bool(info.get("type") == "file")

    def list(self, url: str) -> list[str]:
        """Names of the objects directly under the prefix ``url``.

        Raises:
            FileNotFoundError: ``url``'s bucket does not exist.
        """
        path = self.path(url)
        try:
            with self._errors(url):
                entries = self.fs.ls(path, detail=True)
        except MissingBucketError:
            raise
        except FileNotFoundError:
            return []
        return sorted(
            entry["name"].rstrip("/").rsplit("/", 1)[-1]
            for entry in entries
            # fsspec lists an object as itself: it is not under its own name as a prefix
            if entry.get("type") == "file" and entry["name"].strip("/") != path.strip("/")
        )

    def find(self, url: str, max_depth: int | None = None) -> dict[str, int]:
        """``{name relative to url: size}`` of every object under the prefix ``url``.

        Args:
            url: The prefix.
            max_depth: How many levels to descend (1: only objects directly under it).

        Raises:
            FileNotFoundError: ``url``'s bucket does not exist.
        """
        root = self.path(url).rstrip("/")
        try:
            with self._errors(url):
                found = self.fs.find(root, maxdepth=max_depth, detail=True)
        except MissingBucketError:
            raise
        except FileNotFoundError:
            return {}
        return {
            name[len(root) + 1 :]: int(info.get("size") or 0)
            for name, info in found.items()
            if info.get("type") == "file" and name.startswith(root + "/")
        }

    def delete(self, url: str) -> None:
        """Remove the object (a missing one, or a missing bucket, is not an error)."""
        with self._errors(url), contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self.path(url))

    def read_range(self, url: str, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of the object, with one ranged request.

        Raises:
            FileNotFoundError: No object at ``url``.
        """
        with self._errors(url):
            data: bytes = self.fs.cat_file(self.path(url), start=start, end=end)
        return data


def _watch_io_thread(fs: Any) -> None:
    """Charge fsspec's event-loop thread (every request and body) to the ``network`` stage."""
    if not cpu_stages.enabled() or not getattr(fs, "async_impl", False):
        return
    import fsspec.asyn

    fsspec.asyn.get_loop()  # started if it was not
    thread = fsspec.asyn.iothread[0]
    if thread is not None:
        cpu_stages.watch_thread("network", thread)
