"""``ParallelStreamingDataset``: several streaming datasets read side by side (zipped).

Each step yields one sample of every dataset, as a tuple or through ``transform``. With a
``length`` the datasets are cycled (each new pass in a new order) until the epoch has that many
steps; ``length=float("inf")`` never ends. Positions are pure functions of the step number,
so a resumed loader continues exactly, and transforms given seeded ``rngs`` reproduce.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import math
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt
import torch

from litdata.streaming.composition.base import ComposedDataset
from litdata.streaming.dataset import StreamingDataset
from litdata.streaming.epoch.plan import Segment, Topology, budgets, skip
from litdata.streaming.epoch.sample_key import replaying
from litdata.streaming.epoch.schedule import Clock
from litdata.streaming.epoch.topology import logical_worker, rank_and_world
from litdata.streaming.options import check_batch_size
from litdata.streaming.workers.batching import BatchIds, Ids, IdTaker, LoaderProgress

__all__ = ["ParallelStreamingDataset"]

Transform = Callable[..., Any]
#: Makes a stream of a dataset's segments in an epoch (its samples, or arrays of their ids).
Reading = Callable[[StreamingDataset, Sequence[Segment], int], Iterator[Any]]


class Placement(NamedTuple):
    """Which epoch of which rank a worker's streams belong to.

    Attributes:
        rank: The rank (``None``: this process's).
        epoch: The epoch of the zip (cycled passes are numbered from it).
        fresh: Plan from the epoch's start, ignoring a loaded state dict.
        now: The datasets' own epochs (the iteration in progress), not ``epoch``, for datasets
            that are not cycled.
    """

    rank: int | None
    epoch: int
    fresh: bool
    now: bool


def _samples(child: StreamingDataset, segments: Sequence[Segment], epoch: int) -> Iterator[Any]:
    """A dataset's samples of ``segments``, one by one, read in ``epoch``'s order."""
    child.current_epoch = epoch
    return itertools.chain.from_iterable(child.runs(segments))


def _ids(
    child: StreamingDataset, segments: Sequence[Segment], epoch: int
) -> Iterator[npt.NDArray[np.int64]]:
    """The ids of a dataset's samples of ``segments``, in arrays, in ``epoch``'s order."""
    return child.segment_ids(segments, epoch)


def _check_length(length: int | float | None) -> int | float | None:
    valid = (
        length is None
        or (isinstance(length, int) and not isinstance(length, bool) and length > 0)
        or length == math.inf
    )
    if not valid:
        raise ValueError(
            f"length must be None (stop with the shortest dataset), a positive int (cycle to "
            f"that many samples per epoch) or float('inf') (never stop); got {length!r}."
        )
    return length


def _transform_arity(transform: Transform | None) -> int:
    if transform is None:
        return 0
    if not callable(transform):
        raise ValueError(f"transform must be callable, got {transform!r}")
    parameters = [
        p
        for p in inspect.signature(transform).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    if len(parameters) not in (1, 2):
        raise ValueError(
            f"transform must take 1 argument (the samples) or 2 (the samples and rngs); "
            f"{getattr(transform, '__name__', transform)} takes {len(parameters)}."
        )
    return len(parameters)


def _rngs(state: tuple[int, ...]) -> dict[str, Any]:
    seed = int(hashlib.sha256(repr(state).encode()).hexdigest(), 16) % (2**32 - 1)
    return {
        "random": random.Random(seed),  # noqa: S311  # data augmentation, not cryptography
        "numpy": np.random.default_rng(seed),
        "torch": torch.Generator().manual_seed(seed),
    }


class ParallelStreamingDataset(ComposedDataset):
    """Read ``StreamingDataset``s side by side: each step yields one sample of each.

    Args:
        datasets: The datasets to zip (give aligned ones the same chunking, seed and shuffle).
        length: ``None``: stop with the shortest; an int: cycle the datasets to this many steps
            per epoch (per rank); ``float("inf")``: never stop.
        force_override_state_dict: When resuming, keep this dataset's settings.
        transform: ``transform(samples)`` or ``transform(samples, rngs)``, where ``rngs`` holds
            ``random``, ``numpy`` and ``torch`` generators seeded by the step, so augmentations
            replay identically after a resume.
        seed: Seeds ``rngs``.
        resume: With a ``length``, each epoch continues the cycles where the last one stopped.
        reset_rngs: Seed ``rngs`` without the epoch, so every epoch replays the same draws.
    """

    state_key: ClassVar[str] = "__parallel__"
    next_epoch_alone: ClassVar[bool] = False  # LitData: iterating it again starts over

    def __init__(  # noqa: PLR0917  # LitData's signature
        self,
        datasets: Sequence[StreamingDataset],
        length: int | float | None = None,
        force_override_state_dict: bool = False,
        transform: Transform | None = None,
        seed: int = 42,
        resume: bool = True,
        reset_rngs: bool = False,
    ) -> None:
        super().__init__(datasets, seed, force_override_state_dict)
        self.length = _check_length(length)
        self.transform = transform
        self._arity = _transform_arity(transform)
        self.resume = resume
        self.reset_rngs = reset_rngs
        self._batch_size = 1

    @property
    def continues_after_break(self) -> bool:  # type: ignore[override]  # computed here
        """With ``resume`` while cycling, a loader that broke off continues the epoch."""
        return self.resume and self.is_cycling()

    def is_cycling(self) -> bool:
        """Whether the datasets are cycled to a ``length``."""
        return self.length is not None

    def is_infinite(self) -> bool:
        """Whether the epoch never ends."""
        return self.length == math.inf

    # -- configuration ---------------------------------------------------------------------
    def set_batch_size(self, batch_size: int) -> None:
        """Steps per batch."""
        self._batch_size = check_batch_size(batch_size)

    # -- sizes -----------------------------------------------------------------------------
    def _steps(self, num_workers: int, rank: int | None = None) -> list[int]:
        """Steps each of a rank's workers (default: this rank's) takes per epoch."""
        own, world = rank_and_world()
        rank = own if rank is None else rank
        topology = Topology(world, max(1, num_workers), 1)
        if self.length is None:
            shares = [child.shares(num_workers, self._batch_size) for child in self.datasets]
            return [min(column) for column in zip(*shares, strict=True)]
        if self.length == math.inf:
            raise TypeError("An infinite ParallelStreamingDataset has no length.")
        steps = budgets(int(self.length) * world, topology, drop_last=False)
        return steps[rank * topology.num_workers : (rank + 1) * topology.num_workers]

    def num_batches(self, num_workers: int, batch_size: int) -> int:
        """This rank's batches per epoch."""
        return sum(-(-steps // batch_size) for steps in self._steps(num_workers))

    def _repr_fields(self) -> list[tuple[str, Any]]:
        return [("length_per_epoch", self.length), ("resume", self.resume)]

    def __len__(self) -> int:
        return sum(self._steps(self._num_workers))

    def get_all_lens(self) -> list[int]:
        """Each dataset's length."""
        return [len(child) for child in self.datasets]

    # -- iteration -------------------------------------------------------------------------
    def _cycle_epoch(self, cycle: int, epoch: int) -> int:
        """The order of pass ``cycle`` of a cycled dataset in ``epoch``.

        Passes are numbered from the start of training with ``resume``, else from the start of
        each epoch; each pass reads the dataset in its own order.
        """
        if self.resume:
            return cycle + 1
        return epoch * 1_000_003 + cycle

    def _cycled(  # noqa: PLR0917  # one stream's whole description
        self,
        child: StreamingDataset,
        logical: int,
        topology: Topology,
        start: int,
        read: Reading,
        place: Placement,
    ) -> Iterator[Any]:
        """A cycled child's stream for this worker, from position ``start`` of its passes."""
        size = child.shares(topology.num_workers, topology.batch_size)[logical]  # every pass
        if size == 0:
            return
        cycle, start = divmod(start, size)
        while True:
            epoch = self._cycle_epoch(cycle, place.epoch)
            segments = child.worker_segments(
                logical, topology, rank=place.rank, epoch=epoch, fresh=place.fresh
            )
            yield from read(child, skip(segments, start), epoch)
            start, cycle = 0, cycle + 1

    def _streams(
        self, logical: int, topology: Topology, read: Reading, place: Placement
    ) -> tuple[list[Iterator[Any]], int | None, int]:
        """Each dataset's stream for worker ``logical``, the steps to take and those taken.

        ``read`` makes a stream of a child's segments in an epoch: its samples, or their ids.
        """
        # Each dataset is split among the workers in whole batches, as LitData splits it.
        child_topology = Topology(topology.world_size, topology.num_workers, self._batch_size)
        resume = None if place.fresh else self._resume
        done = 0 if place.fresh else self._saved("steps", topology)[logical]
        if self.is_cycling():
            if resume is not None and not self._same_topology(topology):
                raise RuntimeError(
                    "A cycling ParallelStreamingDataset resumes only with the same number of "
                    "workers, processes and batch size it was saved with."
                )
            per_epoch = (
                None
                if self.is_infinite()
                else self._steps(topology.num_workers, place.rank)[logical]
            )
            first = (place.epoch - 1) * per_epoch if per_epoch and self.resume else 0
            streams = [
                self._cycled(child, logical, child_topology, first + done, read, place)
                for child in self.datasets
            ]
            return streams, None if per_epoch is None else per_epoch - done, done
        # Each dataset resumes (exactly or elastically) from its own state.
        epochs = [child.current_epoch if place.now else place.epoch for child in self.datasets]
        parts = [
            child.worker_segments(
                logical, child_topology, rank=place.rank, epoch=epoch, fresh=place.fresh
            )
            for child, epoch in zip(self.datasets, epochs, strict=True)
        ]
        streams = [
            read(child, part, epoch)
            for child, part, epoch in zip(self.datasets, parts, epochs, strict=True)
        ]
        return streams, min(sum(segment.count for segment in part) for part in parts), done

    def _runs(
        self, streams: list[Iterator[Any]], steps: int | None, done: int, logical: int
    ) -> Iterator[tuple[int, list[Any]]]:
        zipped = zip(*streams, strict=False)  # the shortest ends the epoch
        for step, samples in enumerate(itertools.islice(zipped, steps), done):
            yield 0, [self._apply(samples, logical, step, self.current_epoch)]

    def _id_batches(
        self, streams: list[Iterator[Any]], steps: int | None, batch_size: int
    ) -> Iterator[BatchIds]:
        """The ids of the batches of ``steps`` steps of ``streams`` (arrays of sample ids).

        A step's samples are ``len(datasets)`` rows, one per dataset, in the datasets' order.
        """
        takers = [IdTaker(stream) for stream in streams]
        width = len(takers)
        left = math.inf if steps is None else steps
        while left > 0:
            wanted = int(min(batch_size, left))
            columns = [taker.take(wanted) for taker in takers]
            count = min(len(column) for column in columns)  # the shortest ends the epoch
            if count == 0:
                return
            ids = np.empty((count, width, 2), dtype=np.int64)
            ids[:, :, 0] = np.arange(width)
            ids[:, :, 1] = np.stack([column[:count] for column in columns], axis=1)
            yield ids.reshape(count * width, 2)
            if count < wanted:
                return
            left -= count

    def _apply(self, samples: tuple[Any, ...], logical: int, step: int, epoch: int) -> Any:
        if self.transform is None:
            return samples
        if self._arity == 1:
            return self.transform(samples)
        state = (self.seed, logical, step) if self.reset_rngs else (self.seed, logical, step, epoch)
        return self.transform(samples, _rngs(state))

    def __iter__(self) -> Iterator[Any]:
        topology, logical = logical_worker(self._batch_size, self._rotation)
        now = Placement(None, self.current_epoch, fresh=False, now=True)
        runs = self._runs(*self._streams(logical, topology, _samples, now), logical)
        ids = None
        if self._with_ids:
            streams, steps, _ = self._streams(logical, topology, _ids, now)
            ids = self._id_batches(streams, steps, self._batch_size)
        yield from self._stream(runs, self._batch_size, logical, topology, ids=ids)

    #: ``batch_plan`` names the batches' samples.
    plannable: ClassVar[bool] = True

    def batch_plan(
        self, worker: int, topology: Topology, *, rank: int, epoch: int, clock: Clock, fresh: bool
    ) -> tuple[int, Iterator[BatchIds]]:
        """The ids of the batches DataLoader worker ``worker`` of ``rank`` makes, reading none.

        A batch of ``n`` steps has ``n * len(datasets)`` ids: each step's samples, one per
        dataset, in the datasets' order. See ``StreamingDataset.batch_plan``.
        """
        del clock
        logical = (worker + (0 if fresh else self._rotation(topology))) % topology.num_workers
        place = Placement(rank, epoch, fresh=fresh, now=False)
        streams, steps, _ = self._streams(logical, topology, _ids, place)
        return logical, self._id_batches(streams, steps, topology.batch_size)

    def batch_counts(self, ids: BatchIds) -> list[int]:
        """What a batch of ``ids`` counts for: its steps."""
        return [len(ids) // len(self.datasets)]

    def read_ids(
        self, ids: Ids, *, worker: int = 0, first_step: int = 0, epoch: int = 1
    ) -> list[Any]:
        """The steps ``ids`` name (see ``batch_plan``), transformed as streaming transforms them.

        Args:
            ids: The ids of whole steps.
            worker: The logical worker that made them (it seeds the transform's ``rngs``).
            first_step: The worker's step of the first of them in the epoch.
            epoch: Their epoch.
        """
        width = len(self.datasets)
        steps = [ids[start : start + width] for start in range(0, len(ids), width)]
        with replaying(epoch):  # random transforms of the children draw as in ``epoch``
            return [
                self._apply(
                    tuple(self.datasets[position][index] for position, index in step),
                    worker,
                    first_step + number,
                    epoch,
                )
                for number, step in enumerate(steps)
            ]

    @property
    def num_sources(self) -> int:
        """One: a step takes an item of every dataset and counts once."""
        return 1

    # -- resume ----------------------------------------------------------------------------
    def _settings(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "cycle_length": repr(self.length),
            "resume": self.resume,
            "reset_rngs": self.reset_rngs,
        }

    def _items(self, counts: Sequence[int]) -> int | None:
        """Steps per epoch over all ranks: the shortest dataset's, or ``length`` per rank."""
        if self.length is None:
            return min(counts)
        if self.is_infinite():
            return None
        return int(self.length) * rank_and_world()[1]

    def _child_batch_size(self, position: int) -> int:
        return self._batch_size

    def _loads_children(self) -> bool:
        # Cycled datasets are placed by the step count; the others resume (maybe elastically)
        # from their own states.
        return not self.is_cycling()

    def loader_state(self, progress: LoaderProgress) -> dict[str, Any]:
        """The zip's part of the loader's state dict: the steps each worker took."""
        made = [count[0] for count in progress.counts]  # a step takes one sample of each dataset
        steps = self._counted("steps", made, progress)
        per_child = [made] * len(self.datasets)
        return self._state(per_child, progress, {"steps": steps})
