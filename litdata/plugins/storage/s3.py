"""``s3``: Amazon S3 and S3-compatible stores (MinIO, R2, moto...) through s3fs.

``storage_options`` take what LitData users pass to ``boto3.client("s3", ...)``, or s3fs's
own names; both may be mixed, and the same setting given twice is an error:

========================================  ===============================================
boto3 (LitData)                           s3fs
========================================  ===============================================
``aws_access_key_id``                     ``key``
``aws_secret_access_key``                 ``secret``
``aws_session_token``                     ``token``
``endpoint_url``                          ``endpoint_url``
``region_name``, ``verify``,              ``client_kwargs={...}``
``api_version``, ``aws_account_id``
``config=botocore.config.Config(...)``    ``config_kwargs={...}``
  (``signature_version=UNSIGNED``: anon)   (``anon=True``)
========================================  ===============================================

The uppercase spellings in LitData's README (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_SESSION_TOKEN``, ``S3_ENDPOINT_URL``) are accepted too. ``session_options`` are
``boto3.Session``'s: ``profile_name`` (s3fs ``profile``), ``region_name`` and the three
credentials. Anything left unset comes from where botocore looks: ``AWS_*`` environment
variables (``AWS_ENDPOINT_URL`` included), ``~/.aws`` files, instance roles.

Timeouts and retries: each request waits 5 s to connect and a third of
``LITDATA_STORAGE_TIMEOUT`` (10 s of 30) for each next byte, an upload at most as long as its
bytes take at 1 Mbit/s, and each request is tried once (botocore's and s3fs's retry loops are
off): the core retries what is transient, with backoff, ``LITDATA_STORAGE_ATTEMPTS`` times
within ``LITDATA_STORAGE_TIMEOUT``, so a server that is down or never answers is an error
naming the URL within 30 s. A botocore ``config`` given in ``storage_options`` overrides
these settings.

Reads (:mod:`litdata.plugins.storage._resumed`): a body cut short is resumed from the byte it
stopped at, pinned to the object's ETag; an answer to a ranged GET that is not the range asked
for is refused and retried; every ranged read of one object in a process must see the same ETag
as the first (else the chunk is read again whole, once). Object bodies (downloads and ranged
reads) go through botocore's blocking client made from the same settings, in the thread that
reads (:mod:`litdata.plugins.storage._s3_reads`); listings, uploads and deletes through s3fs.
"""

from __future__ import annotations

import difflib
import gc
import inspect
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

from litdata.core import config, cpu_stages
from litdata.core.errors import ChunkCorruptError
from litdata.core.imports import require
from litdata.plugins.storage._fsspec import FsspecStorage
from litdata.plugins.storage._multipart import ParallelUpload, transient
from litdata.plugins.storage._network import network_error, request_timeouts
from litdata.plugins.storage._resumed import ResumedRead
from litdata.plugins.storage._s3_reads import ReadClient

s3fs = require("s3fs", extra="s3", purpose="The s3 storage backend")
from botocore.loaders import JSONFileLoader, create_loader  # noqa: E402  # s3fs's dependencies
from fsspec.asyn import sync_wrapper  # noqa: E402

__all__ = ["S3Storage", "s3fs_options"]

#: boto3 (and LitData README) names of s3fs's top-level options.
_RENAMED = {
    "aws_access_key_id": "key",
    "aws_secret_access_key": "secret",
    "aws_session_token": "token",
    "AWS_ACCESS_KEY_ID": "key",
    "AWS_SECRET_ACCESS_KEY": "secret",
    "AWS_SESSION_TOKEN": "token",
    "S3_ENDPOINT_URL": "endpoint_url",
}
#: boto3 client arguments that s3fs takes in ``client_kwargs``.
_CLIENT_ARGUMENTS = {"region_name", "verify", "api_version", "aws_account_id"}
#: boto3 session arguments, and their s3fs names.
_SESSION = {
    "profile_name": "profile",
    "region_name": "region_name",
    "aws_access_key_id": "key",
    "aws_secret_access_key": "secret",
    "aws_session_token": "token",
}


