"""Checking ``StreamingDataLoader``'s arguments, with messages that say what is expected."""

from __future__ import annotations

import os
import warnings
from typing import Any

from litdata.core.errors import LitdataWarning
from litdata.streaming.control.provenance import unplannable

__all__ = ["WORKER_MODES", "check_loader_options"]

#: Where a loader's workers run: processes, or threads of the training process.
WORKER_MODES = ("process", "thread")


def check_loader_options(
    dataset: object,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    num_workers: int,
    worker_mode: str,
    transport: str,
    provenance: bool,
    provenance_dir: str | os.PathLike[str] | None,
) -> dict[str, Any]:
    """Refuse what a streaming loader cannot do; return ``DataLoader``'s own keyword arguments.

    ``persistent_workers`` is dropped (with a warning: each epoch starts its workers afresh)
    and so is ``prefetch_factor`` without workers.

    Raises:
        ValueError: A bad ``worker_mode`` or ``transport``, or provenance for a dataset whose
            batches cannot be planned.
        RuntimeError: ``dataset`` is not one of litdata's streaming datasets.
        TypeError: Options passed by position.
    """
    if worker_mode not in WORKER_MODES:
        raise ValueError(
            f"worker_mode={worker_mode!r} is not one of {', '.join(WORKER_MODES)}: "
            f"pass 'process' (worker processes) or 'thread' (threads of this process)."
        )
    if not _is_streamable(dataset):
        raise RuntimeError(
            f"StreamingDataLoader reads a StreamingDataset, CombinedStreamingDataset or "
            f"ParallelStreamingDataset, got {type(dataset).__name__}. Use "
            f"torch.utils.data.DataLoader for other datasets."
        )
    kept = dict(kwargs)
    if kept.pop("persistent_workers", False):
        warnings.warn(
            "persistent_workers=True is ignored: StreamingDataLoader starts its workers "
            "for each epoch, which hands them that epoch's order and any resumed state.",
            LitdataWarning,
            stacklevel=3,
        )
    if num_workers == 0:
        kept.pop("prefetch_factor", None)  # only meaningful with workers
    if args:
        raise TypeError("Pass StreamingDataLoader's options by keyword (batch_size=...).")
    if transport not in ("arena", "pipe"):
        raise ValueError(f"transport={transport!r}: pass 'arena' or 'pipe'.")
    if (provenance or provenance_dir is not None) and not getattr(dataset, "plannable", False):
        raise unplannable(dataset)
    return kept


def _is_streamable(dataset: object) -> bool:
    """Whether ``dataset`` is one of ours; the composition modules load only for compositions."""
    from litdata.streaming.dataset import StreamingDataset

    if isinstance(dataset, StreamingDataset):
        return True
    from litdata.streaming.composition.base import ComposedDataset

    return isinstance(dataset, ComposedDataset)
