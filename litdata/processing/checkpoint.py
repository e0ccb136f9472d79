"""Resumable ``optimize`` (``use_checkpoint=True``): what each worker has safely written.

``<output>/.checkpoints/config.json`` fingerprints the split of the inputs; each worker keeps
``checkpoint-<rank>.json`` up to date after every chunk it writes: the chunks so far and how many
of its inputs they cover. A resumed run skips those inputs and continues the chunk numbering,
so no sample is lost or written twice. The folder is removed when the run succeeds. Remote
outputs keep their checkpoints next to their chunks, so a run resumes from any machine.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from litdata.core.index import (
    ChunkEntry,
    DatasetConfig,
    DatasetIndex,
    parse_index,
)
from litdata.core.location import Location
from litdata.core.work import Item, Slices

__all__ = ["CHECKPOINT_DIR", "Checkpoint", "Checkpoints", "WorkerState"]

CHECKPOINT_DIR = ".checkpoints"


@dataclass(frozen=True)
class WorkerState:
    """What one worker had written when its checkpoint was last saved."""

    inputs_done: int
    chunks: tuple[ChunkEntry, ...]
    config: DatasetConfig


def _fingerprint(slices: Sequence[Sequence[Item]]) -> str:
    digest = hashlib.sha256()
    for part in slices:
        digest.update(f"|{len(part)}|".encode())
        for position, item in part:
            digest.update(f"{position}:{item!r};".encode())
    return digest.hexdigest()


class Checkpoint:
    """Saves one worker's progress (used inside the worker).

    Args:
        directory: The output's ``.checkpoints`` location.
        rank: The worker's rank.
    """

    def __init__(self, directory: Location, rank: int) -> None:
        self.directory = directory
        self.name = f"checkpoint-{rank}.json"

    def save(self, inputs_done: int, chunks: Sequence[ChunkEntry], config: DatasetConfig) -> None:
        """Record that ``inputs_done`` inputs are fully contained in ``chunks``.

        The file is the worker's index so far plus ``inputs_done``; the worker's chunks are
        numbered from 0 (checkpoints never append), so its next chunk is ``len(chunks)``.
        """
        state = DatasetIndex(config, tuple(chunks)).to_json()
        state["inputs_done"] = inputs_done
        self.directory.write(self.name, json.dumps(state).encode())


class Checkpoints:
    """The checkpoints of one output (used by the driver).

    Args:
        output: The dataset's location.
    """

    def __init__(self, output: Location) -> None:
        self.directory = output.child(CHECKPOINT_DIR)

    def exist(self) -> bool:
        """Whether a run left checkpoints here."""
        return self.directory.storage.exists(self.directory.join("config.json"))

    def saved_workers(self) -> int | None:
        """How many workers the saved run had (``None`` when there are no checkpoints).

        A cluster run resumes with its saved number of tasks, whatever the cluster's size now.
        """
        if not self.exist():
            return None
        return int(json.loads(self.directory.read("config.json"))["num_workers"])

    def remove(self) -> None:
        """Delete every checkpoint file."""
        for name in self.directory.storage.list(self.directory.url):
            self.directory.storage.delete(self.directory.join(name))
        local = self.directory.local_path
        if local is not None and os.path.isdir(local):
            os.rmdir(local)

    def load(self, slices: Sequence[Sequence[Item]]) -> dict[int, WorkerState]:
        """The saved state of each worker, after checking it matches this run's split.

        Starts a new checkpoint (and returns no state) when there is none.

        Raises:
            ValueError: The checkpoints were made for other inputs or another worker count.
        """
        expected = {"num_workers": len(slices), "fingerprint": _fingerprint(slices)}
        if not self.exist():
            self.directory.write("config.json", json.dumps(expected).encode())
            return {}
        saved = json.loads(self.directory.read("config.json"))
        if saved != expected:
            raise ValueError(
                f"The checkpoints in {self.directory} were made for other inputs or another "
                f"number of workers ({saved.get('num_workers')} then, {len(slices)} now), so "
                f"they cannot be resumed. Run with the same inputs and num_workers, or start "
                f"over with mode='overwrite'."
            )
        names = set(self.directory.storage.list(self.directory.url))
        states = {}
        for rank in range(len(slices)):
            name = f"checkpoint-{rank}.json"
            if name in names:
                raw = json.loads(self.directory.read(name))
                states[rank] = _state(raw, self.directory.join(name))
        return states

    def resume(self, slices: Slices) -> tuple[Slices, dict[int, WorkerState]]:
        """The inputs left to each worker, and each worker's saved state (see ``load``)."""
        states = self.load(slices.slices)
        remaining = [
            part[states[rank].inputs_done :] if rank in states else part
            for rank, part in enumerate(slices.slices)
        ]
        return Slices(remaining), states


def _state(raw: dict[str, Any], source: str) -> WorkerState:
    index = parse_index(raw, source)
    return WorkerState(int(raw["inputs_done"]), tuple(index.chunks), index.config)
