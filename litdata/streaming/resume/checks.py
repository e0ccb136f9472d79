"""Recognising what a state dict is before resuming from it, with messages that say what is wrong.

Users pass the wrong dict more often than a corrupt one: a dataset's state to a loader, a single
dataset's state to a mixture, an empty dict from a checkpoint that did not save it. Each gets a
message naming what was expected, what was found, and what to pass instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from litdata.streaming.resume.shapes import (
    CompositionState,
    DatasetState,
    LoaderState,
    check_shape,
    damaged,
)

__all__ = ["describe_state", "require_dataset_state", "require_loader_state"]

#: Keys only ``StreamingDataLoader.state_dict()`` has.
_LOADER_KEYS = ("dataset", "current_epoch", "num_samples_yielded")
#: Keys every ``StreamingDataset.state_dict()`` has.
_DATASET_KEYS = ("current_epoch", "history", "num_samples_yielded")
#: The composition keys and the classes that write them.
_COMPOSITIONS = {
    "__mixture__": "CombinedStreamingDataset",
    "__parallel__": "ParallelStreamingDataset",
}


def describe_state(state: Any) -> str:
    """What ``state`` looks like: whose ``state_dict()`` it came from, as far as one can tell."""
    if not isinstance(state, Mapping):
        return f"a {type(state).__name__}, not a dict"
    if not state:
        return "an empty dict"
    if all(key in state for key in _LOADER_KEYS):
        return "a StreamingDataLoader's state"
    for key, name in _COMPOSITIONS.items():
        if key in state:
            return f"the state of a {name} of {len(state) - 1} datasets"
    if all(key in state for key in _DATASET_KEYS):
        return "the state of a single StreamingDataset"
    return f"a dict with keys {sorted(map(str, state))[:8]}"


def require_loader_state(state: Any) -> LoaderState:
    """``state`` if it is a ``StreamingDataLoader.state_dict()``, its fields checked.

    Raises:
        ValueError: It is something else (the message says what it looks like), or a field
            has a type or value no ``state_dict()`` writes (the message names it).
    """
    loader = isinstance(state, Mapping) and all(key in state for key in _LOADER_KEYS)
    if loader and isinstance(state["dataset"], Mapping):
        check_shape(state, LoaderState)
        return cast(LoaderState, state)
    raise ValueError(
        f"StreamingDataLoader.load_state_dict() needs what StreamingDataLoader.state_dict() "
        f"returned (keys {list(_LOADER_KEYS)}), but it got {describe_state(state)}. Save "
        f"loader.state_dict() in your checkpoint and pass that back."
    )


def require_dataset_state(state: Any, expected: str, composition_key: str | None) -> None:
    """Check that ``state`` is the state of the kind of dataset resuming from it.

    Args:
        state: The dataset's part of a loader state (or a dataset's own ``state_dict()``).
        expected: What is resuming, for the message (``"a CombinedStreamingDataset of 2
            datasets"``).
        composition_key: The composition's key in its state, or ``None`` for a single dataset.

    Raises:
        ValueError: It is the state of another kind of dataset, or is missing keys, or a
            field has a type or value no ``state_dict()`` writes (the message names it).
    """
    if composition_key is None:
        ok = isinstance(state, Mapping) and all(key in state for key in _DATASET_KEYS)
    else:
        ok = isinstance(state, Mapping) and isinstance(state.get(composition_key), Mapping)
    if not ok:
        raise ValueError(
            f"This state dict is {describe_state(state)}, but it is loaded into {expected}. "
            f"Resume with the same kind of dataset it was saved from, or start a new epoch "
            f"without load_state_dict()."
        )
    if composition_key is None:
        _check_dataset_state(state)
    else:
        where = f"state[{composition_key!r}]"
        check_shape(state[composition_key], CompositionState, where)
        own = state[composition_key]
        if len(own["topology"]) != len(("world size", "workers", "batch size")):
            raise damaged(f"{where}['topology']", "is not [world size, workers, batch size]")
        if own["next_worker"] >= own["topology"][1]:
            raise damaged(f"{where}['next_worker']", "names a worker the run did not have")


def _check_dataset_state(state: Any) -> None:
    """A single dataset's state: its shape, and runs whose counts agree with their topology."""
    check_shape(state, DatasetState)
    checked = cast(DatasetState, state)
    if not checked["history"]:
        raise damaged("state['history']", "is empty")
    for position, run in enumerate(checked["history"]):
        if len(run["consumed"]) != run["num_workers"]:
            raise damaged(
                f"state['history'][{position}]['consumed']",
                f"has {len(run['consumed'])} counts for {run['num_workers']} workers",
            )
    if checked.get("next_worker", 0) >= checked["history"][-1]["num_workers"]:
        raise damaged("state['next_worker']", "names a worker the run did not have")
