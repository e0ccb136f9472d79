"""loader.skip(n) (part of state_dict) and loader.replay(step): exact, from the plan."""

import pytest
import torch

import litdata as ld


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    a = tmp_path_factory.mktemp("a")
    b = tmp_path_factory.mktemp("b")
    ld.write_dataset(({"id": i, "x": torch.full((2,), i)} for i in range(700)), a, chunk_size=64)
    ld.write_dataset(
        ({"id": 100_000 + i, "x": torch.full((2,), -1)} for i in range(400)), b, chunk_size=50
    )
    return a, b


def plain(pair):
    return ld.StreamingDataset(pair[0], shuffle=True, transform=lambda s: {**s, "y": s["id"] * 2})


def mixture(pair, **options):
    children = [ld.StreamingDataset(p, shuffle=True) for p in pair]
    options = {"weights": [0.5, 0.5], "iterate_over_all": False, **options}
    return ld.CombinedStreamingDataset(children, seed=4, **options)


def ids(batches):
    return [batch["id"].tolist() for batch in batches]


def take(loader, count):
    out = []
    for batch in loader:
        out.append(batch)
        if len(out) == count:
            break
    return out


BUILDERS = {
    "plain": plain,
    "mixture": mixture,
    "schedule": lambda pair: mixture(
        pair, weights=ld.WeightSchedule([(0, [1, 0]), (12, [0, 1])], unit="steps")
    ),
}


@pytest.mark.parametrize("kind", list(BUILDERS))
@pytest.mark.parametrize("workers", [0, 2])
def test_skip_then_resume_is_running_through(pair, kind, workers):
    def loader():
        return ld.StreamingDataLoader(BUILDERS[kind](pair), batch_size=16, num_workers=workers)

    whole = ids(loader())
    first = loader()
    head = ids(take(first, 5))
    assert first.skip(7) == 7
    state = first.state_dict()
    assert state["num_samples_yielded"] == 12 * 16
    resumed = loader()
    resumed.load_state_dict(state)
    assert head + ids(resumed) == whole[:5] + whole[12:]
    assert ids(first) == whole[12:]  # the loader that skipped continues the same way


def test_skip_before_the_first_loop(pair):
    whole = ids(ld.StreamingDataLoader(plain(pair), batch_size=16, num_workers=2))
    loader = ld.StreamingDataLoader(plain(pair), batch_size=16, num_workers=2)
    assert loader.skip(3) == 3
    assert loader.skip(2) == 2  # skips add up
    assert ids(loader) == whole[5:]
    assert loader.current_epoch == 1


def test_skip_past_the_end_stops_there(pair):
    loader = ld.StreamingDataLoader(plain(pair), batch_size=100, num_workers=2)
    assert loader.skip(50) == 7  # 700 samples
    second = ids(loader)
    assert loader.current_epoch == 2
    assert sorted(i for batch in second for i in batch) == list(range(700))


def test_skip_while_looping_is_refused(pair):
    loader = ld.StreamingDataLoader(plain(pair), batch_size=16)
    with pytest.raises(RuntimeError, match="break out of the loop"):
        for _ in loader:
            loader.skip(1)
    with pytest.raises(ValueError, match=">= 0"):
        loader.skip(-1)


def _same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], torch.Tensor):
            assert torch.equal(a[key], b[key])
        else:
            assert a[key] == b[key]


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_replay_is_the_batch(pair, kind):
    loader = ld.StreamingDataLoader(
        BUILDERS[kind](pair), batch_size=16, num_workers=2, provenance=True
    )
    first = list(loader)
    second = list(loader)
    for step in (0, 7, len(second) - 1):
        _same(loader.replay(step), second[step])
        _same(loader.replay(step, epoch=1), first[step])
