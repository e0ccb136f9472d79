"""What a loader does besides iterating: name a batch's samples, skip batches, replay one.

All three work from the plan (see ``provenance``), reading no sample they do not return.
``BatchControl`` is a part of ``StreamingDataLoader``; ``_Loader`` says what it uses of it.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from contextlib import AbstractContextManager, closing
from typing import Any, Protocol

from litdata.streaming.control.provenance import (
    clock_of_epoch,
    step_plan,
    unplannable,
    with_ids,
)
from litdata.streaming.epoch.plan import Topology
from litdata.streaming.epoch.topology import rank_and_world
from litdata.streaming.resume.position import LoaderPosition
from litdata.streaming.streamable import Streamable
from litdata.streaming.workers.batching import BatchIds, Ids, as_pairs

__all__ = ["BatchControl", "schedule_of"]


def schedule_of(dataset: object) -> object | None:
    """The ``WeightSchedule`` a dataset follows, if any (only mixtures have one)."""
    return getattr(dataset, "schedule", None)


class _Loader(Protocol):
    """What ``BatchControl`` uses of the loader it is part of."""

    num_workers: int
    samples_per_batch: int
    current_epoch: int
    _position: LoaderPosition
    _iterating: bool
    _provenance: bool
    _user_collate: Callable[[list[Any]], Any]
    dataset: Any

    def _own_settings(self) -> AbstractContextManager[Streamable]: ...

    def _begin(self, dataset: Streamable) -> None: ...

    def _count(self, worker: int, counts: Sequence[int]) -> None: ...

    def _plan_of_epoch(
        self, epoch: int | None, rank: int | None, until: int
    ) -> Generator[tuple[int, BatchIds], None, None]: ...

    def batch_ids(self, step: int, epoch: int | None = None, rank: int | None = None) -> Ids: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...

    def _state_dict(self) -> dict[str, Any]: ...

    def _load_state_dict(self, state: dict[str, Any]) -> None: ...


class BatchControl:
    """``batch_ids``, ``replay`` and ``skip`` of ``StreamingDataLoader``."""

    def batch_ids(
        self: _Loader, step: int, epoch: int | None = None, rank: int | None = None
    ) -> Ids:
        """The ``(dataset index, sample index)`` of each sample of a batch, reading none.

        Computed from the plan for an epoch read from its start with this loader's settings
        and topology (ranks, ``num_workers``, ``batch_size``), whatever epoch the loader is
        in. ``dataset.datasets[d][i]`` (``ds[i]`` for a single dataset) is the sample. A
        ``ParallelStreamingDataset``'s step has one id per dataset, in the datasets' order.

        Args:
            step: The batch's position in the epoch (from 0), on that rank.
            epoch: The epoch (from 1; default: the current one, or 1 before any).
            rank: The rank (default: this process's).

        Raises:
            IndexError: The epoch has no such step on that rank.
            ValueError: A negative step, an epoch below 1 or a rank outside the world.
            TypeError: The dataset has no plan of batches (one not made of streaming datasets).
        """
        for index, (_, ids) in enumerate(self._plan_of_epoch(epoch, rank, until=step)):
            if index == step:
                return as_pairs(ids)
        raise IndexError(f"Epoch {epoch or max(1, self.current_epoch)} has no step {step} here.")

    def _plan_of_epoch(
        self: _Loader, epoch: int | None, rank: int | None, until: int
    ) -> Generator[tuple[int, BatchIds], None, None]:
        own_rank, world = rank_and_world()
        rank = own_rank if rank is None else rank
        epoch = max(1, self.current_epoch) if epoch is None else epoch
        if until < 0 or epoch < 1 or not 0 <= rank < world:
            raise ValueError(
                f"No batch at step {until} of epoch {epoch} on rank {rank}: steps count from 0, "
                f"epochs from 1, and ranks are 0 to {world - 1}."
            )
        topology = Topology(world, max(1, self.num_workers), self.samples_per_batch)
        with self._own_settings() as dataset:
            clock = clock_of_epoch(
                dataset,
                topology,
                rank,
                epoch,
                self._position.epoch_clocks,
                schedule_of(dataset) is not None,
            )
            yield from step_plan(dataset, topology, rank=rank, epoch=epoch, clock=clock, fresh=True)

    def replay(self: _Loader, step: int, epoch: int | None = None) -> Any:
        """The batch of ``step`` in ``epoch`` (default: the current one), read again.

        The same samples in the same order, collated as the loader collates them (and with
        their ids when ``provenance=True``); see ``batch_ids``.
        """
        epoch = max(1, self.current_epoch) if epoch is None else epoch
        made: dict[int, int] = {}  # steps each worker made before this batch
        with closing(self._plan_of_epoch(epoch, None, until=step)) as plan:
            for index, (logical, ids) in enumerate(plan):
                if index == step:
                    break
                made[logical] = made.get(logical, 0) + sum(self.dataset.batch_counts(ids))
            else:
                raise IndexError(f"Epoch {epoch} has no step {step} here.")
        with self._own_settings() as dataset:
            samples = dataset.read_ids(
                as_pairs(ids), worker=logical, first_step=made.get(logical, 0), epoch=epoch
            )
        batch = self._user_collate(samples)
        return with_ids(batch, ids) if self._provenance else batch

    def skip(self: _Loader, n_batches: int) -> int:
        """Skip the next ``n_batches`` batches without reading them.

        Call it between loops: after ``load_state_dict``, before the first loop, or after a
        ``break`` (then the epoch that stopped continues after the skipped batches). The skip
        is part of ``state_dict()``: resuming after it gives the batches that running through
        would have given after the skipped ones.

        Returns:
            How many batches were skipped (fewer when the epoch ends first).

        Raises:
            ValueError: ``n_batches`` is negative.
            RuntimeError: A loop over this loader is running.
        """
        if n_batches < 0:
            raise ValueError(f"skip() takes a number of batches >= 0, got {n_batches}.")
        if self._iterating:
            raise RuntimeError(
                "skip() was called while a loop over the loader runs: break out of the loop, "
                "call skip(), then loop again (the epoch continues after the skipped batches)."
            )
        if not getattr(self.dataset, "plannable", False):
            raise unplannable(self.dataset)  # before anything changes
        if self._position.broken_off:  # continue the epoch that stopped, not a new one
            self.load_state_dict(self.state_dict())
            self._position.broken_off = False
        rank, world = rank_and_world()
        topology = Topology(world, max(1, self.num_workers), self.samples_per_batch)
        skipped = 0
        with self._own_settings() as dataset:
            self._begin(dataset)
            plan = step_plan(
                dataset,
                topology,
                rank=rank,
                epoch=self.current_epoch,
                clock=self._position.clock,
                fresh=False,
            )
            for logical, ids in plan:
                if skipped == n_batches:
                    break
                self._count(logical, dataset.batch_counts(ids))
                skipped += 1
            self._load_state_dict(self._state_dict())
        return skipped
