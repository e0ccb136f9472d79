"""A tampered resume state: a clear error naming the field, never samples served twice or dropped.

A checkpoint is a file like any other: edited by hand, damaged on disk, or written by someone
else's script. Each test saves a real loader state mid-epoch (2 worker processes), changes one
field the way such a file would, and loads it into a fresh loader: the load raises a
``ValueError`` naming the field's path, before any worker starts, so no sample is delivered
twice, dropped, or met by a ``ZeroDivisionError`` inside a worker.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
import torch

import litdata as ld

ITEMS, BATCH, WORKERS, TAKEN = 400, 10, 2, 14


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[str, dict[str, Any]]:
    """A 400-sample dataset and a loader state saved after 14 of its 40 batches."""
    folder = str(tmp_path_factory.mktemp("tamper") / "ds")
    ld.write_dataset(({"i": i} for i in range(ITEMS)), folder, chunk_size=50)
    loader = _loader(folder)
    for step, _ in enumerate(loader):
        if step + 1 == TAKEN:
            break
    return folder, loader.state_dict()


def _loader(folder: str) -> ld.StreamingDataLoader:
    dataset = ld.StreamingDataset(folder, shuffle=True, seed=3)
    return ld.StreamingDataLoader(dataset, batch_size=BATCH, num_workers=WORKERS)


def _dataset_state(state: dict[str, Any]) -> dict[str, Any]:
    return state["dataset"]


def _runs(state: dict[str, Any]) -> list[dict[str, Any]]:
    return state["dataset"]["history"]


TAMPERINGS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "a negative consumed count": (
        lambda s: _runs(s)[0]["consumed"].__setitem__(0, -70),
        "['history'][0]['consumed'][0] is -70",
    ),
    "a consumed count beyond the worker's share": (
        lambda s: _runs(s)[0]["consumed"].__setitem__(1, 10_000),
        "['history'][0]['consumed'][1] is 10000, more than",
    ),
    "zero workers in a run": (
        lambda s: _runs(s)[0].__setitem__("num_workers", 0),
        "['history'][0]['num_workers'] is 0",
    ),
    "a zero batch size in a run": (
        lambda s: _runs(s)[0].__setitem__("batch_size", 0),
        "['history'][0]['batch_size'] is 0",
    ),
    "epoch_finished as the string 'false'": (
        lambda s: s.__setitem__("epoch_finished", "false"),
        "['epoch_finished'] is 'false', not True or False",
    ),
    "a count that is a float": (
        lambda s: s.__setitem__("num_samples_yielded", 140.0),
        "['num_samples_yielded'] is 140.0, not an integer",
    ),
    "a run with fewer counts than workers": (
        lambda s: _runs(s)[0]["consumed"].pop(),
        "['history'][0]['consumed'] has 1 counts for 2 workers",
    ),
    "a next worker the run did not have": (
        lambda s: _dataset_state(s).__setitem__("next_worker", 5),
        "['next_worker'] names a worker",
    ),
    "an empty history": (
        lambda s: _dataset_state(s).__setitem__("history", []),
        "['history'] is empty",
    ),
    "a seed that is a string": (
        lambda s: _dataset_state(s).__setitem__("seed", "3"),
        "['seed'] is '3', not an integer",
    ),
}


@pytest.mark.fault("tampered resume state")
@pytest.mark.parametrize("tampering", sorted(TAMPERINGS))
def test_a_tampered_state_is_refused_naming_the_field(saved, tampering, record):
    folder, state = saved
    edit, field = TAMPERINGS[tampering]
    tampered = copy.deepcopy(state)
    edit(tampered)
    loader = _loader(folder)
    record.start()
    with pytest.raises(ValueError, match="edited or damaged") as raised:
        loader.load_state_dict(tampered)
    record.failed()
    assert field in str(raised.value)
    # The loader is left as fresh: a whole epoch, every sample once.
    seen = [int(i) for batch in loader for i in batch["i"]]
    assert sorted(seen) == list(range(ITEMS))
    record(f"ValueError at load naming the field ({tampering})")


def test_the_untampered_state_resumes_exactly_after_a_json_round_trip(saved):
    """The checks accept what state_dict() writes, also after JSON (keys become strings)."""
    folder, state = saved
    first = _loader(folder)
    before = [int(i) for step, batch in enumerate(first) if step < TAKEN for i in batch["i"]]
    loader = _loader(folder)
    loader.load_state_dict(json.loads(json.dumps(state)))
    rest = [int(i) for batch in loader for i in batch["i"]]
    assert len(before) == TAKEN * BATCH
    assert sorted(before + rest) == list(range(ITEMS))


def test_numpy_and_torch_integers_are_counts(saved):
    """A state whose counts became numpy or tensor scalars (some checkpoint code does) loads."""
    folder, state = saved
    converted = copy.deepcopy(state)
    converted["num_samples_yielded"] = torch.tensor(state["num_samples_yielded"]).numpy()[()]
    loader = _loader(folder)
    loader.load_state_dict(converted)
    rest = [int(i) for batch in loader for i in batch["i"]]
    assert len(rest) == ITEMS - TAKEN * BATCH
