"""``hf``: the Hugging Face Hub, read-only, through ``huggingface_hub``'s ``HfFileSystem``.

URLs are ``hf://datasets/<org>/<name>/<path>`` (``<name>@<revision>`` picks a branch, tag or
commit). A token comes from ``storage_options={"token": ...}``, else ``HF_TOKEN`` or the
``huggingface-cli login`` file, as ``huggingface_hub`` finds it; the Hub's address from
``storage_options={"endpoint": ...}``, else ``HF_ENDPOINT`` (read when the backend is created,
so setting it after ``huggingface_hub`` was imported still counts). Writing is refused: use
``cache_dir=`` for indexes (``index_parquet_dataset``, ``index_hf_dataset``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar

from litdata.core.imports import require
from litdata.plugins.storage._fsspec import FsspecStorage
from litdata.plugins.storage._network import status_error

__all__ = ["HFStorage"]


class HFStorage(FsspecStorage):
    """The ``hf://`` scheme (Hugging Face Hub repositories), read-only.

    Args:
        storage_options: ``HfFileSystem`` options: ``token``, ``endpoint``...
    """

    name: ClassVar[str] = "hf"
    protocol: ClassVar[str] = "hf"
    bucket_noun: ClassVar[str] = "repository"

    def __init__(self, storage_options: Mapping[str, Any] | None = None) -> None:
        require("huggingface_hub", extra="hf", purpose="The hf:// storage backend")
        super().__init__(storage_options)

    def filesystem_options(self) -> dict[str, Any]:
        """``HfFileSystem``'s arguments: the options, with ``HF_ENDPOINT`` when it is set."""
        options = super().filesystem_options()
        endpoint = os.environ.get("HF_ENDPOINT")
        if endpoint and "endpoint" not in options:
            options["endpoint"] = endpoint.rstrip("/")
        return options

    def filesystem_class(self) -> type:
        """``huggingface_hub.HfFileSystem``."""
        from huggingface_hub import HfFileSystem

        return HfFileSystem

    def translate(self, error: Exception) -> Exception | None:
        """Turn the Hub client's HTTP and network errors into builtins."""
        response = getattr(error, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int):
            return status_error(status, str(error))
        name = type(error).__name__
        if "Timeout" in name:
            return TimeoutError(f"{name}: {error}")
        if "Connect" in name or "RemoteProtocol" in name or "ReadError" in name:
            return ConnectionError(f"{name}: {error}")
        return None

    def upload(self, local_path: str, url: str) -> None:
        """Refused: the Hub is read-only here.

        Raises:
            PermissionError: Always.
        """
        raise PermissionError(
            f"Cannot write {url}: the hf:// backend is read-only. Write indexes to a local "
            f"folder (cache_dir=...), and datasets to local or object storage."
        )

    def delete(self, url: str) -> None:
        """Refused: the Hub is read-only here.

        Raises:
            PermissionError: Always.
        """
        raise PermissionError(f"Cannot delete {url}: the hf:// backend is read-only.")
