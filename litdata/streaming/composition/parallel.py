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
from typing import Any, ClassVar

import numpy as np
import torch

from litdata.streaming.batching import LoaderProgress
from litdata.streaming.composition.base import ComposedDataset
from litdata.streaming.dataset import StreamingDataset
from litdata.streaming.distributed import logical_worker, rank_and_world
from litdata.streaming.options import check_batch_size
from litdata.streaming.plan import Topology, budgets, skip

__all__ = ["ParallelStreamingDataset"]

Transform = Callable[..., Any]


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
    def _steps(self, num_workers: int) -> list[int]:
        """Steps each of this rank's workers takes per epoch."""
        rank, world = rank_and_world()
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
    def _cycle_epoch(self, cycle: int) -> int:
        """The order of pass ``cycle`` of a cycled dataset.

        Passes are numbered from the start of training with ``resume``, else from the start of
        each epoch; each pass reads the dataset in its own order.
        """
        if self.resume:
            return cycle + 1
        return self.current_epoch * 1_000_003 + cycle

    def _cycled(
        self, child: StreamingDataset, logical: int, topology: Topology, start: int
    ) -> Iterator[Any]:
        """A cycled child's samples for this worker, from position ``start`` of its passes."""
        size = child.shares(topology.num_workers, topology.batch_size)[logical]  # every pass
        if size == 0:
            return
        cycle, start = divmod(start, size)
        while True:
            child.current_epoch = self._cycle_epoch(cycle)
            segments = skip(child.worker_segments(logical, topology), start)
            yield from itertools.chain.from_iterable(child.runs(segments))
            start, cycle = 0, cycle + 1

    def _runs(self, logical: int, topology: Topology) -> Iterator[tuple[int, list[Any]]]:
        # Each dataset is split among the workers in whole batches, as LitData splits it.
        child_topology = Topology(topology.world_size, topology.num_workers, self._batch_size)
        exact = self._resume is not None and self._same_topology(topology)
        done = self._saved("steps", topology)[logical]
        streams: list[Iterator[Any]]
        if self.is_cycling():
            if self._resume is not None and not exact:
                raise RuntimeError(
                    "A cycling ParallelStreamingDataset resumes only with the same number of "
                    "workers, processes and batch size it was saved with."
                )
            per_epoch = None if self.is_infinite() else self._steps(topology.num_workers)[logical]
            first = (self.current_epoch - 1) * per_epoch if per_epoch and self.resume else 0
            streams = [
                self._cycled(child, logical, child_topology, first + done)
                for child in self.datasets
            ]
            steps = None if per_epoch is None else per_epoch - done
        else:  # each dataset resumes (exactly or elastically) from its own state
            parts = [child.worker_segments(logical, child_topology) for child in self.datasets]
            streams = [
                itertools.chain.from_iterable(child.runs(part))
                for child, part in zip(self.datasets, parts, strict=True)
            ]
            steps = min(sum(segment.count for segment in part) for part in parts)
        zipped = zip(*streams, strict=False)  # the shortest ends the epoch
        for step, samples in enumerate(itertools.islice(zipped, steps), done):
            yield 0, [self._apply(samples, logical, step)]

    def _apply(self, samples: tuple[Any, ...], logical: int, step: int) -> Any:
        if self.transform is None:
            return samples
        if self._arity == 1:
            return self.transform(samples)
        state = (
            (self.seed, logical, step)
            if self.reset_rngs
            else (self.seed, logical, step, self.current_epoch)
        )
        return self.transform(samples, _rngs(state))

    def __iter__(self) -> Iterator[Any]:
        topology, logical = logical_worker(self._batch_size, self._rotation)
        yield from self._stream(self._runs(logical, topology), self._batch_size, logical, topology)

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
