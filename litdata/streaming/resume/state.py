"""Resume state: what a dataset records in ``state_dict()`` and how a resumed epoch is planned.

The state is LitData's (so the keys users look at are there) plus a *history* of this epoch:
for each run that checkpointed it, the topology it ran with and how many items each of its
workers had consumed. Replaying the history on the epoch's first plan gives the items left;
the last run's workers continue them when the topology is unchanged (the next batch is exactly
the one that would have come), otherwise they are dealt to the new workers (elastic resume).
``Resumable`` gives ``StreamingDataset`` its ``state_dict``, ``load_state_dict`` and the
settings ranks agree on.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from litdata.core.compact import chunks_fingerprint
from litdata.core.errors import LitdataWarning
from litdata.core.formats import ItemLoader
from litdata.core.index import DatasetIndex
from litdata.engine.reader import DatasetReader
from litdata.streaming.epoch.plan import Plan, Segment, Topology, epoch_plan, redistribute, skip
from litdata.streaming.epoch.regions import Region, RegionIndex
from litdata.streaming.epoch.shuffles import CheckedShuffle, ShuffleSetting, describe
from litdata.streaming.epoch.topology import rank_and_world
from litdata.streaming.resume.checks import require_dataset_state
from litdata.streaming.resume.shapes import DatasetState, Settings, damaged
from litdata.streaming.workers.batching import LoaderProgress

__all__ = [
    "STATE_VERSION",
    "Resumable",
    "Run",
    "dataset_identity",
    "legacy_identity",
    "plan_with_history",
    "split_consumed",
    "validate_state",
]

STATE_VERSION = 2


@dataclass(frozen=True)
class Run:
    """One run of an epoch: its topology and the items each of its workers consumed."""

    topology: Topology
    consumed: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        """The run as stored in a state dict."""
        return {
            "world_size": self.topology.world_size,
            "num_workers": self.topology.num_workers,
            "batch_size": self.topology.batch_size,
            "consumed": list(self.consumed),
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Run:
        """Parse a stored run."""
        topology = Topology(int(raw["world_size"]), int(raw["num_workers"]), int(raw["batch_size"]))
        return cls(topology, tuple(int(count) for count in raw["consumed"]))


def dataset_identity(index: DatasetIndex, regions: RegionIndex) -> str:
    """A fingerprint of the dataset's contents and of the items this view reads.

    Computed on arrays (the compact index's columns, the regions'): milliseconds for a
    million chunks.
    """
    digest = hashlib.sha256(json.dumps(index.config.core(), sort_keys=True).encode())
    digest.update(chunks_fingerprint(index.chunks))
    count = len(regions.sizes)
    chunks = np.arange(count, dtype=np.int64) if regions.chunks is None else regions.chunks
    starts = np.zeros(count, dtype=np.int64) if regions.starts is None else regions.starts
    for column in (chunks, starts, regions.sizes):
        digest.update(np.ascontiguousarray(column, "<i8").tobytes())
    return "v2-" + digest.hexdigest()[:16]


def legacy_identity(index: DatasetIndex, regions: Sequence[Region]) -> str:
    """The fingerprint state dicts of litdata before 2026-12 recorded (one entry at a time)."""
    content = {
        "config": index.config.core(),
        "chunks": [[c.filename, c.chunk_size, c.chunk_bytes, c.checksum] for c in index.chunks],
        "regions": [[r.chunk, r.start, r.end] for r in regions],
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]


def split_consumed(samples: int, topology: Topology) -> tuple[int, ...]:
    """How ``samples`` yielded on a rank were spread over its workers by the DataLoader.

    Whole rounds of one batch per worker first; then one batch each, in turn, from worker 0;
    a final partial batch goes to the worker whose turn came next.
    """
    workers, batch = topology.num_workers, topology.batch_size
    rounds, rest = divmod(samples, workers * batch)
    counts = [rounds * batch] * workers
    worker = 0
    while rest:
        take = min(batch, rest)
        counts[worker] += take
        rest -= take
        worker += 1
    return tuple(counts)


def plan_with_history(
    sizes: Sequence[int] | npt.NDArray[np.int64],
    history: Sequence[Run],
    current: Topology,
    *,
    seed: int,
    epoch: int,
    drop_last: bool,
    strategy: CheckedShuffle,
) -> Plan:
    """The plan of the rest of an epoch that ``history`` has partly consumed.

    Without history this is the epoch's fresh plan for ``current``.
    """
    first = history[0].topology if history else current
    plan = epoch_plan(sizes, first, seed=seed, epoch=epoch, drop_last=drop_last, strategy=strategy)
    for step, run in enumerate(history):
        _check_consumed(plan, run, step)
        workers = run.topology.num_workers
        plan = [skip(segments, run.consumed[g % workers]) for g, segments in enumerate(plan)]
        following = history[step + 1].topology if step + 1 < len(history) else current
        if following != run.topology:
            plan = redistribute(plan, following, drop_last)
    return plan


def _check_consumed(plan: Plan, run: Run, step: int) -> None:
    """A run cannot have consumed more than its workers had (else items would be dropped)."""
    workers = run.topology.num_workers
    if len(plan) % workers:
        raise damaged(f"state['history'][{step}]", "has a topology this epoch's plan does not")
    for worker, consumed in enumerate(run.consumed):
        had = max(sum(s.count for s in segments) for segments in plan[worker::workers])
        if consumed > had:
            raise damaged(
                f"state['history'][{step}]['consumed'][{worker}]",
                f"is {consumed}, more than the {had} items that worker had",
            )


def validate_state(
    state: Mapping[str, Any],
    current: Mapping[str, Any],
    force: bool,
    legacy: Callable[[], str] | None = None,
) -> None:
    """Check that a state dict can resume this dataset.

    Args:
        state: The saved state.
        current: The same keys for this dataset (``identity``, ``seed``, ``shuffle``...).
        force: ``force_override_state_dict``: differing settings only warn, this dataset's win.
        legacy: The dataset's identity as earlier versions computed it (asked only for a
            state dict whose identity is not the current one).

    Raises:
        ValueError: The dataset's contents differ (never overridable), or a setting differs
            and ``force`` is false.
    """
    saved = state.get("identity")
    if (
        "identity" in current
        and saved not in (None, current["identity"])
        and (legacy is None or str(saved).startswith("v2-") or saved != legacy())
    ):
        raise ValueError(
            "This state_dict was saved while reading a different dataset (or a different "
            "subset of it): its contents changed since. Resume with the dataset it was saved "
            "with, or start a new epoch without load_state_dict()."
        )
    for key, value in current.items():
        if key == "identity" or key not in state or state[key] == value:
            continue
        message = (
            f"The state_dict was saved with {key}={state[key]!r}, but the dataset has "
            f"{key}={value!r}."
        )
        if not force:
            raise ValueError(
                f"{message} Resume with the same setting, or pass "
                f"force_override_state_dict=True to keep the new one."
            )
        warnings.warn(
            f"{message} Keeping {value!r} (force_override_state_dict).",
            LitdataWarning,
            stacklevel=3,
        )


class Resumable:
    """What a streaming dataset adds to record and resume its epoch: ``state_dict`` and its kin.

    Needs the dataset's reader (``_reader``), its items (``_regions``), its settings and its
    shuffle ``strategy``; keeps a loaded state dict in ``_resume``.
    """

    _reader: DatasetReader
    _regions: RegionIndex
    _resume: dict[str, Any] | None
    _identity: str | None
    item_loader: ItemLoader | None
    shuffle: ShuffleSetting
    drop_last: bool | None
    seed: int
    current_epoch: int
    cache_dir: str | None
    num_canonical_nodes: int | None
    force_override_state_dict: bool

    if TYPE_CHECKING:

        @property
        def strategy(self) -> CheckedShuffle:
            """The dataset's shuffle strategy."""
            ...

        def worker_segments(
            self, logical: int, topology: Topology, *, rank: int | None = None
        ) -> Sequence[Segment]:
            """The segments worker ``logical`` of a rank reads this epoch."""
            ...

    @property
    def identity(self) -> str:
        """A fingerprint of the dataset's contents and of the items this view reads."""
        if self._identity is None:
            self._identity = dataset_identity(self._reader.index, self._regions)
        return self._identity

    def rotation(self, topology: Topology) -> int:
        """How far to rotate worker ids so a same-topology resume continues the round robin."""
        resume = self._resume or {}
        history = resume.get("history")
        if history and Run.from_json(history[-1]).topology == topology:
            return int(resume.get("next_worker", 0))
        return 0

    def reset_state_dict(self) -> None:
        """Forget a loaded state dict (the next iteration starts a fresh epoch)."""
        self._resume = None

    @property
    def num_sources(self) -> int:
        """One: the loader counts this dataset's samples."""
        return 1

    @property
    def resuming(self) -> bool:
        """Whether a loaded state dict will shape the next iteration."""
        return self._resume is not None

    def agreement(self) -> dict[str, Any]:
        """What every rank must agree on before reading (checked by the loader under DDP)."""
        return {"items": len(self._regions), **self._settings()}

    def _settings(self) -> Settings:
        return {
            "identity": self.identity,
            "seed": self.seed,
            "shuffle": self.shuffle
            if isinstance(self.shuffle, bool | str)
            else describe(self.strategy),
            "drop_last": self.drop_last,
            "item_loader": self.item_loader.state_dict() if self.item_loader else {},
        }

    def state_dict(
        self,
        num_samples_yielded: int,
        num_workers: int,
        batch_size: int,
        samples_per_worker: Sequence[int] | None = None,
        next_worker: int = 0,
    ) -> DatasetState:
        """The state to resume this epoch after ``num_samples_yielded`` samples on this rank.

        Args:
            num_samples_yielded: Samples this rank's loader yielded this epoch.
            num_workers: The loader's workers (0 means the main process).
            batch_size: The loader's batch size.
            samples_per_worker: What each worker yielded, when known (``StreamingDataLoader``
                knows); otherwise derived from the DataLoader's round-robin order.
            next_worker: The worker whose batch the loader would have taken next.
        """
        _, world = rank_and_world()
        topology = Topology(world, max(1, num_workers), batch_size)
        consumed = (
            tuple(samples_per_worker)
            if samples_per_worker is not None
            else (split_consumed(num_samples_yielded, topology))
        )
        history = list(self._resume["history"]) if self._resume is not None else []
        if history and Run.from_json(history[-1]).topology == topology:
            previous = Run.from_json(history.pop())  # this run continued that one's workers
            consumed = tuple(a + b for a, b in zip(previous.consumed, consumed, strict=True))
        history.append(Run(topology, consumed).to_json())
        first_world = Run.from_json(history[0]).topology.world_size
        local = self._reader.location.local_path
        return {
            **self._settings(),
            "num_samples_yielded": num_samples_yielded,
            "num_workers": topology.num_workers,
            "batch_size": batch_size,
            "current_epoch": self.current_epoch,
            "input_dir_path": local if local is not None else str(self._reader.cache.directory),
            "input_dir_url": None if local is not None else self._reader.root,
            "cache_dir_path": self.cache_dir,
            "world_size": world,
            "state_version": STATE_VERSION,
            "num_canonical_nodes": self.num_canonical_nodes or first_world,
            "history": history,
            "next_worker": next_worker,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Resume from ``state`` at the next iteration.

        Raises:
            ValueError: The state belongs to another dataset, or to other settings (see
                ``force_override_state_dict``).
        """
        require_dataset_state(state, "a StreamingDataset", None)
        validate_state(
            state,
            self._settings(),
            self.force_override_state_dict,
            lambda: legacy_identity(self._reader.index, self._regions.regions),
        )
        previous = self._resume, self.current_epoch
        self._resume, self.current_epoch = dict(state), int(state["current_epoch"])
        # Plan the epoch through every saved run now, in the training process: a count
        # beyond what a worker had is an error here, not items dropped inside the workers.
        try:
            self.worker_segments(0, Run.from_json(state["history"][-1]).topology, rank=0)
        except ValueError:
            self._resume, self.current_epoch = previous
            raise

    def loader_state(self, progress: LoaderProgress) -> DatasetState:
        """``state_dict`` from the loader's per-worker counts (one dataset: one count each)."""
        per_worker = [count[0] for count in progress.counts]
        return self.state_dict(
            sum(per_worker),
            progress.num_workers,
            progress.batch_size,
            per_worker,
            progress.next_worker,
        )
