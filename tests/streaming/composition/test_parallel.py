import math

import pytest
import torch

import litdata as ld


@pytest.fixture(scope="module")
def aligned(tmp_path_factory):
    """Two aligned datasets (the same ids), and a shorter third one."""
    paths = [tmp_path_factory.mktemp(name) for name in ("images", "captions", "short")]
    ld.write_dataset(({"id": i, "pixel": i % 256} for i in range(400)), paths[0], chunk_size=40)
    ld.write_dataset(
        ({"id": i, "text": f"caption {i}"} for i in range(400)), paths[1], chunk_size=40
    )
    ld.write_dataset(({"id": i} for i in range(100)), paths[2], chunk_size=40)
    return paths


def zipped(paths, **options):
    return ld.ParallelStreamingDataset([ld.StreamingDataset(p) for p in paths], **options)


def _ids(batches):
    return [
        (int(a), int(b))
        for batch in batches
        for a, b in zip(batch[0]["id"], batch[1]["id"], strict=True)
    ]


@pytest.mark.parametrize("workers", [0, 2])
def test_zip_yields_aligned_pairs(aligned, workers):
    dataset = zipped(aligned[:2])
    assert len(dataset) == 400
    loader = ld.StreamingDataLoader(dataset, batch_size=16, num_workers=workers)
    pairs = _ids(list(loader))
    assert all(a == b for a, b in pairs)
    assert sorted(a for a, _ in pairs) == list(range(400))


def test_the_shortest_ends_the_epoch(aligned):
    dataset = zipped([aligned[0], aligned[2]])
    assert len(dataset) == 100
    assert len(list(dataset)) == 100


def test_cycling_to_a_length_and_resume_across_epochs(aligned):
    dataset = zipped([aligned[0], aligned[2]], length=250)
    loader = ld.StreamingDataLoader(dataset, batch_size=10)
    first = _ids(list(loader))
    second = _ids(list(loader))
    assert len(first) == len(second) == 250
    shorts = [b for _, b in first]
    assert sorted(shorts[:100]) == list(range(100))  # a full pass, then the next
    assert first != second  # resume=True: epoch 2 continues the passes


def test_infinite(aligned):
    dataset = zipped(aligned[:2], length=math.inf)
    assert dataset.is_infinite()
    iterator = iter(dataset)
    taken = [next(iterator) for _ in range(1000)]
    assert len(taken) == 1000
    with pytest.raises(TypeError, match="no length"):
        len(dataset)


def test_transforms_and_their_rngs_replay_after_a_resume(aligned):
    def augment(samples, rngs):
        image, _caption = samples
        noise = float(torch.rand(1, generator=rngs["torch"]))
        return {"id": image["id"], "noise": noise, "coin": rngs["random"].random()}

    def run(stop=None, state=None):
        loader = ld.StreamingDataLoader(
            zipped(aligned[:2], transform=augment, length=300), batch_size=10, num_workers=2
        )
        if state:
            loader.load_state_dict(state)
        out = []
        for batch in loader:
            out.append((batch["id"].tolist(), batch["noise"].tolist(), batch["coin"].tolist()))
            if stop and len(out) == stop:
                return out, loader.state_dict()
        return out, None

    whole, _ = run()
    head, state = run(stop=7)
    tail, _ = run(state=state)
    assert head + tail == whole


def test_one_argument_transform(aligned):
    dataset = zipped(aligned[:2], transform=lambda samples: samples[0]["id"] + samples[1]["id"])
    assert list(dataset)[:3] == [0, 2, 4]


@pytest.mark.parametrize(("workers", "stop"), [(1, 6), (3, 6), (1, 15), (3, 20)])
def test_elastic_resume_keeps_alignment_and_loses_nothing(aligned, workers, stop):
    loader = ld.StreamingDataLoader(zipped(aligned[:2]), batch_size=16, num_workers=2)
    head = []
    for batch in loader:
        head.append(batch)
        if len(head) == stop:  # 15 and 20 batches: past half of the 400 steps
            state = loader.state_dict()
            break
    assert state["num_samples_yielded"] == 16 * stop  # a step counts once, not per dataset
    resumed = ld.StreamingDataLoader(zipped(aligned[:2]), batch_size=16, num_workers=workers)
    resumed.load_state_dict(state)
    pairs = _ids(head) + _ids(list(resumed))
    assert all(a == b for a, b in pairs)
    assert sorted(a for a, _ in pairs) == list(range(400))


