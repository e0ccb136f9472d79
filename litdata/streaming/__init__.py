"""Streaming datasets into training, in rooms by concern, lowest first.

- ``epoch/``: which items each rank's workers read, in which order (the plan, regions and
  subsets, shuffles, weight schedules, the topology, the ranks' agreement);
- ``workers/``: batches made in DataLoader workers and handed to the training process
  (batching, collation, the shared-memory ``arena/``, queues, thread workers, Ctrl-C, NUMA);
- ``resume/``: what ``state_dict()`` records, its declared shapes and checks;
- ``control/``: a batch's sample ids, skip and replay, the provenance log;
- ``composition/``: mixtures and zips of datasets;
- the face, here: ``StreamingDataset`` (``dataset``), ``StreamingDataLoader``
  (``dataloader``), their argument checks, ``train_test_split``, frames and reprs.

``from litdata.streaming import StreamingDataset, StreamingDataLoader, Cache`` works as in
LitData; the names are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "Cache",
    "CombinedStreamingDataset",
    "ParallelStreamingDataset",
    "StreamingDataLoader",
    "StreamingDataset",
    "TemporalArrayLoader",
    "TokensLoader",
]

_LAZY = {
    "Cache": "litdata.processing.cache",
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
