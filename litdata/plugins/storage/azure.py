"""``az``, ``azure`` and ``abfs``: Azure Blob Storage (and ADLS Gen2) through adlfs.

URLs are ``az://container/path`` (``azure://`` is LitData's spelling, ``abfs://`` fsspec's).
``storage_options`` are adlfs's: ``connection_string``, ``account_name`` with ``account_key``,
``sas_token`` or ``credential``, ``client_id``/``client_secret``/``tenant_id``, ``anon``,
``account_host``... LitData users pass ``BlobServiceClient`` arguments; ``account_url``
(``https://ACCOUNT.blob.core.windows.net``) maps to ``account_name`` and ``account_host``, and
``credential`` is the same in both. Unset, adlfs reads Azure's environment variables
(``AZURE_STORAGE_CONNECTION_STRING``, ``AZURE_STORAGE_ACCOUNT_NAME``,
``AZURE_STORAGE_ACCOUNT_KEY``, ``AZURE_STORAGE_SAS_TOKEN``, ``AZURE_STORAGE_CLIENT_ID``...),
then tries ``DefaultAzureCredential``.

Timeouts: adlfs does not pass client settings to the Azure SDK, whose defaults retry a refused
connection for over a minute (15 s and more between tries). So this plugin's filesystem builds
adlfs's blob service client again with 5 s to connect, a third of ``LITDATA_STORAGE_TIMEOUT``
(10 s of 30) for each next byte, and no retry of its own; an upload takes at most as long as
its bytes take at 1 Mbit/s. The core retries what is transient, with backoff,
``LITDATA_STORAGE_ATTEMPTS`` times within ``LITDATA_STORAGE_TIMEOUT``, so a server that is
down or never answers is an error naming the URL within 30 s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlparse

from litdata.core.imports import require
from litdata.plugins.storage._fsspec import FsspecStorage
from litdata.plugins.storage._network import network_error, request_timeouts, status_error

adlfs = require("adlfs", extra="azure", purpose="The az/azure/abfs storage backend")

__all__ = ["AbfsStorage", "AzStorage", "AzureStorage", "adlfs_options"]


def _connect(self: Any) -> None:
    """Connect as adlfs does, then make its client again: short timeouts, no retries."""
    adlfs.AzureBlobFileSystem.do_connect(self)
    client = self.service_client
    connect, read = request_timeouts()
    self.service_client = type(client)(
        client.url,
        credential=client.credential,
        connection_timeout=connect,
        read_timeout=read,
        retry_total=0,
    )


_FileSystem = type("AzureBlobFileSystem", (adlfs.AzureBlobFileSystem,), {"do_connect": _connect})


def adlfs_options(storage_options: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of adlfs's filesystem for ``storage_options`` (``account_url`` mapped).

    Raises:
        ValueError: ``account_url`` and the account it names are both given, differently.
    """
    options = dict(storage_options)
    url = options.pop("account_url", None)
    if url is not None:
        host = urlparse(url if "://" in url else f"https://{url}").netloc
        account = host.split(".", 1)[0]
        if options.setdefault("account_name", account) != account:
            raise ValueError(
                f"storage_options name the account {options['account_name']!r} and an "
                f"account_url of {account!r}; keep one."
            )
        options["account_host"] = host
    return options


class AzStorage(FsspecStorage):
    """The ``az://`` scheme.

    Args:
        storage_options: adlfs options, or ``BlobServiceClient``'s (see the module).
    """

    name: ClassVar[str] = "az"
    protocol: ClassVar[str] = "az"
    buckets: ClassVar[bool] = True
    bucket_noun: ClassVar[str] = "container"
    create_hint: ClassVar[str] = "az storage container create --name {bucket}"

    def __init__(self, storage_options: Mapping[str, Any] | None = None) -> None:
        super().__init__(storage_options)
        adlfs_options(self.storage_options)  # errors now, not in a DataLoader worker

    def filesystem_options(self) -> dict[str, Any]:
        """The filesystem's arguments: the options mapped, listings not cached."""
        return {"use_listings_cache": False, **adlfs_options(self.storage_options)}

    def filesystem_class(self) -> type:
        """The adlfs filesystem, with short timeouts and few retries."""
        return _FileSystem

    def translate(self, error: Exception) -> Exception | None:
        """Turn the Azure SDK's HTTP, credential and network errors into builtins."""
        from azure.core import exceptions

        if isinstance(error, exceptions.ClientAuthenticationError):
            return PermissionError(error.message)
        if isinstance(
            error, exceptions.ServiceRequestTimeoutError | exceptions.ServiceResponseTimeoutError
        ):
            return TimeoutError(error.message)
        if isinstance(error, exceptions.ServiceRequestError | exceptions.ServiceResponseError):
            return ConnectionError(error.message)
        if isinstance(error, exceptions.HttpResponseError) and error.status_code is not None:
            return status_error(error.status_code, error.message)
        return network_error(error)


class AzureStorage(AzStorage):
    """The ``azure://`` scheme (LitData's name for ``az://``)."""

    name: ClassVar[str] = "azure"
    protocol: ClassVar[str] = "az"


class AbfsStorage(AzStorage):
    """The ``abfs://`` scheme (fsspec's name for ``az://``)."""

    name: ClassVar[str] = "abfs"
    protocol: ClassVar[str] = "abfs"