def test_a_cycling_zip_resumes_only_with_the_same_topology(aligned):
    loader = ld.StreamingDataLoader(zipped(aligned[:2], length=100), batch_size=10, num_workers=2)
    iterator = iter(loader)
    next(iterator)
    state = loader.state_dict()
    other = ld.StreamingDataLoader(zipped(aligned[:2], length=100), batch_size=10, num_workers=1)
    other.load_state_dict(state)
    with pytest.raises(RuntimeError, match="same number of workers"):
        list(other)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"length": "x"}, "length must be None"),
        ({"length": 0}, "length must be None"),
        ({"length": 2.5}, "length must be None"),
        ({"transform": lambda: 0}, "takes 0"),
        ({"transform": lambda a, b, c: 0}, "takes 3"),
        ({"transform": "upper"}, "callable"),
    ],
)
def test_bad_arguments(aligned, options, message):
    with pytest.raises(ValueError, match=message):
        zipped(aligned[:2], **options)


def test_a_cycling_zip_resumes_past_its_shortest_dataset(aligned):
    def run(stop=None, state=None):
        loader = ld.StreamingDataLoader(zipped([aligned[0], aligned[2]], length=300), batch_size=10)
        if state:
            loader.load_state_dict(state)
        out = []
        for batch in loader:
            out.extend(_ids([batch]))
            if stop and len(out) == stop:
                return out, loader.state_dict()
        return out, None

    whole, _ = run()
    head, state = run(stop=250)  # more steps than the short dataset's 100 items
    tail, _ = run(state=state)
    assert head + tail == whole


@pytest.fixture
def uneven(tmp_path):
    """``a`` (ids 0-9) and ``b`` (ids 100-113): the datasets tests/interop compares with LitData."""
    ld.write_dataset(({"id": i} for i in range(10)), tmp_path / "a", chunk_size=4)
    ld.write_dataset(({"id": 100 + i} for i in range(14)), tmp_path / "b", chunk_size=4)
    return [tmp_path / "a", tmp_path / "b"]


def _batches(loader, count=None):
    return [
        [(int(a), int(b)) for a, b in zip(batch[0]["id"], batch[1]["id"], strict=True)]
        for _, batch in zip(range(count or 10**9), loader, strict=False)
    ]


def test_each_dataset_is_split_among_workers_in_whole_batches_as_litdata_does(uneven):
    loader = ld.StreamingDataLoader(zipped(uneven), batch_size=2, num_workers=2)
    assert _batches(loader) == [  # what LitData 0.2.76 yields (tests/interop/test_peer_loader.py)
        [(0, 100), (1, 101)],
        [(6, 108), (7, 109)],
        [(2, 102), (3, 103)],
        [(8, 110), (9, 111)],
        [(4, 104), (5, 105)],
    ]
    assert len(loader) == 5


@pytest.mark.parametrize(("length", "batches"), [(None, 5), (7, 4), (float("inf"), None)])
def test_a_state_saved_after_the_last_batch_resumes_with_the_next_epoch(uneven, length, batches):
    def loader():
        return ld.StreamingDataLoader(zipped(uneven, length=length), batch_size=2)

    if batches is None:  # an endless zip: resumed after any batch, it goes on
        head = loader()
        seen = _batches(head, 5)
        resumed = loader()
        resumed.load_state_dict(head.state_dict())
        assert _batches(resumed, 3) == _batches(loader(), 8)[5:]
        return
    whole = loader()
    first, second = _batches(whole), _batches(whole)
    assert len(first) == batches
    head = loader()
    seen = _batches(head, batches)  # every batch of the epoch, then saved before its end
    assert seen == first
    resumed = loader()
    resumed.load_state_dict(head.state_dict())
    assert _batches(resumed) == second  # the next epoch, not an empty rest of this one