def _response_checksums() -> dict[str, Any]:
    """Responses checked by botocore only when asked (botocore >= 1.36 checks every GET).

    litdata checks every byte it reads against the dataset's own checksums (whole chunks,
    and 64 KiB blocks for ranged parts), so a CRC of every response on the client is spent
    twice; and a whole-object checksum sent with a ranged answer (as some S3-compatible
    servers do) would fail every part.
    """
    from botocore.config import Config

    defaults = getattr(Config, "OPTION_DEFAULTS", {})
    if "response_checksum_validation" in defaults:
        return {"response_checksum_validation": "when_required"}
    return {}


_CHECKSUMS = _response_checksums()


def _config_defaults() -> dict[str, Any]:
    """The botocore settings, unless the user's ``config`` says otherwise."""
    connect, read = request_timeouts()
    return {
        "connect_timeout": connect,
        "read_timeout": read,
        "retries": {"total_max_attempts": 1, "mode": "standard"},
        # one client per process, its connections kept: as many as the reads run at once
        "max_pool_connections": config.connection_budget(),
        **_CHECKSUMS,
    }


class _ModelFiles(JSONFileLoader):  # type: ignore[misc]
    """botocore's model files, each parsed with the garbage collector paused.

    Parsing S3's endpoint rules makes some hundred thousand objects, enough to start full
    collections; in a process that imported torch each one walks millions of objects, and
    the first S3 client took 0.26 s to make instead of 0.08 s.
    """

    def load_file(self, file_path: str) -> Any:
        """The parsed file at ``file_path`` (``None`` if there is none), as botocore's."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            return super().load_file(file_path)
        finally:
            if collecting:
                gc.enable()


_LOADERS: dict[str | None, Any] = {}


def _loader(data_path: str | None) -> Any:
    """This process's botocore data loader for ``data_path``, shared by every S3 session.

    A new session parses botocore's S3 model and endpoint rules (tens of milliseconds of
    CPU); with one loader they are parsed once per process (see :class:`_ModelFiles`), and
    a forked DataLoader worker finds them parsed by its parent.
    """
    found = _LOADERS.get(data_path)
    if found is None:
        found = _LOADERS[data_path] = create_loader(data_path)
        found.file_loader = _ModelFiles()
    return found


_S3FileSystem: Any = s3fs.S3FileSystem
#: Ranges shorter than this are returned as ``bytes`` (one copy of a few bytes); longer ones as
#: the buffer they were read into.
_SMALL = 1 << 16


class _FileSystem(_S3FileSystem):  # type: ignore[misc]
    """s3fs, its own retry loop off (as botocore's is: the core retries), its models shared.

    Its session takes botocore's models from the process's shared loader (:func:`_loader`).
    """

    retries = 1
    session: Any

    async def set_session(self, refresh: bool = False, kwargs: Mapping[str, Any] = {}) -> Any:
        """s3fs's client, its session made here the first time."""
        if self.session is None:
            from aiobotocore.session import AioSession

            session = AioSession(**self.kwargs)
            session.register_component(
                "data_loader", _loader(session.get_config_variable("data_path"))
            )
            self.session = session
            self._session_is_owned = True
        return await super().set_session(refresh, dict(kwargs))

    _connect = set_session
    connect = sync_wrapper(set_session)


def _accepted() -> set[str]:
    """The option names s3fs takes (its constructor's, its session's, fsspec's)."""
    from aiobotocore.session import AioSession

    names = set(inspect.signature(s3fs.S3FileSystem.__init__).parameters)
    names |= set(inspect.signature(AioSession.__init__).parameters)
    names |= {"use_listings_cache", "listings_expiry_time", "max_paths"}
    return names - {"self", "kwargs", "asynchronous", "loop"}


def _config_options(config: Any) -> dict[str, Any]:
    """The settings of a ``botocore.config.Config`` (or of a dict of them)."""
    if isinstance(config, Mapping):
        return dict(config)
    given = getattr(config, "_user_provided_options", None)
    if not isinstance(given, dict):
        raise TypeError(f"The S3 option 'config' must be a botocore Config or a dict: {config!r}")
    return dict(given)


def _placed(storage_options: Mapping[str, Any]) -> Iterator[tuple[str, str, Any, str]]:
    """``(section, s3fs name, value, where the user gave it)`` for each storage option."""
    accepted = _accepted()
    for name, value in storage_options.items():
        given = f"storage_options[{name!r}]"
        if name in _RENAMED:
            yield "top", _RENAMED[name], value, given
        elif name in _CLIENT_ARGUMENTS:
            yield "client", name, value, given
        elif name == "client_kwargs":
            for key, item in value.items():
                yield "client", key, item, f"{given}[{key!r}]"
        elif name in ("config", "config_kwargs"):
            for key, item in _config_options(value).items():
                yield "config", key, item, f"{given}.{key}"
        elif name in accepted:
            yield "top", name, value, given
        else:
            known = sorted(accepted | set(_RENAMED) | _CLIENT_ARGUMENTS | {"config"})
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise TypeError(f"Unknown S3 storage option {name!r}.{hint} Known: {known}.")


def s3fs_options(
    storage_options: Mapping[str, Any], session_options: Mapping[str, Any]
) -> dict[str, Any]:
    """The arguments of s3fs's filesystem for LitData's storage and session options.

    Raises:
        TypeError: An option neither boto3 nor s3fs knows.
        ValueError: The same setting is given twice (``key`` and ``aws_access_key_id``...).
    """
    unknown = sorted(set(session_options) - set(_SESSION))
    if unknown:
        raise TypeError(
            f"The s3 storage backend does not take session_options {unknown}; it takes "
            f"{sorted(_SESSION)}."
        )
    session = [
        (
            "client" if name == "region_name" else "top",
            _SESSION[name],
            value,
            f"session_options[{name!r}]",
        )
        for name, value in session_options.items()
    ]
    sections: dict[str, dict[str, Any]] = {"top": {}, "client": {}, "config": {}}
    sources: dict[tuple[str, str], str] = {}
    for section, name, value, given in [*_placed(storage_options), *session]:
        if (section, name) in sources:
            raise ValueError(
                f"The S3 setting {name!r} is given twice, as {sources[section, name]} and as "
                f"{given}; keep one."
            )
        sources[section, name] = given
        sections[section][name] = value
    return {
        **sections["top"],
        "client_kwargs": sections["client"],
        "config_kwargs": {**_config_defaults(), **sections["config"]},
    }


class S3Storage(FsspecStorage):
    """The ``s3://`` scheme.

    Args:
        storage_options: boto3 client arguments or s3fs options (see the module).
        session_options: boto3 session arguments (``profile_name``, ``region_name``).
    """

    name: ClassVar[str] = "s3"
    protocol: ClassVar[str] = "s3"
    buckets: ClassVar[bool] = True
    create_hint: ClassVar[str] = (
        "aws s3 mb s3://{bucket}, with --endpoint-url for an S3-compatible server"
    )

    def __init__(
        self,
        storage_options: Mapping[str, Any] | None = None,
        session_options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(storage_options)
        self.session_options = dict(session_options or {})
        #: The ETag each object's ranged reads saw first in this process.
        self._etags: dict[str, str] = {}
        self._read_client: ReadClient | None = None
        s3fs_options(self.storage_options, self.session_options)  # errors now, not in a worker

    def filesystem_options(self) -> dict[str, Any]:
        """The filesystem's arguments: the options mapped, listings not cached, timeouts."""
        return {
            "use_listings_cache": False,
            **s3fs_options(self.storage_options, self.session_options),
        }

    def filesystem_class(self) -> type:
        """The s3fs filesystem, without its own retry loop."""
        return _FileSystem

    def download(self, url: str, local_path: str) -> None:
        """Stream the object into ``local_path`` with one GET, written as it arrives.

        ``fs.open`` (the generic path) reads an object of more than 50 MiB as a HEAD and ranged
        GETs of 50 MiB, each held in memory while it is copied: two prefetched 64 MB chunks per
        reader cost ~100 MB more memory, and twice the requests. A body cut short is resumed
        from where it stopped, pinned to its ETag (:class:`ResumedRead`).

        Raises:
            FileNotFoundError: No object at ``url``.
        """
        bucket, _, key = self.path(url).partition("/")
        read = ResumedRead(self._reads.call, bucket, key, url)
        with cpu_stages.timed("network"), self._errors(url), open(local_path, "wb") as target:
            descriptor = target.fileno()
            read.into(lambda at, data: _write_at(descriptor, data, at))

    def read_range(self, url: str, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of the object: one ranged GET, resumed if cut, checked.

        Raises:
            FileNotFoundError: No object at ``url``.
            ChunkCorruptError: The object is not the version an earlier read of it saw.
        """
        buffer = bytearray(end - start)
        view = memoryview(buffer)

        def sink(at: int, data: bytes | memoryview) -> None:
            view[at - start : at - start + len(data)] = data

        self.read_range_into(url, start, end, sink)
        return bytes(buffer) if len(buffer) < _SMALL else buffer  # type: ignore[return-value]

    def read_range_into(
        self, url: str, start: int, end: int, sink: Callable[[int, bytes | memoryview], None]
    ) -> None:
        """Bytes ``[start, end)`` of the object into ``sink`` as they arrive: one ranged GET.

        A cut answer is resumed, every answer checked, as :meth:`read_range`'s.

        Raises:
            FileNotFoundError: No object at ``url``.
            ChunkCorruptError: The object is not the version an earlier read of it saw.
        """
        bucket, _, key = self.path(url).partition("/")
        seen = self._etags.get(url)
        read = ResumedRead(self._reads.call, bucket, key, url, start=start, end=end, etag=seen)
        try:
            with cpu_stages.timed("network"), self._errors(url):
                read.into(sink)
        except ChunkCorruptError:
            self._etags.pop(url, None)
            raise
        first = self._etags.setdefault(url, read.etag) if read.etag else None
        if first != read.etag:
            self._etags.pop(url, None)
            raise ChunkCorruptError(
                f"{url} was replaced while it was read (ETag {first}, then {read.etag}); "
                f"nothing of two versions is used: it is read again whole."
            )

    def upload(self, local_path: str, url: str) -> None:
        """Put ``local_path`` as the object: parts at once if it is large, else one PUT.

        See :mod:`litdata.plugins.storage._multipart`: each request is retried on its own
        (``503 SlowDown`` included), and a multipart upload that fails is aborted.

        Raises:
            FileNotFoundError: There is no file ``local_path``, or no bucket for ``url``.
        """
        if not os.path.isfile(local_path):
            raise FileNotFoundError(f"No file {local_path} to upload to {url}.")
        from fsspec.asyn import sync

        bucket, _, key = self.path(url).partition("/")
        fs = self.fs
        job = ParallelUpload(
            fs._call_s3, lambda error: transient(self._translated(error)), local_path, bucket, key
        )
        with self._errors(url):
            sync(fs.loop, job.run)

    @property
    def _reads(self) -> ReadClient:
        """The blocking client that bodies are read through (see :mod:`._s3_reads`)."""
        if self._read_client is None:
            self._read_client = ReadClient(self.fs, _loader)
        return self._read_client

    def __getstate__(self) -> dict[str, Any]:
        """Pickled for a worker: the versions seen and the clients stay in this process."""
        return {**super().__getstate__(), "_etags": {}, "_read_client": None}

    def _translated(self, error: BaseException) -> BaseException:
        if isinstance(error, Exception):
            return self.translate(error) or error
        return error

    def translate(self, error: Exception) -> Exception | None:
        """Turn botocore's connection, timeout and credential errors into builtins."""
        from botocore import exceptions

        if isinstance(error, exceptions.NoCredentialsError | exceptions.PartialCredentialsError):
            return PermissionError(
                f"{error}. Pass aws_access_key_id and aws_secret_access_key in storage_options, "
                f"a profile_name in session_options, or set AWS_ACCESS_KEY_ID and "
                f"AWS_SECRET_ACCESS_KEY (anonymous access: storage_options={{'anon': True}})"
            )
        if isinstance(error, exceptions.ConnectTimeoutError | exceptions.ReadTimeoutError):
            return TimeoutError(str(error))
        if isinstance(error, exceptions.ConnectionError | exceptions.HTTPClientError):
            return ConnectionError(str(error))
        return network_error(error)


def _write_at(descriptor: int, data: bytes | memoryview, offset: int) -> None:
    """Write all of ``data`` at ``offset`` of the file."""
    view = memoryview(data)
    while view:
        written = os.pwrite(descriptor, view, offset)
        view, offset = view[written:], offset + written
