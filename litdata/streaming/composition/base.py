"""What mixtures and zips share: their child datasets, settings passed down, resume plumbing."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar

from torch.utils.data import IterableDataset

from litdata.streaming.dataset import StreamingDataset
from litdata.streaming.epoch.plan import Topology
from litdata.streaming.epoch.topology import rank_and_world
from litdata.streaming.reprs import length_of, render
from litdata.streaming.resume.checks import describe_state, require_dataset_state
from litdata.streaming.resume.state import validate_state
from litdata.streaming.workers.batching import BatchIds, LoaderProgress, deliver, in_worker

__all__ = ["ComposedDataset", "check_children"]


def check_children(datasets: Sequence[Any], kind: str) -> list[StreamingDataset]:
    """The datasets of a composition, as a list, after checking them.

    Raises:
        RuntimeError: One is not a ``StreamingDataset``.
        ValueError: There is none, or one is empty.
    """
    children = list(datasets)
    if not children:
        raise ValueError(f"{kind} needs at least one dataset.")
    for position, child in enumerate(children):
        if not isinstance(child, StreamingDataset):
            raise RuntimeError(
                f"{kind} combines StreamingDatasets; dataset {position} is a "
                f"{type(child).__name__}."
            )
        if child.num_items == 0:
            raise ValueError(f"Dataset {position} of the {kind} ({child.input_dir}) is empty.")
    return children


class ComposedDataset(IterableDataset[Any]):
    """A dataset made of ``StreamingDataset``s, read by ``StreamingDataLoader``.

    Subclasses say how a worker's runs of samples are made (``_runs``) and what their own
    resume state holds; this class passes settings down to the children, rotates workers on
    an exact resume, and stores and validates the state.

    Args:
        datasets: The child datasets.
        seed: The composition's seed.
        force_override_state_dict: When resuming, keep this composition's settings.
    """

    state_key: ClassVar[str]

    def __init__(
        self, datasets: Sequence[StreamingDataset], seed: int, force_override_state_dict: bool
    ) -> None:
        super().__init__()
        self.datasets = check_children(datasets, type(self).__name__)
        self.seed = seed
        self.force_override_state_dict = force_override_state_dict
        self.current_epoch = 1
        self._num_workers = 1
        self._collate: Callable[[list[Any]], Any] | None = None
        self._with_ids = False
        self._resume: dict[str, Any] | None = None

    def _repr_fields(self) -> list[tuple[str, Any]]:
        """A subclass's own settings, shown by ``repr()``."""
        return []

    def __repr__(self) -> str:
        fields = [
            ("length", length_of(self)),
            ("datasets", len(self.datasets)),
            *self._repr_fields(),
            ("seed", self.seed),
            ("epoch", self.current_epoch),
            ("workers", self._num_workers),
        ]
        return render(type(self).__name__, fields, self.datasets)

    # -- configuration ---------------------------------------------------------------------
    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch``'s order (ignored while a loaded state dict is pending)."""
        if self._resume is None:
            self.current_epoch = epoch
        for child in self.datasets:
            child.set_epoch(epoch)

    def set_shuffle(self, shuffle: bool) -> None:
        """Change every dataset's ``shuffle``."""
        for child in self.datasets:
            child.set_shuffle(shuffle)

    def set_drop_last(self, drop_last: bool) -> None:
        """Change every dataset's ``drop_last``."""
        for child in self.datasets:
            child.set_drop_last(drop_last)

    def settings(self) -> Any:
        """Every dataset's ``shuffle`` and ``drop_last``, for ``restore_settings``."""
        return [child.settings() for child in self.datasets]

    def restore_settings(self, saved: Any) -> None:
        """Put back what ``settings()`` returned."""
        for child, own in zip(self.datasets, saved, strict=True):
            child.restore_settings(own)

    def set_num_workers(self, num_workers: int) -> None:
        """Plan for ``num_workers`` DataLoader workers."""
        self._num_workers = max(1, num_workers)
        for child in self.datasets:
            child.set_num_workers(num_workers)

    def set_collate(self, collate: Callable[[list[Any]], Any] | None, *, ids: bool = False) -> None:
        """Yield batches collated with ``collate`` (inside the workers) instead of samples.

        With ``ids`` each batch's ``Envelope`` carries its samples' ids (``batch_plan``'s).
        """
        self._collate = collate
        self._with_ids = ids

    # -- iteration -------------------------------------------------------------------------
    def _same_topology(self, topology: Topology) -> bool:
        saved = (self._resume or {}).get("topology")
        return saved == [topology.world_size, topology.num_workers, topology.batch_size]

    def _rotation(self, topology: Topology) -> int:
        if self._resume is not None and self._same_topology(topology):
            return int(self._resume.get("next_worker", 0))
        return 0

    def _saved(self, key: str, topology: Topology) -> list[int]:
        """Per-worker counts saved under ``key`` by a same-topology run, else zeros."""
        if self._resume is None or not self._same_topology(topology):
            return [0] * topology.num_workers
        return [int(value) for value in self._resume[key]]

    def _counted(self, key: str, made: Sequence[int], progress: LoaderProgress) -> list[int]:
        """Per-worker counts under ``key``: those saved by a same-topology run plus ``made``."""
        _, world = rank_and_world()
        topology = Topology(world, max(1, progress.num_workers), progress.batch_size)
        saved = self._saved(key, topology)
        return [a + b for a, b in zip(saved, made, strict=True)]

    def _stream(
        self,
        runs: Iterable[tuple[int, list[Any]]],
        batch_size: int,
        logical: int,
        topology: Topology,
        *,
        whole_runs: bool = False,
        ids: Iterator[BatchIds] | None = None,
    ) -> Iterator[Any]:
        """Yield the samples of ``runs``, or batches of them (with ``ids``) for a loader."""
        yield from deliver(
            runs,
            batch_size,
            self._collate,
            logical,
            self.num_sources,
            whole_runs=whole_runs,
            ids=ids,
        )
        if topology.num_workers == 1 and not in_worker():
            self.reset_state_dict()
            if self.next_epoch_alone:
                self.current_epoch += 1

    # -- resume ----------------------------------------------------------------------------
    @property
    def resuming(self) -> bool:
        """Whether a loaded state dict will shape the next iteration."""
        return self._resume is not None

    def reset_state_dict(self) -> None:
        """Forget a loaded state dict."""
        self._resume = None
        for child in self.datasets:
            child.reset_state_dict()

    @property
    def num_sources(self) -> int:
        """How many datasets the loader counts samples of."""
        raise NotImplementedError

    def _settings(self) -> dict[str, Any]:
        raise NotImplementedError

    def _items(self, counts: Sequence[int]) -> int | None:
        """The composition's number of items, from its children's (``None``: no end)."""
        raise NotImplementedError

    def agreement(self) -> dict[str, Any]:
        """What every rank must agree on before reading."""
        children = [child.agreement() for child in self.datasets]
        return {
            "items": self._items([c["items"] for c in children]),
            "datasets": children,
            **self._settings(),
        }

    def _state(
        self, per_child: Sequence[Sequence[int]], progress: LoaderProgress, own: dict[str, Any]
    ) -> dict[str, Any]:
        """Each child's state (from its per-worker counts) and this composition's."""
        _, world = rank_and_world()
        workers, following = progress.num_workers, progress.next_worker
        children = {
            str(position): child.state_dict(
                sum(counts), workers, self._child_batch_size(position), list(counts), following
            )
            for position, (child, counts) in enumerate(zip(self.datasets, per_child, strict=True))
        }
        topology = [world, max(1, workers), progress.batch_size]
        return {
            **children,
            self.state_key: {
                **self._settings(),
                "current_epoch": self.current_epoch,
                "topology": topology,
                "next_worker": following,
                **own,
            },
        }

    #: Whether iterating without a loader moves to the next epoch (else it starts over).
    next_epoch_alone: ClassVar[bool] = True
    #: Whether a loader that stopped early (``break``) continues the epoch next time.
    continues_after_break: bool = False

    def _child_batch_size(self, position: int) -> int:
        """The batch size child ``position`` splits its items among workers by."""
        return 1

    def _loads_children(self) -> bool:
        """Whether the children resume from their own states (else the composition places them)."""
        return True

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume from this composition's part of a state dict.

        Raises:
            ValueError: It is the state of another kind of dataset, holds another number of
                datasets, or its settings differ (see ``force_override_state_dict``).
        """
        expected = f"a {type(self).__name__} of {len(self.datasets)} datasets"
        require_dataset_state(state, expected, self.state_key)
        own = state[self.state_key]
        children = [key for key in state if key != self.state_key]
        if len(children) != len(self.datasets):
            raise ValueError(
                f"This state dict is {describe_state(state)}, but it is loaded into {expected}."
            )
        validate_state(own, self._settings(), self.force_override_state_dict)
        self._resume = dict(own)
        self.current_epoch = int(own["current_epoch"])
        if self._loads_children():
            for position, child in enumerate(self.datasets):
                child.load_state_dict(state[str(position)])
