"""Typed calls into the hooks, so the rest of litdata never touches ``pm.hook`` directly."""

from __future__ import annotations

from typing import Any

from litdata.core.registry.manager import get_plugin_manager

__all__ = [
    "chunk_downloaded",
    "chunk_evicted",
    "chunk_written",
    "detect_format",
    "resolve_storage",
]


def resolve_storage(url: str) -> str:
    """The name of the storage backend serving ``url`` (a URL or a local path)."""
    name = get_plugin_manager().hook.litdata_resolve_storage(url=url)
    return name if isinstance(name, str) else "file"


def detect_format(path: str) -> str | None:
    """The name of the dataset format found at the local directory ``path``, if any."""
    name = get_plugin_manager().hook.litdata_detect_format(path=path)
    return name if isinstance(name, str) else None


def chunk_written(path: str, chunk: dict[str, Any]) -> None:
    """Tell plugins a chunk file was written."""
    get_plugin_manager().hook.litdata_chunk_written(path=path, chunk=chunk)


def chunk_downloaded(url: str, path: str, nbytes: int, seconds: float) -> None:
    """Tell plugins a chunk reached the local cache."""
    get_plugin_manager().hook.litdata_chunk_downloaded(
        url=url, path=path, nbytes=nbytes, seconds=seconds
    )


def chunk_evicted(path: str, nbytes: int) -> None:
    """Tell plugins a cached chunk was deleted."""
    get_plugin_manager().hook.litdata_chunk_evicted(path=path, nbytes=nbytes)
