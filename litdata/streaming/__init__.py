"""Streaming datasets into training: the epoch plan, the dataset, the loader and its state.

``from litdata.streaming import StreamingDataset, StreamingDataLoader`` works as in LitData;
the names are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "CombinedStreamingDataset",
    "ParallelStreamingDataset",
    "StreamingDataLoader",
    "StreamingDataset",
    "TemporalArrayLoader",
    "TokensLoader",
]

_LAZY = {
    "CombinedStreamingDataset": "litdata.streaming.composition.combined",
    "ParallelStreamingDataset": "litdata.streaming.composition.parallel",
    "StreamingDataLoader": "litdata.streaming.dataloader",
    "StreamingDataset": "litdata.streaming.dataset",
    "TokensLoader": "litdata.plugins.item_loaders.tokens",
    "TemporalArrayLoader": "litdata.plugins.item_loaders.temporal",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'litdata.streaming' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
