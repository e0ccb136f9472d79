"""``gs`` and ``gcs``: Google Cloud Storage through gcsfs.

``storage_options`` are gcsfs's (``project``, ``token``, ``endpoint_url``, ``requester_pays``,
...). LitData users pass ``google.cloud.storage.Client`` arguments; those map as
``credentials`` → ``token`` and ``client_options={"api_endpoint": ...}`` → ``endpoint_url``.
Unset, gcsfs reads ``STORAGE_EMULATOR_HOST`` (an emulator's address) and finds credentials as
Google's libraries do (``GOOGLE_APPLICATION_CREDENTIALS``, ``gcloud``, the metadata server).

Which gcsfs filesystem: since 2026, ``gcsfs.GCSFileSystem`` is by default the "extended" one,
which asks a gRPC control API for each bucket's layout (zonal, hierarchical) before using it.
Against an HTTP endpoint (an emulator) that call waits 60 s and fails, every time; gcsfs picks
the class when it is imported, from ``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT``. This plugin does not
set that variable (it would change gcsfs for the whole process). It uses the classic
``gcsfs.core.GCSFileSystem`` (the JSON API, which serves standard and hierarchical-namespace
buckets) unless the variable is set to true, in which case it uses what gcsfs chose: set it
for zonal (Rapid) buckets. The classic filesystem also opens no gRPC channels, which do not
survive the fork of a DataLoader worker.

Timeouts and retries: each request waits 5 s to connect and a third of
``LITDATA_STORAGE_TIMEOUT`` (10 s of 30) for each next byte, an upload at most as long as its
bytes take at 1 Mbit/s, and gcsfs tries each request once (instead of six times, with up to
32 s between): the core retries what is transient, with backoff,
``LITDATA_STORAGE_ATTEMPTS`` times within ``LITDATA_STORAGE_TIMEOUT``, so a server that is
down or never answers is an error naming the URL within 30 s.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any, ClassVar

from litdata.core.imports import require
from litdata.plugins.storage._fsspec import FsspecStorage
from litdata.plugins.storage._network import network_error, request_timeouts, status_error

gcsfs = require("gcsfs", extra="gcs", purpose="The gs/gcs storage backend")

__all__ = ["GCSStorage", "GSStorage", "gcsfs_options"]

#: gcsfs's methods that retry requests (decorated with ``gcsfs.retry.retry_request``).
_RETRYING = ("_request", "_get_file_request", "_get_file_concurrent")
#: Tries per request in gcsfs: the core retries, with backoff.
_ATTEMPTS = 1


@functools.cache
def _filesystem(extended: bool) -> type:
    """The classic (or extended) gcsfs filesystem, trying each request once."""
    from gcsfs.retry import retry_request

    base: type = gcsfs.GCSFileSystem if extended else gcsfs.core.GCSFileSystem
    overrides = {
        name: retry_request(retries=_ATTEMPTS)(getattr(base, name).__wrapped__)
        for name in _RETRYING
        if hasattr(getattr(base, name, None), "__wrapped__")
    }
    return type(base.__name__, (base,), overrides)


def gcsfs_options(storage_options: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of gcsfs's filesystem for ``storage_options`` (LitData's names mapped).

    Raises:
        TypeError: ``client_options`` other than ``api_endpoint``.
        ValueError: The same setting is given in both spellings.
    """
    import aiohttp

    options = dict(storage_options)
    client_options = dict(options.pop("client_options", None) or {})
    aliases = {
        "token": options.pop("credentials", None),
        "endpoint_url": client_options.pop("api_endpoint", None),
    }
    if client_options:
        raise TypeError(
            f"The gs storage backend takes only 'api_endpoint' from client_options, not "
            f"{sorted(client_options)}."
        )
    for name, value in aliases.items():
        if value is not None:
            if name in options:
                raise ValueError(f"The GCS setting {name!r} is given twice; keep one.")
            options[name] = value
    connect, read = request_timeouts()
    options.setdefault(
        "requests_timeout", aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=read)
    )
    return options


class GSStorage(FsspecStorage):
    """The ``gs://`` scheme.

    Args:
        storage_options: gcsfs options, or ``google.cloud.storage.Client``'s (see the module).
    """

    name: ClassVar[str] = "gs"
    protocol: ClassVar[str] = "gs"
    buckets: ClassVar[bool] = True
    create_hint: ClassVar[str] = "gcloud storage buckets create gs://{bucket}"

    def __init__(self, storage_options: Mapping[str, Any] | None = None) -> None:
        super().__init__(storage_options)
        gcsfs_options(self.storage_options)  # errors now, not in a DataLoader worker

    def filesystem_options(self) -> dict[str, Any]:
        """The filesystem's arguments: the options mapped, listings not cached, timeouts."""
        return {"use_listings_cache": False, **gcsfs_options(self.storage_options)}

    def filesystem_class(self) -> type:
        """The classic gcsfs filesystem, or gcsfs's choice when the user enabled it."""
        flag = os.environ.get("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
        return _filesystem(extended=flag.strip().lower() in ("true", "1"))

    def translate(self, error: Exception) -> Exception | None:
        """Turn gcsfs's HTTP, credential and network errors into builtins."""
        from gcsfs.retry import HttpError
        from google.auth import exceptions

        if isinstance(error, HttpError):
            return status_error(error.code, str(error))
        if isinstance(error, exceptions.DefaultCredentialsError | exceptions.RefreshError):
            return PermissionError(
                f"{error}. Pass token= in storage_options (a service-account JSON file, 'anon' "
                f"for public buckets...), or set GOOGLE_APPLICATION_CREDENTIALS."
            )
        if type(error) is OSError and str(error).startswith("Forbidden"):
            return PermissionError(str(error))  # gcsfs's answer to HTTP 403
        return network_error(error)


class GCSStorage(GSStorage):
    """The ``gcs://`` scheme (the same store as ``gs://``)."""

    name: ClassVar[str] = "gcs"
    protocol: ClassVar[str] = "gcs"
