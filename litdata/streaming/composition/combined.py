"""``CombinedStreamingDataset``: a weighted mixture of streaming datasets.

Each draw picks a dataset by weight and takes its next sample (``"stratified"``), or its next
batch (``"per_stream"``). Every child dataset is sharded across ranks and workers as if read
alone, so the mixture reads each item of each child at most once per epoch, and resumes, like
a single dataset, exactly or elastically.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from litdata.streaming.batching import LoaderProgress
from litdata.streaming.composition.base import ComposedDataset
from litdata.streaming.composition.draws import Mixer
from litdata.streaming.dataset import StreamingDataset
from litdata.streaming.distributed import logical_worker
from litdata.streaming.options import check_batch_size
from litdata.streaming.plan import Topology

__all__ = ["CombinedStreamingDataset"]

_METHODS = ("stratified", "per_stream")


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
    total = float(sum(values))
    return [float(w) / total for w in values]  # normalised, as LitData does


class CombinedStreamingDataset(ComposedDataset):
    """A weighted mixture of ``StreamingDataset``s.

    Args:
        datasets: The datasets to mix.
        seed: Seeds the draws.
        weights: How often to draw from each dataset (normalised to add up to 1); by
            default proportional to the datasets' sizes. Only with ``iterate_over_all=False``.
        iterate_over_all: Read every dataset to its end (an exhausted one is no longer drawn);
            otherwise the epoch ends when a drawn dataset is exhausted.
        batching_method: ``"stratified"`` (each sample drawn) or ``"per_stream"`` (each batch
            from one dataset).
        force_override_state_dict: When resuming, keep this mixture's settings (with a warning).
    """

    state_key: ClassVar[str] = "__mixture__"

    def __init__(  # noqa: PLR0917  # LitData's signature
        self,
        datasets: Sequence[StreamingDataset],
        seed: int = 42,
        weights: Sequence[float] | None = None,
        iterate_over_all: bool = True,
        batching_method: str = "stratified",
        force_override_state_dict: bool = False,
    ) -> None:
        super().__init__(datasets, seed, force_override_state_dict)
        self._weights = _check_weights(weights, len(self.datasets), iterate_over_all)
        if batching_method not in _METHODS:
            raise ValueError(f"batching_method must be one of {_METHODS}, got {batching_method!r}")
        self.iterate_over_all = iterate_over_all
        self.batching_method = batching_method
        self._batch_sizes = [1] * len(self.datasets)

    @property
    def weights(self) -> list[float]:
        """The draw probability of each dataset."""
        if self._weights is not None:
            return self._weights
        sizes = [child.num_items for child in self.datasets]
        return [size / sum(sizes) for size in sizes]

    def set_batch_size(self, batch_size: int | Sequence[int]) -> None:
        """The batch size, or one per dataset (``per_stream`` batches from one dataset).

        Raises:
            ValueError: A sequence without one positive size per dataset.
        """
        count = len(self.datasets)
        if not isinstance(batch_size, list | tuple):
            self._batch_sizes = [check_batch_size(batch_size)] * count
            return
        sizes = list(batch_size)
        if len(sizes) != count:
            raise ValueError(
                f"batch_size must be a positive int or one per dataset ({count}), got "
                f"{batch_size!r}"
            )
        self._batch_sizes = [check_batch_size(size) for size in sizes]

    # -- sizes -----------------------------------------------------------------------------
    def _child_shares(self, num_workers: int) -> list[list[int]]:
        """Each child's items per worker, in whole batches (as LitData splits them)."""
        return [
            child.shares(num_workers, size)
            for child, size in zip(self.datasets, self._batch_sizes, strict=True)
        ]

    def _child_batch_size(self, position: int) -> int:
        return self._batch_sizes[position]

    def _worker_totals(self, num_workers: int) -> list[int]:
        return [sum(column) for column in zip(*self._child_shares(num_workers), strict=True)]

    def num_batches(self, num_workers: int, batch_size: int) -> int:
        """This rank's batches per epoch (``iterate_over_all`` only: otherwise it varies)."""
        if not self.iterate_over_all:
            raise TypeError("A mixture with iterate_over_all=False has no fixed length.")
        if self.batching_method == "per_stream":
            return sum(
                -(-share // size)
                for shares, size in zip(
                    self._child_shares(num_workers), self._batch_sizes, strict=True
                )
                for share in shares
            )
        return sum(-(-total // batch_size) for total in self._worker_totals(num_workers))

    def _repr_fields(self) -> list[tuple[str, Any]]:
        return [
            ("weights", self._weights),
            ("iterate_over_all", self.iterate_over_all),
            ("batching_method", self.batching_method),
        ]

    def __len__(self) -> int:
        if not self.iterate_over_all:
            raise TypeError("A mixture with iterate_over_all=False has no fixed length.")
        return sum(self._worker_totals(self._num_workers))

    def _items(self, counts: Sequence[int]) -> int:
        return sum(counts)

    # -- iteration -------------------------------------------------------------------------
    def _runs(
        self, logical: int, topology: Topology, start: int
    ) -> Iterator[tuple[int, list[Any]]]:
        segments = [
            child.worker_segments(
                logical, Topology(topology.world_size, topology.num_workers, size)
            )
            for child, size in zip(self.datasets, self._batch_sizes, strict=True)
        ]
        left = [sum(segment.count for segment in part) for part in segments]
        streams = [
            itertools.chain.from_iterable(child.runs(part))
            for child, part in zip(self.datasets, segments, strict=True)
        ]
        mixer = Mixer(self.weights, self.seed, self.current_epoch, logical)
        per_stream = self.batching_method == "per_stream"
        draw, remaining = start, sum(left)
        # iterate_over_all: an exhausted dataset leaves the draw; otherwise drawing it ends.
        active = [count > 0 or not self.iterate_over_all for count in left]
        while remaining:
            source = mixer.choose(draw, active)
            draw += 1
            if left[source] == 0:
                return
            take = min(left[source], self._batch_sizes[source]) if per_stream else 1
            left[source] -= take
            remaining -= take
            if left[source] == 0 and self.iterate_over_all:
                active[source] = False
            yield source, list(itertools.islice(streams[source], take))

    def __iter__(self) -> Iterator[Any]:
        topology, logical = logical_worker(self._batch_sizes[0], self._rotation)
        runs = self._runs(logical, topology, self._saved("draws", topology)[logical])
        yield from self._stream(
            runs,
            self._batch_sizes[0],
            logical,
            topology,
            whole_runs=self.batching_method == "per_stream",
        )

    @property
    def num_sources(self) -> int:
        """Each dataset: the loader counts the samples drawn from every one."""
        return len(self.datasets)

    # -- resume ----------------------------------------------------------------------------
    def _settings(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "weights": self.weights,
            "iterate_over_all": self.iterate_over_all,
            "batching_method": self.batching_method,
        }

    def loader_state(self, progress: LoaderProgress) -> dict[str, Any]:
        """The mixture's part of the loader's state dict: each child's, and the draws made."""
        per_stream = self.batching_method == "per_stream"
        made = progress.batches if per_stream else [sum(count) for count in progress.counts]
        draws = self._counted("draws", made, progress)
        per_child = [
            [count[position] for count in progress.counts] for position in range(len(self.datasets))
        ]
        return self._state(per_child, progress, {"draws": draws})
