"""Resume state: what a dataset records in ``state_dict()`` and how a resumed epoch is planned.

The state is LitData's (so the keys users look at are there) plus a *history* of this epoch:
for each run that checkpointed it, the topology it ran with and how many items each of its
workers had consumed. Replaying the history on the epoch's first plan gives the items left;
the last run's workers continue them when the topology is unchanged (the next batch is exactly
the one that would have come), otherwise they are dealt to the new workers (elastic resume).
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from litdata.core.compact import chunks_fingerprint
from litdata.core.errors import LitdataWarning
from litdata.core.index import DatasetIndex
from litdata.streaming.plan import Plan, Topology, epoch_plan, redistribute, skip
from litdata.streaming.regions import Region, RegionIndex
from litdata.streaming.shuffles import CheckedShuffle

__all__ = [
    "STATE_VERSION",
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
        workers = run.topology.num_workers
        plan = [skip(segments, run.consumed[g % workers]) for g, segments in enumerate(plan)]
        following = history[step + 1].topology if step + 1 < len(history) else current
        if following != run.topology:
            plan = redistribute(plan, following, drop_last)
    return plan


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
