"""Mixture weights that follow a WeightSchedule: per window, across resumes and epochs."""

import pytest

import litdata as ld


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Two datasets of 4,000 samples, ``source`` 0 and 1, ids apart by 100,000."""
    a = tmp_path_factory.mktemp("a")
    b = tmp_path_factory.mktemp("b")
    ld.write_dataset(({"id": i, "source": 0} for i in range(4000)), a, chunk_size=100)
    ld.write_dataset(({"id": 100_000 + i, "source": 1} for i in range(4000)), b, chunk_size=100)
    return a, b


def mix(pair, weights, **options):
    a, b = pair
    options = {"iterate_over_all": False, "seed": 7, **options}
    datasets = [ld.StreamingDataset(a, shuffle=True), ld.StreamingDataset(b, shuffle=True)]
    return ld.CombinedStreamingDataset(datasets, weights=weights, **options)


def sources(loader, count=None):
    """Each batch's list of sources (and the loader's state after ``count`` batches)."""
    out = []
    for batch in loader:
        out.append([int(s) for s in batch["source"]])
        if len(out) == count:
            return out, loader.state_dict()
    return out, None


def share(batches):
    flat = [s for batch in batches for s in batch]
    return sum(flat) / len(flat)


def switch(at, unit="steps"):
    """All from dataset 0 before ``at``, all from dataset 1 after: exact to the step."""
    return ld.WeightSchedule([(0, [1, 0]), (at, [0, 1])], unit=unit)


@pytest.mark.parametrize(
    ("points", "options", "message"),
    [
        ([], {}, "at least one"),
        ([(5, [1, 1])], {}, "start at 0"),
        ([(0, [1, 1]), (0, [1, 2])], {}, "increase"),
        ([(0, [1, 1]), (10, [1, 2, 3])], {}, "as many weights"),
        ([(0, [1, -1])], {}, "non-negative"),
        ([(0, [0, 0])], {}, "not all zero"),
        ([(0, [1, 1])], {"unit": "epochs"}, "unit must be"),
        ([(0.5, [1, 1])], {}, "whole"),
    ],
)
def test_bad_schedules(points, options, message):
    with pytest.raises(ValueError, match=message):
        ld.WeightSchedule(points, **options)


def test_a_schedule_for_another_number_of_datasets(pair):
    with pytest.raises(ValueError, match="weighs 3 datasets; the mixture has 2"):
        mix(pair, ld.WeightSchedule([(0, [1, 1, 1])]))


def test_weights_at_a_position():
    steps = ld.WeightSchedule([(0, [3, 1]), (100, [1, 1])])
    assert steps.at(0) == steps.at(99) == [0.75, 0.25]
    assert steps.at(100) == steps.at(10**9) == [0.5, 0.5]
    linear = ld.WeightSchedule([(0, [1, 0]), (100, [0, 1])], interpolate=True)
    assert linear.at(25) == pytest.approx([0.75, 0.25])
    assert linear.at(500) == [0.0, 1.0]


def test_each_window_has_its_proportions(pair):
    # 16 samples per step: the breakpoint at 1,600 samples is step 100.
    schedule = ld.WeightSchedule([(0, [0.9, 0.1]), (1600, [0.25, 0.75])], unit="samples")
    loader = ld.StreamingDataLoader(mix(pair, schedule), batch_size=16, num_workers=2)
    batches, _ = sources(loader, 300)
    assert 0.0 < share(batches[:100]) < 0.2  # the fixed-weight tolerance, per window
    assert 0.65 < share(batches[100:]) < 0.85


def test_the_switch_happens_at_the_step(pair):
    loader = ld.StreamingDataLoader(mix(pair, switch(50)), batch_size=8, num_workers=2)
    batches, _ = sources(loader, 120)
    assert all(s == 0 for batch in batches[:50] for s in batch)
    assert all(s == 1 for batch in batches[50:] for s in batch)


def test_interpolated_weights_move_linearly(pair):
    schedule = ld.WeightSchedule([(0, [1, 0]), (200, [0, 1])], unit="steps", interpolate=True)
    loader = ld.StreamingDataLoader(mix(pair, schedule), batch_size=8, num_workers=2)
    batches, _ = sources(loader, 260)
    assert batches[0] == [0] * 8  # step 0 draws with [1, 0]
    assert 0.15 < share(batches[:100]) < 0.35  # mean weight 0.25
    assert 0.65 < share(batches[100:200]) < 0.85  # mean weight 0.75
    assert all(s == 1 for batch in batches[200:] for s in batch)


@pytest.mark.parametrize("stop", [3, 40])
def test_resume_continues_the_schedule_exactly(pair, stop):
    schedule = ld.WeightSchedule([(0, [0.8, 0.2]), (640, [0.2, 0.8])], interpolate=True)

    def loader():
        return ld.StreamingDataLoader(mix(pair, schedule), batch_size=16, num_workers=2)

    whole, _ = sources(loader(), 100)
    head, state = sources(loader(), stop)
    assert state["clock"] == {"step": stop, "samples": 16 * stop}
    resumed = loader()
    resumed.load_state_dict(state)
    tail, _ = sources(resumed, 100 - stop)
    assert head + tail == whole


def _ids(loader, count=None):
    out = []
    for batch in loader:
        out.append([int(i) for i in batch["id"]])
        if len(out) == count:
            break
    return out


def test_elastic_resume_to_more_workers_continues_the_schedule(pair):
    head_loader = ld.StreamingDataLoader(mix(pair, switch(40)), batch_size=8, num_workers=2)
    head = _ids(head_loader, 30)
    state = head_loader.state_dict()
    resumed = ld.StreamingDataLoader(mix(pair, switch(40)), batch_size=8, num_workers=4)
    resumed.load_state_dict(state)
    tail = _ids(resumed, 60)
    seen = [i for batch in head + tail for i in batch]
    assert len(seen) == len(set(seen))  # no sample twice
    # steps 30 to 39 still draw from dataset 0, from step 40 on only dataset 1
    assert all(i < 100_000 for batch in head + tail[:10] for i in batch)
    assert all(i >= 100_000 for batch in tail[10:] for i in batch)


def test_the_clock_runs_on_across_epochs(pair):
    a, b = pair
    small = [ld.StreamingDataset(a).subset(range(200)), ld.StreamingDataset(b).subset(range(200))]

    def loader(schedule):
        mixture = ld.CombinedStreamingDataset(small, weights=schedule, iterate_over_all=True)
        return ld.StreamingDataLoader(mixture, batch_size=8, num_workers=2)

    at = len(loader(switch(1))) + 3  # three steps into the second epoch
    reading = loader(switch(at))
    first, second = sources(reading)[0], sources(reading)[0]
    assert sorted(s for batch in first for s in batch) == [0] * 200 + [1] * 200
    assert all(s == 0 for batch in second[:3] for s in batch)
    assert all(s == 1 for batch in second[3:20] for s in batch)  # until dataset 1 runs out


def test_a_schedule_with_iterate_over_all_reads_everything_once(pair):
    loader = ld.StreamingDataLoader(
        mix(pair, switch(100), iterate_over_all=True), batch_size=32, num_workers=2
    )
    ids = [i for batch in _ids(loader) for i in batch]
    assert sorted(ids) == [*range(4000), *range(100_000, 104_000)]


def test_a_state_with_another_schedule_is_refused(pair):
    head_loader = ld.StreamingDataLoader(mix(pair, switch(40)), batch_size=8)
    _ids(head_loader, 3)
    state = head_loader.state_dict()
    other = ld.StreamingDataLoader(mix(pair, switch(41)), batch_size=8)
    with pytest.raises(ValueError, match="weights"):
        other.load_state_dict(state)
