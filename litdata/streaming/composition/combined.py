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

import numpy as np
import numpy.typing as npt

from litdata.streaming.composition.base import ComposedDataset
from litdata.streaming.composition.draws import Mixer, Weights, draws
from litdata.streaming.control.provenance import id_counts
from litdata.streaming.dataset import StreamingDataset
from litdata.streaming.epoch.plan import Segment, Topology
from litdata.streaming.epoch.sample_key import replaying
from litdata.streaming.epoch.schedule import Clock, WeightSchedule
from litdata.streaming.epoch.topology import logical_worker, worker_and_count
from litdata.streaming.options import check_batch_size
from litdata.streaming.workers.batching import (
    BatchIds,
    Ids,
    IdTaker,
    LoaderProgress,
    labelled,
    mixed_id_batches,
)

#: Blocks of a worker's draws: the dataset of each draw and how many samples it takes.
Draws = Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]

__all__ = ["CombinedStreamingDataset"]

_METHODS = ("stratified", "per_stream")


def _counts(segments: Sequence[Sequence[Segment]]) -> list[int]:
    """Each child's number of items in its segments."""
    return [sum(segment.count for segment in part) for part in segments]


def _check_schedule(schedule: WeightSchedule, count: int) -> WeightSchedule:
    if schedule.num_datasets != count:
        raise ValueError(
            f"The WeightSchedule weighs {schedule.num_datasets} datasets; the mixture has {count}."
        )
    return schedule


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
            Or a ``WeightSchedule``: weights that change with training progress, with either
            setting of ``iterate_over_all`` (with ``True`` every dataset is still read to its
            end: the schedule orders the draws while datasets have items left).
        iterate_over_all: Read every dataset to its end (an exhausted one is no longer drawn);
            otherwise the epoch ends when a drawn dataset is exhausted.
        batching_method: ``"stratified"`` (each sample drawn) or ``"per_stream"`` (each batch
            from one dataset).
        force_override_state_dict: When resuming, keep this mixture's settings (with a warning).
    """

    state_key: ClassVar[str] = "__mixture__"
    plannable: ClassVar[bool] = True

    def __init__(  # noqa: PLR0917  # LitData's signature
        self,
        datasets: Sequence[StreamingDataset],
        seed: int = 42,
        weights: Sequence[float] | WeightSchedule | None = None,
        iterate_over_all: bool = True,
        batching_method: str = "stratified",
        force_override_state_dict: bool = False,
    ) -> None:
        super().__init__(datasets, seed, force_override_state_dict)
        self.schedule: WeightSchedule | None = None
        if isinstance(weights, WeightSchedule):
            self.schedule = _check_schedule(weights, len(self.datasets))
            weights = None
        self._weights = _check_weights(weights, len(self.datasets), iterate_over_all)
        self._clock = Clock()
        if batching_method not in _METHODS:
            raise ValueError(f"batching_method must be one of {_METHODS}, got {batching_method!r}")
        self.iterate_over_all = iterate_over_all
        self.batching_method = batching_method
        self._batch_sizes = [1] * len(self.datasets)

    @property
    def weights(self) -> list[float]:
        """The draw probability of each dataset (a schedule's at the start of the loader's run)."""
        if self.schedule is not None:
            unit = self.schedule.unit
            return self.schedule.at(self._clock.step if unit == "steps" else self._clock.samples)
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
            ("weights", self.schedule or self._weights),
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
    def set_clock(self, clock: Clock) -> None:
        """Where training stands as the loader starts a run (a schedule's position)."""
        self._clock = clock

    def _draw_weights(self, worker: int, topology: Topology, start: int, clock: Clock) -> Weights:
        """The weights of the draws of DataLoader worker ``worker`` in a run from draw ``start``.

        Draw ``d`` belongs to the worker's batch ``k`` of this run (a batch per draw with
        ``per_stream``, ``batch_size`` draws otherwise), which is loader step
        ``k * num_workers + worker`` after ``clock``.
        """
        schedule = self.schedule
        if schedule is None:
            fixed = np.asarray(self.weights, dtype=np.float64)
            return lambda first, count: np.broadcast_to(fixed, (count, len(fixed)))
        per_batch = 1 if self.batching_method == "per_stream" else self._batch_sizes[0]
        size, world, workers = topology.batch_size, topology.world_size, topology.num_workers

        def weights(first: int, count: int) -> npt.NDArray[np.float64]:
            batches = (np.arange(first, first + count) - start) // per_batch
            rows = {
                int(batch): schedule.at(
                    clock.position(schedule.unit, int(batch) * workers + worker, size, world)
                )
                for batch in np.unique(batches)
            }
            return np.asarray([rows[int(batch)] for batch in batches.tolist()], dtype=np.float64)

        return weights

    def _draws(
        self, left: Sequence[int], *, logical: int, start: int, epoch: int, weights: Weights
    ) -> Draws:
        """Blocks of draws of logical worker ``logical``: their datasets and takes."""
        per_stream = self.batching_method == "per_stream"
        takes = self._batch_sizes if per_stream else [1] * len(self.datasets)
        mixer = Mixer(self.seed, epoch, logical)
        return draws(mixer, left, takes, self.iterate_over_all, start, weights)

    def _segments(
        self, logical: int, topology: Topology, rank: int | None, epoch: int, fresh: bool
    ) -> list[Sequence[Segment]]:
        return [
            child.worker_segments(
                logical,
                Topology(topology.world_size, topology.num_workers, size),
                rank=rank,
                epoch=epoch,
                fresh=fresh,
            )
            for child, size in zip(self.datasets, self._batch_sizes, strict=True)
        ]

    def __iter__(self) -> Iterator[Any]:
        topology, logical = logical_worker(self._batch_sizes[0], self._rotation)
        start = self._saved("draws", topology)[logical]
        epoch = self.current_epoch
        segments = self._segments(logical, topology, None, epoch, fresh=False)
        streams = [
            itertools.chain.from_iterable(child.runs(part))
            for child, part in zip(self.datasets, segments, strict=True)
        ]
        weights = self._draw_weights(worker_and_count()[0], topology, start, self._clock)
        chosen = self._draws(
            _counts(segments), logical=logical, start=start, epoch=epoch, weights=weights
        )
        ids = None
        if self._with_ids:
            chosen, drawn = itertools.tee(chosen)
            ids = self._id_batches(segments, epoch, drawn, topology.batch_size)
        runs = (
            (source, list(itertools.islice(streams[source], take)))
            for sources, takes in chosen
            for source, take in zip(sources.tolist(), takes.tolist(), strict=True)
        )
        yield from self._stream(
            runs,
            self._batch_sizes[0],
            logical,
            topology,
            whole_runs=self.batching_method == "per_stream",
            ids=ids,
        )

    def batch_plan(
        self, worker: int, topology: Topology, *, rank: int, epoch: int, clock: Clock, fresh: bool
    ) -> tuple[int, Iterator[BatchIds]]:
        """The ids of the batches DataLoader worker ``worker`` of ``rank`` makes, reading none.

        See ``StreamingDataset.batch_plan``; the draws are the ones the worker makes.
        """
        logical = (worker + (0 if fresh else self._rotation(topology))) % topology.num_workers
        start = 0 if fresh else self._saved("draws", topology)[logical]
        segments = self._segments(logical, topology, rank, epoch, fresh)
        weights = self._draw_weights(worker, topology, start, clock)
        chosen = self._draws(
            _counts(segments), logical=logical, start=start, epoch=epoch, weights=weights
        )
        return logical, self._id_batches(segments, epoch, chosen, topology.batch_size)

    def _id_batches(
        self, segments: list[Sequence[Segment]], epoch: int, chosen: Draws, batch_size: int
    ) -> Iterator[BatchIds]:
        """The ids of the batches a worker makes of its ``segments`` and its ``chosen`` draws."""
        takers = [
            IdTaker(child.segment_ids(part, epoch))
            for child, part in zip(self.datasets, segments, strict=True)
        ]
        if self.batching_method == "per_stream":
            return (
                labelled(source, takers[source].take(take))
                for sources, takes in chosen
                for source, take in zip(sources.tolist(), takes.tolist(), strict=True)
            )
        drawn = (sources for sources, _ in chosen)
        return mixed_id_batches(drawn, takers, batch_size)

    def batch_counts(self, ids: BatchIds) -> list[int]:
        """What a batch of ``ids`` counts for: its samples of each dataset."""
        return id_counts(ids, self.num_sources)

    def read_ids(
        self, ids: Ids, *, worker: int = 0, first_step: int = 0, epoch: int = 1
    ) -> list[Any]:
        """The samples ``ids`` name, as streaming returns them (wherever they were read).

        Random transforms draw as they did in ``epoch`` (``sample_key``).
        """
        del worker, first_step
        with replaying(epoch):
            return [self.datasets[position][index] for position, index in ids]

    @property
    def num_sources(self) -> int:
        """Each dataset: the loader counts the samples drawn from every one."""
        return len(self.datasets)

    # -- resume ----------------------------------------------------------------------------
    def _settings(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "weights": self.weights if self.schedule is None else self.schedule.describe(),
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
