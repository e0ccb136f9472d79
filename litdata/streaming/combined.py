"""``CombinedStreamingDataset``: a weighted mixture of streaming datasets.

Each draw picks a dataset by weight and takes its next sample (``"stratified"``), or its next
batch (``"per_stream"``). Every child dataset is sharded across ranks and workers as if read
alone, so the mixture reads each item of each child at most once per epoch, and resumes, like
a single dataset, exactly or elastically.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from torch.utils.data import IterableDataset

from litdata.streaming.batching import batches, in_worker
from litdata.streaming.dataset import StreamingDataset
from litdata.streaming.distributed import logical_worker, rank_and_world
from litdata.streaming.mixing import Mixer
from litdata.streaming.plan import Topology
from litdata.streaming.state import validate_state

__all__ = ["CombinedStreamingDataset"]

_METHODS = ("stratified", "per_stream")


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
        if not child.regions or sum(region.size for region in child.regions) == 0:
            raise ValueError(f"Dataset {position} of the {kind} ({child.input_dir}) is empty.")
    return children


def _check_weights(
    weights: Sequence[float] | None, count: int, iterate_over_all: bool
) -> list[float] | None:
    if weights is None:
        return None
    if iterate_over_all:
        raise ValueError(
            "weights cannot be used with iterate_over_all=True (which reads every dataset to "
            "the end); pass iterate_over_all=False to sample by weight."
        )
    values = list(weights)
    if len(values) != count:
        raise ValueError(f"weights has {len(values)} entries for {count} datasets.")
    if any(not isinstance(w, int | float) or w < 0 for w in values) or not any(values):
        raise ValueError(f"weights must be non-negative numbers, not all zero; got {values}.")
    if not math.isclose(sum(values), 1.0, rel_tol=1e-6):
        raise ValueError(
            f"weights must add up to 1; {values} add up to {sum(values):g}. Divide each by "
            f"their sum: {[round(w / sum(values), 6) for w in values]}."
        )
    return [float(w) for w in values]


class CombinedStreamingDataset(IterableDataset[Any]):
    """A weighted mixture of ``StreamingDataset``s.

    Args:
        datasets: The datasets to mix.
        seed: Seeds the draws.
        weights: The probability of drawing from each dataset (they must add up to 1); by
            default proportional to the datasets' sizes. Only with ``iterate_over_all=False``.
        iterate_over_all: Read every dataset to its end (an exhausted one is no longer drawn);
            otherwise the epoch ends when a drawn dataset is exhausted.
        batching_method: ``"stratified"`` (each sample drawn) or ``"per_stream"`` (each batch
            from one dataset).
        force_override_state_dict: When resuming, keep this mixture's settings (with a warning).
    """

    def __init__(  # noqa: PLR0917  # LitData's signature
        self,
        datasets: Sequence[StreamingDataset],
        seed: int = 42,
        weights: Sequence[float] | None = None,
        iterate_over_all: bool = True,
        batching_method: str = "stratified",
        force_override_state_dict: bool = False,
    ) -> None:
        super().__init__()
        self.datasets = check_children(datasets, "CombinedStreamingDataset")
        self._weights = _check_weights(weights, len(self.datasets), iterate_over_all)
        if batching_method not in _METHODS:
            raise ValueError(f"batching_method must be one of {_METHODS}, got {batching_method!r}")
        self.seed = seed
        self.iterate_over_all = iterate_over_all
        self.batching_method = batching_method
        self.force_override_state_dict = force_override_state_dict
        self.current_epoch = 1
        self._batch_sizes = [1] * len(self.datasets)
        self._num_workers = 1
        self._collate: Callable[[list[Any]], Any] | None = None
        self._resume: dict[str, Any] | None = None

    @property
    def weights(self) -> list[float]:
        """The draw probability of each dataset."""
        if self._weights is not None:
            return self._weights
        sizes = [sum(region.size for region in child.regions) for child in self.datasets]
        return [size / sum(sizes) for size in sizes]

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

    def set_batch_size(self, batch_size: int | Sequence[int]) -> None:
        """The batch size, or one per dataset (``per_stream`` batches from one dataset).

        Raises:
            ValueError: A sequence without one positive size per dataset.
        """
        sizes = (
            [batch_size] * len(self.datasets) if isinstance(batch_size, int) else list(batch_size)
        )
        if len(sizes) != len(self.datasets) or any(not isinstance(s, int) or s < 1 for s in sizes):
            raise ValueError(
                f"batch_size must be a positive int or one per dataset, got {batch_size!r}"
            )
        self._batch_sizes = sizes

    def set_num_workers(self, num_workers: int) -> None:
        """Plan for ``num_workers`` DataLoader workers."""
        self._num_workers = max(1, num_workers)
        for child in self.datasets:
            child.set_num_workers(num_workers)

    def set_collate(self, collate: Callable[[list[Any]], Any] | None) -> None:
        """Yield batches collated with ``collate`` (inside the workers)."""
        self._collate = collate

    # -- sizes -----------------------------------------------------------------------------
    def _worker_totals(self, num_workers: int) -> list[int]:
        shares = [child.shares(num_workers, 1) for child in self.datasets]
        return [sum(column) for column in zip(*shares, strict=True)]

    def num_batches(self, num_workers: int, batch_size: int) -> int:
        """This rank's batches per epoch (``iterate_over_all`` only: otherwise it varies)."""
        if not self.iterate_over_all:
            raise TypeError("A mixture with iterate_over_all=False has no fixed length.")
        if self.batching_method == "per_stream":
            return sum(
                -(-share // size)
                for child, size in zip(self.datasets, self._batch_sizes, strict=True)
                for share in child.shares(num_workers, 1)
            )
        return sum(-(-total // batch_size) for total in self._worker_totals(num_workers))

    def __len__(self) -> int:
        if not self.iterate_over_all:
            raise TypeError("A mixture with iterate_over_all=False has no fixed length.")
        return sum(self._worker_totals(self._num_workers))

    # -- iteration -------------------------------------------------------------------------
    def _base_draws(self, topology: Topology) -> list[int]:
        """Draws each worker made before a same-topology resume (else none)."""
        if not self._same_topology(topology) or self._resume is None:
            return [0] * topology.num_workers
        return [int(draws) for draws in self._resume["draws"]]

    def _runs(
        self, logical: int, topology: Topology, start: int
    ) -> Iterator[tuple[int, list[Any]]]:
        child_topology = Topology(topology.world_size, topology.num_workers, 1)
        segments = [child.worker_segments(logical, child_topology) for child in self.datasets]
        left = [sum(segment.count for segment in part) for part in segments]
        streams = [
            itertools.chain.from_iterable(child.runs(part, 64))
            for child, part in zip(self.datasets, segments, strict=True)
        ]
        mixer = Mixer(self.weights, self.seed, self.current_epoch, logical)
        per_stream = self.batching_method == "per_stream"
        draw = start
        while any(left):
            active = [count > 0 for count in left] if self.iterate_over_all else [True] * len(left)
            source = mixer.choose(draw, active)
            draw += 1
            if left[source] == 0:
                return  # iterate_over_all=False: the drawn dataset is exhausted
            take = min(left[source], self._batch_sizes[source]) if per_stream else 1
            left[source] -= take
            yield source, list(itertools.islice(streams[source], take))

    def __iter__(self) -> Iterator[Any]:
        topology, logical = logical_worker(self._batch_sizes[0], self._rotation)
        runs = self._runs(logical, topology, self._base_draws(topology)[logical])
        if self._collate is None:
            for _, run in runs:
                yield from run
        else:
            yield from batches(
                runs,
                self._batch_sizes[0],
                self._collate,
                logical,
                len(self.datasets),
                whole_runs=self.batching_method == "per_stream",
            )
        if topology.num_workers == 1 and not in_worker():
            self.reset_state_dict()
            self.current_epoch += 1

    def _same_topology(self, topology: Topology) -> bool:
        saved = (self._resume or {}).get("topology")
        return saved == [topology.world_size, topology.num_workers, topology.batch_size]

    def _rotation(self, topology: Topology) -> int:
        if self._same_topology(topology) and self._resume is not None:
            return int(self._resume.get("next_worker", 0))
        return 0

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

    def _settings(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "weights": self.weights,
            "iterate_over_all": self.iterate_over_all,
            "batching_method": self.batching_method,
        }

    def agreement(self) -> dict[str, Any]:
        """What every rank must agree on before reading."""
        children = [child.agreement() for child in self.datasets]
        return {
            "items": sum(c["items"] for c in children),
            "datasets": children,
            **self._settings(),
        }

    def loader_state(
        self,
        counts: Sequence[Sequence[int]],
        num_workers: int,
        batch_size: int,
        next_worker: int,
        batches_per_worker: Sequence[int] = (),
    ) -> dict[str, Any]:
        """The mixture's part of the loader's state dict: each child's, and the draws made."""
        _, world = rank_and_world()
        children = {
            str(position): child.state_dict(
                sum(count[position] for count in counts),
                num_workers,
                1,
                [count[position] for count in counts],
                next_worker,
            )
            for position, child in enumerate(self.datasets)
        }
        topology = Topology(world, max(1, num_workers), batch_size)
        made = (
            batches_per_worker if self.batching_method == "per_stream" else [sum(c) for c in counts]
        )
        draws = [a + b for a, b in zip(self._base_draws(topology), made, strict=True)]
        return {
            **children,
            "__mixture__": {
                **self._settings(),
                "current_epoch": self.current_epoch,
                "topology": [topology.world_size, topology.num_workers, topology.batch_size],
                "draws": draws,
                "next_worker": next_worker,
            },
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume from the mixture's part of a state dict.

        Raises:
            RuntimeError: It has another number of datasets.
            ValueError: Its settings differ (see ``force_override_state_dict``).
        """
        mixture = state.get("__mixture__")
        children = [key for key in state if key != "__mixture__"]
        if mixture is None or len(children) != len(self.datasets):
            raise RuntimeError(
                f"The state dict holds {len(children)} datasets, this mixture {len(self.datasets)}."
            )
        validate_state(mixture, self._settings(), self.force_override_state_dict)
        for position, child in enumerate(self.datasets):
            child.load_state_dict(state[str(position)])
        self._resume = dict(mixture)
        self.current_epoch = int(mixture["current_epoch"])
