"""Stopping a real loader and starting a new one from its state_dict."""

import json

import pytest

import litdata as ld
from litdata.core.errors import LitdataWarning


def _loader(path, workers, batch=16, **options):
    options.setdefault("shuffle", True)
    return ld.StreamingDataLoader(
        ld.StreamingDataset(path, **options), batch_size=batch, num_workers=workers
    )


def _take(loader, count=None):
    """Read ``count`` batches (or all); return their ids and the state after them."""
    out = []
    for batch in loader:
        out.append([int(i) for i in batch["id"]])
        if count is not None and len(out) == count:
            return out, json.loads(json.dumps(loader.state_dict()))  # a state survives JSON
    return out, None


@pytest.mark.parametrize("workers", [0, 1, 2])
@pytest.mark.parametrize("stop", [1, 7, 30, 62])
def test_same_topology_resumes_with_exactly_the_next_batch(numbers, workers, stop):
    whole, _ = _take(_loader(numbers, workers))
    head, state = _take(_loader(numbers, workers), stop)
    resumed = _loader(numbers, workers)
    resumed.load_state_dict(state)
    tail, _ = _take(resumed)
    assert head + tail == whole
    assert resumed.current_epoch == 1
    next_epoch, _ = _take(resumed)  # the following epoch is a fresh, complete one
    assert sorted(i for b in next_epoch for i in b) == list(range(1000))
    assert next_epoch != whole


def test_resuming_twice_continues_the_count(numbers):
    whole, _ = _take(_loader(numbers, 2))
    first, state = _take(_loader(numbers, 2), 5)
    second_loader = _loader(numbers, 2)
    second_loader.load_state_dict(state)
    second, state = _take(second_loader, 10)
    assert state["num_samples_yielded"] == 15 * 16
    third_loader = _loader(numbers, 2)
    third_loader.load_state_dict(state)
    third, _ = _take(third_loader)
    assert first + second + third == whole


@pytest.mark.parametrize(("before", "after"), [(2, 1), (2, 3), (1, 2), (3, 0)])
@pytest.mark.parametrize("stop", [3, 20])
def test_changing_workers_yields_exactly_the_unseen_items(numbers, before, after, stop):
    head, state = _take(_loader(numbers, before), stop)
    resumed = _loader(numbers, after)
    resumed.load_state_dict(state)
    tail, _ = _take(resumed)
    seen = [i for batch in head for i in batch]
    rest = [i for batch in tail for i in batch]
    assert len(set(seen) | set(rest)) == len(seen) + len(rest)  # no sample twice
    assert sorted(seen + rest) == list(range(1000))  # none lost


def test_elastic_twice(numbers):
    head, state = _take(_loader(numbers, 2), 6)
    middle_loader = _loader(numbers, 3)
    middle_loader.load_state_dict(state)
    middle, state = _take(middle_loader, 9)
    last_loader = _loader(numbers, 1)
    last_loader.load_state_dict(state)
    last, _ = _take(last_loader)
    everything = [i for part in (head, middle, last) for batch in part for i in batch]
    assert sorted(everything) == list(range(1000))


def _rank_run(monkeypatch, path, world, rank, workers, count=None, state=None, batch=10):
    monkeypatch.setenv("WORLD_SIZE", str(world))
    monkeypatch.setenv("RANK", str(rank))
    loader = _loader(path, workers, batch=batch)
    if state is not None:
        loader.load_state_dict(state)
    return _take(loader, count)


@pytest.mark.parametrize("new_world", [1, 3])
def test_changing_world_size_yields_exactly_the_unseen_items(numbers, monkeypatch, new_world):
    seen, states = [], []
    for rank in range(2):  # two ranks in lockstep, 12 batches each, then the job stops
        head, state = _rank_run(monkeypatch, numbers, 2, rank, 2, count=12)
        seen += [i for batch in head for i in batch]
        states.append(state)
    rest = []
    for rank in range(new_world):  # every rank resumes from rank 0's state, as trainers do
        tail, _ = _rank_run(monkeypatch, numbers, new_world, rank, 1, state=states[0])
        rest += [i for batch in tail for i in batch]
    assert len(set(seen) | set(rest)) == len(seen) + len(rest)
    missing = set(range(1000)) - set(seen) - set(rest)
    # drop_last (on under DDP) may drop less than one batch per rank of the old and new epochs
    assert len(missing) < 2 * 10 + new_world * 10


def test_state_dict_has_litdatas_keys(numbers):
    _, state = _take(_loader(numbers, 2), 3)
    assert {"dataset", "current_epoch", "num_samples_yielded", "latest_worker_idx"} <= set(state)
    assert {
        "num_samples_yielded",
        "num_workers",
        "batch_size",
        "current_epoch",
        "input_dir_path",
        "shuffle",
        "seed",
        "drop_last",
        "world_size",
        "num_canonical_nodes",
        "item_loader",
    } <= set(state["dataset"])
    assert state["num_samples_yielded"] == 48


def test_resuming_a_changed_dataset_is_an_error(numbers, tmp_path):
    _, state = _take(_loader(numbers, 1), 3)
    ld.write_dataset(({"id": i, "x": [0.0] * 4} for i in range(900)), tmp_path, chunk_size=64)
    other = _loader(tmp_path, 1)
    with pytest.raises(ValueError, match="different dataset"):
        other.load_state_dict(state)


def test_resuming_with_other_settings(numbers):
    _, state = _take(_loader(numbers, 1), 3)
    with pytest.raises(ValueError, match="seed=42, but the dataset has seed=1"):
        _loader(numbers, 1, seed=1).load_state_dict(state)
    with pytest.raises(ValueError, match="shuffle=True"):
        _loader(numbers, 1, shuffle=False).load_state_dict(state)
    forced = _loader(numbers, 1, seed=1, force_override_state_dict=True)
    with pytest.warns(LitdataWarning, match="Keeping 1"):
        forced.load_state_dict(state)
    rest, _ = _take(forced)
    assert len([i for b in rest for i in b]) == 1000 - 48


def test_a_state_from_a_bigger_dataset_is_refused(numbers):
    _, state = _take(_loader(numbers, 1), 3)
    state["num_samples_yielded"] = 10**6
    with pytest.raises(ValueError, match="more than this dataset has"):
        _loader(numbers, 1).load_state_dict(state)
