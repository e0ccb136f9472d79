"""Raw files streamed without ``optimize``, and helpers that list media and WebDataset tars."""

from __future__ import annotations

from litdata.plugins.formats.raw.indexer import BaseIndexer, FileIndexer, FileMetadata

__all__ = ["BaseIndexer", "FileIndexer", "FileMetadata", "StreamingRawDataset"]


def __getattr__(name: str) -> object:
    if name == "StreamingRawDataset":  # imports torch: only when asked for
        from litdata.plugins.formats.raw.dataset import StreamingRawDataset

        return StreamingRawDataset
    raise AttributeError(f"module 'litdata.plugins.formats.raw' has no attribute {name!r}")
