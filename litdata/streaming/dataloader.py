"""``StreamingDataLoader``: a ``DataLoader`` whose position in the epoch can be saved and resumed.

Batches are made inside the workers (each worker reads whole batches of its own items), so
the loader knows exactly how many samples of each dataset every worker has delivered;
``state_dict()`` records that, and ``load_state_dict()`` makes the next batch exactly the one
that would have come, or with another number of workers or processes, exactly the items not
seen yet.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from torch.utils.data import DataLoader

from litdata.core import cpu_stages
from litdata.core.errors import LitdataWarning
from litdata.core.registry import hooks
from litdata.engine.lifeline import Lifeline
from litdata.observe.profiling import (
    ProfileSettings,
    ProfilingCollate,
    WorkerStart,
    start_in_main,
    stop_in_main,
)
from litdata.streaming.control.batches import BatchControl, schedule_of
from litdata.streaming.control.provenance import with_ids
from litdata.streaming.control.provenance_log import ProvenanceLog
from litdata.streaming.epoch.agreement import check_ranks_agree
from litdata.streaming.epoch.schedule import Clock
from litdata.streaming.epoch.topology import rank_and_world
from litdata.streaming.loader_options import WORKER_MODES, check_loader_options
from litdata.streaming.reprs import length_of, render
from litdata.streaming.resume.checks import require_loader_state
from litdata.streaming.resume.position import LoaderPosition
from litdata.streaming.resume.shapes import LoaderState
from litdata.streaming.streamable import Streamable
from litdata.streaming.workers.arena.messages import ArenaSession
from litdata.streaming.workers.arena.slots import available
from litdata.streaming.workers.batching import BatchIds, Envelope, LoaderProgress
from litdata.streaming.workers.collate import litdata_collate
from litdata.streaming.workers.direct_queue import direct_context
from litdata.streaming.workers.interrupts import held_while_starting, let_in
from litdata.streaming.workers.threads import Pinning, ThreadWorkers
from litdata.streaming.workers.transport import unpack, widen_pipe

__all__ = ["WORKER_MODES", "Streamable", "StreamingDataLoader"]

#: What ``worker_mode`` takes: workers as processes (the default) or as threads.


def _unwrap_nothing(envelope: Any) -> Any:
    """The collate function torch applies to what workers yield: they yield finished batches."""
    return envelope


class StreamingDataLoader(DataLoader[Any], BatchControl):
    """A ``torch.utils.data.DataLoader`` for streaming datasets, with ``state_dict()``.

    Args:
        dataset: A ``StreamingDataset``, ``CombinedStreamingDataset`` or
            ``ParallelStreamingDataset``.
        batch_size: Samples per batch.
        num_workers: Workers (0: read in this process).
        worker_mode: ``"process"`` (default): workers are processes; ``"thread"``: threads of
            this process, reading the same batches in the same order (and resuming each
            other's ``state_dict``); they pay where reading releases the GIL (I/O,
            decompression, image decoders), see docs/tuning.md.
        shuffle: Overrides the dataset's ``shuffle`` when given, for this loader's epochs only
            (another loader over the same dataset keeps the dataset's own).
        drop_last: Overrides the dataset's ``drop_last`` when given, for this loader only.
        collate_fn: Makes a batch from a list of samples, inside the workers;
            ``litdata_collate`` (PyTorch's default collation, faster) by default.
        profile_batches: Trace this many batches of worker 0 (of the main process without
            workers) with ``torch.profiler``, or ``True`` for the whole epoch: writes
            ``result.json`` (open it in Perfetto) and ``result.txt`` into ``profile_dir``.
        profile_skip_batches: Batches to let pass before tracing.
        profile_dir: Where profiles go (default: the current directory).
        profile_cprofile: Also write cProfile statistics of worker 0
            (``cprofile_worker0.prof`` and ``.txt``) and of the training loop
            (``cprofile_main.prof`` and ``.txt``). Only global rank 0 profiles.
        provenance: Give each batch the ``(dataset index, sample index)`` of its samples, in
            order: a dict batch gets them under ``"__ids__"``, any other batch comes as
            ``(batch, ids)``. They are computed from the plan (see ``batch_ids``).
        provenance_dir: Log every batch's epoch, step and ids there, one file per rank
            (``rank-<R>.ids``); ``litdata provenance DIR --step N`` reads it back.
        transport: How worker processes hand batches over: ``"arena"`` (shared-memory slots
            each worker reuses, no copy of tensors and arrays; see
            ``litdata.streaming.workers.arena.slots``)
            or ``"pipe"`` (pickled through the result queue). Ignored without workers.
        **kwargs: Other ``DataLoader`` arguments (``pin_memory``, ``prefetch_factor``,
            ``multiprocessing_context``, ``worker_init_fn``...).

    Workers end within a second or so when the training process dies, whatever they are
    doing (see ``litdata.engine.lifeline``).
    """

    def __init__(
        self,
        dataset: Streamable,
        *args: Any,
        batch_size: int = 1,
        num_workers: int = 0,
        shuffle: bool | None = None,
        drop_last: bool | None = None,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        profile_batches: int | bool | None = None,
        profile_skip_batches: int = 0,
        profile_dir: str | os.PathLike[str] | None = None,
        profile_cprofile: bool = False,
        provenance: bool = False,
        provenance_dir: str | os.PathLike[str] | None = None,
        transport: str = "arena",
        worker_mode: str = "process",
        **kwargs: Any,
    ) -> None:
        kwargs = check_loader_options(
            dataset,
            args,
            kwargs,
            num_workers=num_workers,
            worker_mode=worker_mode,
            transport=transport,
            provenance=provenance,
            provenance_dir=provenance_dir,
        )
        self._shuffle, self._drop_last = shuffle, drop_last
        saved = dataset.settings()
        try:  # checks them now; they apply while this loader iterates or measures its epoch
            self._apply(dataset)
        finally:
            dataset.restore_settings(saved)
        # These stay on the dataset, as in LitData: len(dataset) counts this loader's epoch.
        dataset.set_batch_size(batch_size)
        dataset.set_num_workers(num_workers)
        self._collate: Callable[[list[Any]], Any] = collate_fn or litdata_collate
        self._user_collate = self._collate
        self._provenance = provenance
        self._provenance_dir = provenance_dir
        self._transport = transport
        self._profile = ProfileSettings.create(
            profile_batches, profile_skip_batches, profile_dir, profile_cprofile
        )
        if self._profile is not None:
            self._collate = ProfilingCollate(self._collate)
        self.samples_per_batch = batch_size
        self.worker_mode = worker_mode
        self.current_epoch = 0
        self._position = LoaderPosition()
        self._iterating = False
        iterable: Any = dataset  # an IterableDataset; Streamable says what else it does
        super().__init__(
            iterable,
            batch_size=None,
            num_workers=num_workers,
            collate_fn=_unwrap_nothing,
            **kwargs,
        )

    def __repr__(self) -> str:
        fields = [
            ("batch_size", self.samples_per_batch),
            ("num_workers", self.num_workers),
            ("batches", length_of(self)),
            ("epoch", self.current_epoch),
            ("profile", self._profile.describe() if self._profile else None),
        ]
        return render(type(self).__name__, fields, [self.dataset])

    @property
    def _streamable(self) -> Streamable:
        return self.dataset  # type: ignore[return-value]

    def _apply(self, dataset: Streamable) -> None:
        """Give ``dataset`` this loader's ``shuffle`` and ``drop_last``, where it has them."""
        if self._shuffle is not None:
            dataset.set_shuffle(self._shuffle)
        if self._drop_last is not None:
            dataset.set_drop_last(self._drop_last)

    @contextmanager
    def _own_settings(self) -> Iterator[Streamable]:
        """The dataset with this loader's ``shuffle``/``drop_last``, and its own ones after."""
        dataset = self._streamable
        saved = dataset.settings()
        self._apply(dataset)
        try:
            yield dataset
        finally:
            dataset.restore_settings(saved)

    def __len__(self) -> int:
        with self._own_settings() as dataset:
            return dataset.num_batches(self.num_workers, self.samples_per_batch)

    def _warn_if_empty(self, dataset: Streamable) -> None:
        """Say so when ``drop_last`` leaves no whole batch: an empty epoch is never silent."""
        items = dataset.agreement()["items"]
        try:
            if not items or dataset.num_batches(self.num_workers, self.samples_per_batch):
                return
        except TypeError:  # a mixture without a fixed length
            return
        workers = max(1, self.num_workers)
        warnings.warn(
            f"This epoch of StreamingDataLoader is empty: drop_last keeps only whole batches of "
            f"{self.samples_per_batch}, and the dataset's {items} samples, split over this "
            f"rank's {workers} worker(s) and every rank, leave none. Lower batch_size (or "
            f"num_workers), or pass drop_last=False to keep the partial batches.",
            LitdataWarning,
            stacklevel=3,
        )

    @property
    def num_samples_yielded(self) -> int:
        """Samples this loader has delivered in the current epoch (on this rank)."""
        return self._position.base_samples + sum(sum(counts) for counts in self._position.counts)

    @property
    def _threads(self) -> bool:
        """Whether this loader's workers are threads."""
        return self.worker_mode == "thread" and self.num_workers > 0

    def check_worker_number_rationality(self) -> None:
        """Torch's warning about more worker processes than cores; threads are no processes."""
        if not self._threads:
            super().check_worker_number_rationality()

    def _get_iterator(self) -> Any:
        if self._threads:
            return ThreadWorkers(
                self.dataset,
                self.num_workers,
                prefetch_factor=self.prefetch_factor or 2,
                worker_init_fn=self.worker_init_fn,
                pinning=Pinning.here() if self.pin_memory else None,
                timeout=self.timeout,
            )
        # The workers start now, from this thread; each holds a lifeline to this process
        # first, so that none outlives it, lets Ctrl-C in, then runs the user's
        # ``worker_init_fn``.
        init = self.worker_init_fn
        if self.num_workers > 0:
            rank = rank_and_world()[0]
            then = init if self._profile is None else WorkerStart(self._profile, init, rank)
            self.worker_init_fn = Lifeline.to_this_thread(then=functools.partial(let_in, then))
        chosen = self.multiprocessing_context
        if self.num_workers > 0:  # requests and results without feeder threads
            self.multiprocessing_context = direct_context(chosen or multiprocessing.get_context())
        try:
            with held_while_starting():  # Ctrl-C reaches the workers once they can take it
                iterator = super()._get_iterator()
        finally:
            self.worker_init_fn = init
            self.multiprocessing_context = chosen
        widen_pipe(getattr(iterator, "_worker_result_queue", None))
        return iterator

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]  # yields unwrapped batches
        with self._own_settings() as dataset:
            yield from cpu_stages.counted("hand-over", self._epoch(dataset))

    def _begin(self, dataset: Streamable) -> None:
        """Start the next run of the loader: a new epoch, or the rest of a resumed one."""
        if self._position.broken_off and getattr(dataset, "continues_after_break", False):
            self.load_state_dict(self.state_dict())  # pick the epoch up where it stopped
        self._position.clock = self._clock_now()
        if not (self._position.restoring and dataset.resuming):
            self.current_epoch += 1
            dataset.reset_state_dict()
            dataset.set_epoch(self.current_epoch)
            self._position.base_samples = 0
            self._position.epoch_clocks[self.current_epoch] = self._position.clock
        self._position.restoring = False
        self._position.epoch_finished = False
        workers = max(1, self.num_workers)
        self._position.counts = [[0] * dataset.num_sources for _ in range(workers)]
        self._position.batches = [0] * workers
        self._position.latest_worker = -1
        if schedule_of(dataset) is not None:
            dataset.set_clock(self._position.clock)  # type: ignore[attr-defined]  # a scheduled mixture

    def _count(self, worker: int, counts: Sequence[int]) -> None:
        """Count a batch of logical worker ``worker`` holding ``counts`` samples per dataset."""
        self._position.batches[worker] += 1
        mine = self._position.counts[worker]
        for position, count in enumerate(counts):
            mine[position] += count
        self._position.latest_worker = worker

    def _arena_session(self) -> ArenaSession | None:
        """This epoch's shared-memory slots, when batches leave worker processes through them."""
        if (
            self.num_workers > 0
            and not self._threads
            and self._transport == "arena"
            and available()
        ):
            return ArenaSession(self.num_workers, in_order=getattr(self, "in_order", True))
        return None

    def _epoch(self, dataset: Streamable) -> Iterator[Any]:
        """One epoch's batches (or the rest of one, when resuming)."""
        self._begin(dataset)
        self._position.broken_off = True  # until the epoch's last batch
        packed = self.num_workers > 0 and not self._threads  # only batches leaving a process
        check_ranks_agree(self, dataset.agreement)
        self._warn_if_empty(dataset)
        named = self._provenance or self._provenance_dir is not None
        rank = rank_and_world()[0]
        log = (
            None
            if self._provenance_dir is None
            else ProvenanceLog(self._provenance_dir, rank, dataset.num_sources)
        )
        epoch_start = self._position.epoch_clocks.get(self.current_epoch, self._position.clock)
        step = self._position.clock.step - epoch_start.step  # of the next batch, in the epoch
        arena = self._arena_session()
        collate = self._collate if arena is None else arena.collate(self._collate)
        dataset.set_collate(collate, ids=named)  # batches in the workers, while we iterate
        base: Iterator[Any] = super().__iter__()  # the workers start here
        messages = base if arena is None else arena.unbundle(base)  # a batch per envelope
        envelopes = hooks.wrap_batches(messages, self.current_epoch)  # observers, once per epoch
        profiler = (
            None
            if self._profile is None  # thread workers run in this process: profiled with it
            else start_in_main(self._profile, 0 if self._threads else self.num_workers, rank)
        )
        self._iterating = True
        try:
            for envelope in envelopes:
                if not isinstance(envelope, Envelope):
                    raise TypeError("StreamingDataLoader's dataset must yield Envelope batches.")
                self._count(envelope.worker, envelope.counts)
                batch = unpack(envelope.data) if packed and arena is None else envelope.data
                yield self._named(batch, envelope.ids, log, step)
                step += 1
        finally:
            self._iterating = False
            if log is not None:
                log.close()
            dataset.set_collate(None)
            close = getattr(envelopes, "close", None) if envelopes is not messages else None
            if close is not None:  # a loop that broke off: observers end the epoch now
                close()
            if isinstance(base, ThreadWorkers):  # no thread outlives its epoch
                base.close()
            if self._profile is not None:
                stop_in_main(profiler)
            if arena is not None:
                arena.close(base)
        self._position.epoch_finished = True
        self._position.broken_off = False
        dataset.reset_state_dict()

    def _named(self, batch: Any, ids: BatchIds | None, log: ProvenanceLog | None, step: int) -> Any:
        """``batch`` as delivered: its ids (the workers named them) logged, and attached."""
        if ids is None:
            return batch
        if log is not None:
            log.write(self.current_epoch, step, ids)
        return with_ids(batch, ids) if self._provenance else batch

    def _tracks_clock(self) -> bool:
        """Whether the state records the clock: for a schedule, or to number logged steps."""
        return schedule_of(self._streamable) is not None or self._provenance_dir is not None

    def _clock_now(self) -> Clock:
        """Where training stands: the run's starting clock plus the batches delivered since."""
        world = rank_and_world()[1]
        position = self._position
        return position.clock.after(sum(position.batches), self.samples_per_batch, world)

    def state_dict(self) -> LoaderState:
        """Where this epoch stands; pass it to ``load_state_dict`` to continue from here."""
        with self._own_settings():
            return self._state_dict()

    def _state_dict(self) -> LoaderState:
        workers = max(1, self.num_workers)
        sources = self._streamable.num_sources
        counts = self._position.counts or [[0] * sources for _ in range(workers)]
        state: LoaderState = {
            "dataset": dict(
                self._streamable.loader_state(
                    LoaderProgress(
                        counts,
                        self.num_workers,
                        self.samples_per_batch,
                        (self._position.latest_worker + 1) % workers,
                        self._position.batches or [0] * workers,
                    )
                )
            ),
            "current_epoch": self.current_epoch,
            "num_samples_yielded": self.num_samples_yielded,
            "num_samples_per_worker": {worker: list(c) for worker, c in enumerate(counts)},
            "latest_worker_idx": self._position.latest_worker,
            "epoch_finished": self._position.epoch_finished,
        }
        if self._tracks_clock():  # where training stands: a schedule's or the log's steps
            state["clock"] = self._clock_now().to_json()
            epoch_clock = self._position.epoch_clocks.get(self.current_epoch, Clock())
            state["epoch_clock"] = epoch_clock.to_json()
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue from ``state`` at the next iteration.

        A state saved once an epoch was finished (as Lightning checkpoints at the end of an
        epoch), or after its last batch, continues with the whole next epoch.

        Raises:
            ValueError: The state belongs to another dataset or other settings, or it records
                more samples than the dataset has.
        """
        with self._own_settings():
            self._load_state_dict(require_loader_state(state))

    def _load_state_dict(self, state: LoaderState) -> None:
        samples = int(state["num_samples_yielded"])
        length = self._streamable.agreement()["items"]
        if length is not None and samples > length:
            raise ValueError(
                f"The state records {samples} samples yielded, more than this dataset has "
                f"({length}): it belongs to another dataset."
            )
        self.current_epoch = int(state["current_epoch"])
        if "clock" in state:  # a scheduled mixture's position in training
            self._position.clock = Clock.from_json(state["clock"])
            self._position.epoch_clocks[self.current_epoch] = Clock.from_json(state["epoch_clock"])
        else:
            self._position.clock = self._clock_now()
        # What this loader delivered before is in the state now: count from it afresh.
        self._position.batches, self._position.counts = [], []
        self._position.latest_worker = int(state.get("latest_worker_idx", -1))
        if state.get("epoch_finished"):  # saved at the end of an epoch: the next one is whole
            self._streamable.reset_state_dict()
            self._position.restoring = False
            return
        self._streamable.load_state_dict(state["dataset"])  # checks it is this dataset's state
        if samples == 0 and self.current_epoch == 0:
            # Saved before any iteration: nothing to resume, the next iteration is the first
            # epoch, and ``restore`` stays False as in LitData.
            self._streamable.reset_state_dict()
            self._position.restoring = False
            return
        per_epoch = length_of(self._streamable)
        if isinstance(per_epoch, int) and samples >= per_epoch:
            # Saved after the epoch's last batch, before the loop saw its end: what comes
            # next is the next epoch, as in LitData, not an empty rest of this one.
            self._streamable.reset_state_dict()
            self._position.restoring = False
            return
        self._position.base_samples = samples
        self._position.restoring = True

    @property
    def restore(self) -> bool:
        """Whether a loaded state will shape the next iteration (LitData's ``restore``)."""
        return self._position.restoring
