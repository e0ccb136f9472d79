"""What ``StreamingDataLoader`` needs of a dataset: ``StreamingDataset`` and the compositions."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from litdata.streaming.epoch.plan import Topology
from litdata.streaming.epoch.schedule import Clock
from litdata.streaming.workers.batching import BatchIds, Ids, LoaderProgress

__all__ = ["Streamable"]


class Streamable(Protocol):
    """What ``StreamingDataLoader`` needs of a dataset (StreamingDataset, Combined, Parallel)."""

    @property
    def resuming(self) -> bool:
        """Whether a loaded state dict will shape the next iteration."""
        ...

    @property
    def num_sources(self) -> int:
        """How many datasets the loader counts samples of, in each ``Envelope``."""
        ...

    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch``'s order."""
        ...

    def set_shuffle(self, shuffle: Any) -> None:
        """Change shuffling."""
        ...

    def set_drop_last(self, drop_last: bool) -> None:
        """Change ``drop_last``."""
        ...

    def settings(self) -> Any:
        """``shuffle`` and ``drop_last`` as set now (an opaque value)."""
        ...

    def restore_settings(self, saved: Any) -> None:
        """Put back what ``settings()`` returned."""
        ...

    def set_batch_size(self, batch_size: int) -> None:
        """Plan for this batch size."""
        ...

    def set_num_workers(self, num_workers: int) -> None:
        """Plan for this many workers."""
        ...

    def set_collate(self, collate: Callable[[list[Any]], Any] | None, *, ids: bool = False) -> None:
        """Yield ``Envelope`` batches made with ``collate`` (carrying their ids with ``ids``)."""
        ...

    def num_batches(self, num_workers: int, batch_size: int) -> int:
        """Batches per epoch on this rank."""
        ...

    def agreement(self) -> dict[str, Any]:
        """What every rank must agree on."""
        ...

    def reset_state_dict(self) -> None:
        """Forget a loaded state."""
        ...

    def loader_state(self, progress: LoaderProgress) -> Mapping[str, Any]:
        """The dataset's part of the loader's state dict."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume from the dataset's part of a state dict."""
        ...

    def batch_plan(
        self, worker: int, topology: Topology, *, rank: int, epoch: int, clock: Clock, fresh: bool
    ) -> tuple[int, Iterator[BatchIds]]:
        """A worker's logical id and its batches' ids (see ``StreamingDataset.batch_plan``)."""
        ...

    def batch_counts(self, ids: BatchIds) -> list[int]:
        """What a batch of ``ids`` counts for, per source (its ``Envelope.counts``)."""
        ...

    def read_ids(
        self, ids: Ids, *, worker: int = 0, first_step: int = 0, epoch: int = 1
    ) -> list[Any]:
        """The samples ``ids`` name (``worker``, ``first_step``, ``epoch``: where they were)."""
        ...
