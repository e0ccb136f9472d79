"""``StreamingDataLoader``: a ``DataLoader`` whose position in the epoch can be saved and resumed.

Batches are made inside the workers (each worker reads whole batches of its own items), so
the loader knows exactly how many samples each worker has delivered; ``state_dict()`` records
that, and ``load_state_dict()`` makes the next batch exactly the one that would have come, or
with another number of workers or processes, exactly the items not seen yet.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

from torch.utils.data import DataLoader

from litdata.streaming.collate import litdata_collate
from litdata.streaming.dataset import Envelope, StreamingDataset
from litdata.streaming.transport import unpack

__all__ = ["StreamingDataLoader"]


def _unwrap_nothing(envelope: Any) -> Any:
    """The collate function torch applies to what workers yield: they yield finished batches."""
    return envelope


class StreamingDataLoader(DataLoader[Any]):
    """A ``torch.utils.data.DataLoader`` for ``StreamingDataset``, with ``state_dict()``.

    Args:
        dataset: The dataset.
        batch_size: Samples per batch.
        num_workers: Worker processes (0: read in this process).
        shuffle: Overrides the dataset's ``shuffle`` when given.
        drop_last: Overrides the dataset's ``drop_last`` when given.
        collate_fn: Makes a batch from a list of samples, inside the workers;
            ``litdata_collate`` (PyTorch's default collation, faster) by default.
        **kwargs: Other ``DataLoader`` arguments (``pin_memory``, ``prefetch_factor``,
            ``multiprocessing_context``...).
    """

    def __init__(
        self,
        dataset: StreamingDataset,
        *args: Any,
        batch_size: int = 1,
        num_workers: int = 0,
        shuffle: bool | None = None,
        drop_last: bool | None = None,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(dataset, StreamingDataset):
            raise RuntimeError(
                f"StreamingDataLoader reads a StreamingDataset, got {type(dataset).__name__}. "
                f"Use torch.utils.data.DataLoader for other datasets."
            )
        if kwargs.get("persistent_workers"):
            raise ValueError(
                "persistent_workers=True is not supported: each epoch's order and a resumed "
                "state are handed to the workers when they start."
            )
        if args:
            raise TypeError("Pass StreamingDataLoader's options by keyword (batch_size=...).")
        if shuffle is not None:
            dataset.set_shuffle(shuffle)
        if drop_last is not None:
            dataset.set_drop_last(drop_last)
        dataset.set_batch_size(batch_size)
        dataset.set_num_workers(num_workers)
        dataset.set_collate(collate_fn or litdata_collate)
        self.samples_per_batch = batch_size
        self.current_epoch = 0
        self._restoring = False
        self._base_samples = 0
        self._per_worker = [0] * max(1, num_workers)
        self._latest_worker = -1
        super().__init__(
            dataset, batch_size=None, num_workers=num_workers, collate_fn=_unwrap_nothing, **kwargs
        )

    def __len__(self) -> int:
        dataset: StreamingDataset = self.dataset  # type: ignore[assignment]
        return dataset.num_batches(self.num_workers, self.samples_per_batch)

    @property
    def num_samples_yielded(self) -> int:
        """Samples this loader has delivered in the current epoch (on this rank)."""
        return self._base_samples + sum(self._per_worker)

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]  # yields unwrapped batches
        dataset: StreamingDataset = self.dataset  # type: ignore[assignment]
        if not (self._restoring and dataset.resuming):
            self.current_epoch += 1
            dataset.reset_state_dict()
            dataset.set_epoch(self.current_epoch)
            self._base_samples = 0
        self._restoring = False
        self._per_worker = [0] * max(1, self.num_workers)
        self._latest_worker = -1
        _check_ranks_agree(dataset)
        for envelope in super().__iter__():
            if not isinstance(envelope, Envelope):
                raise TypeError("StreamingDataLoader's dataset must yield batches (Envelopes).")
            self._per_worker[envelope.worker] += envelope.samples
            self._latest_worker = envelope.worker
            yield unpack(envelope.data)
        dataset.reset_state_dict()

    def state_dict(self) -> dict[str, Any]:
        """Where this epoch stands; pass it to ``load_state_dict`` to continue from here."""
        dataset: StreamingDataset = self.dataset  # type: ignore[assignment]
        workers = max(1, self.num_workers)
        return {
            "dataset": dataset.state_dict(
                self.num_samples_yielded,
                self.num_workers,
                self.samples_per_batch,
                samples_per_worker=self._per_worker,
                next_worker=(self._latest_worker + 1) % workers,
            ),
            "current_epoch": self.current_epoch,
            "num_samples_yielded": self.num_samples_yielded,
            "latest_worker_idx": self._latest_worker,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state`` at the next iteration.

        Raises:
            ValueError: The state belongs to another dataset or other settings, or it records
                more samples than an epoch has.
        """
        dataset: StreamingDataset = self.dataset  # type: ignore[assignment]
        samples = int(state["num_samples_yielded"])
        if samples > dataset.agreement()["length"]:
            raise ValueError(
                f"The state records {samples} samples yielded, more than this dataset has "
                f"({dataset.agreement()['length']}): it belongs to another dataset."
            )
        dataset.load_state_dict(state["dataset"])
        self.current_epoch = int(state["current_epoch"])
        self._base_samples = samples
        self._restoring = True


def _check_ranks_agree(dataset: StreamingDataset) -> None:
    """Under DDP, check before the first batch that every rank reads the same dataset."""
    dist: Any = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return
    world = dist.get_world_size()
    if world == 1:
        return
    views: list[Any] = [None] * world
    dist.all_gather_object(views, dataset.agreement())
    differ = [rank for rank, view in enumerate(views) if view != views[0]]
    if differ:
        details = "; ".join(
            f"rank {rank}: {key}={views[rank][key]!r}"
            for rank in differ
            for key in views[0]
            if views[rank].get(key) != views[0][key]
        )
        raise RuntimeError(
            f"Ranks {differ} read a different dataset than rank 0 ({details}; rank 0 has "
            f"{views[0]}). Every rank must open the same dataset with the same seed, shuffle "
            f"and drop_last."
        )
