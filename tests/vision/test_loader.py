"""Crops in a real StreamingDataLoader: the same per sample whatever the workers, on resume and
in replay; new ones in a new epoch; one contiguous uint8 batch."""

import pytest
import torch

import litdata as ld
from tests.vision.photos import jpeg

COUNT = 48
BATCH = 8


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    out = tmp_path_factory.mktemp("photos")
    sizes = [(320, 240), (240, 320), (500, 375), (200, 200)]
    samples = ({"image": jpeg(*sizes[i % 4], seed=i), "id": i} for i in range(COUNT))
    ld.write_dataset(samples, out, chunk_size=10)
    return out


def loader(path, workers, mode="process"):
    crop = ld.vision.RandomResizedCrop(32, field="image")
    ds = ld.StreamingDataset(path, shuffle=True, transform=crop, seed=11)
    options = {"worker_mode": "thread"} if mode == "thread" else {}
    return ld.StreamingDataLoader(ds, batch_size=BATCH, num_workers=workers, **options)


def by_id(batches):
    out = {}
    for batch in batches:
        assert batch["image"].dtype == torch.uint8
        assert batch["image"].is_contiguous()
        assert batch["image"].shape[1:] == (3, 32, 32)
        out.update(zip(batch["id"].tolist(), batch["image"], strict=True))
    return out


def same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_crops_depend_on_the_sample_not_on_the_workers(photos):
    alone = by_id(loader(photos, 0))
    assert len(alone) == COUNT
    assert same(alone, by_id(loader(photos, 2)))
    assert same(alone, by_id(loader(photos, 2, mode="thread")))


def test_a_new_epoch_draws_new_crops_and_an_epoch_repeats(photos):
    first = loader(photos, 2)
    one, two = by_id(first), by_id(first)
    changed = sum(not torch.equal(one[k], two[k]) for k in one)
    assert changed > COUNT // 2
    assert same(one, by_id(loader(photos, 0)))


def test_resume_and_replay_give_the_same_crops(photos):
    whole = list(loader(photos, 2))
    first = loader(photos, 2)
    head = []
    for batch in first:
        head.append(batch)
        if len(head) == 2:
            break
    state = first.state_dict()
    again = loader(photos, 2)
    again.load_state_dict(state)
    rest = list(again)
    assert same(by_id(whole), by_id(head + rest))
    for step in (0, 3):
        replayed = first.replay(step, epoch=1)
        assert torch.equal(replayed["image"], whole[step]["image"])


def test_replay_of_a_mixture_gives_the_crops_of_its_epoch(photos):
    def mixture():
        crop = ld.vision.RandomResizedCrop(32, field="image")
        parts = [
            ld.StreamingDataset(photos, shuffle=True, transform=crop, seed=s).subset(range(20))
            for s in (1, 2)
        ]
        return ld.CombinedStreamingDataset(parts, seed=3, iterate_over_all=True)

    loader = ld.StreamingDataLoader(mixture(), batch_size=BATCH, num_workers=2)
    first, second = list(loader), list(loader)  # epochs 1 and 2
    for epoch, batches in ((1, first), (2, second)):
        for step in (0, 2):
            assert torch.equal(loader.replay(step, epoch=epoch)["image"], batches[step]["image"])
