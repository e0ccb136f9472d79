"""Loader semantics LitData users depend on: whole batches in mixtures, zips that cycle."""

from __future__ import annotations

import pytest

import litdata as ld


@pytest.fixture
def halves(tmp_path):
    ld.write_dataset(({"id": i} for i in range(50)), tmp_path / "a", chunk_size=10)
    ld.write_dataset(({"id": 100 + i} for i in range(50)), tmp_path / "b", chunk_size=10)
    return str(tmp_path / "a"), str(tmp_path / "b")


@pytest.mark.parametrize("workers", [0, 2, 3, 4])
def test_a_mixture_of_50_and_50_makes_25_whole_batches_of_4(halves, workers):
    mixture = ld.CombinedStreamingDataset([ld.StreamingDataset(path) for path in halves])
    loader = ld.StreamingDataLoader(mixture, batch_size=4, num_workers=workers)
    batches = list(loader)
    assert len(loader) == len(batches) == 25
    assert all(len(batch["id"]) == 4 for batch in batches)
    assert sorted(int(i) for batch in batches for i in batch["id"]) == [
        *range(50),
        *range(100, 150),
    ]


def _zip(halves, resume):
    children = [ld.StreamingDataset(path, shuffle=True) for path in halves]
    return ld.ParallelStreamingDataset(children, length=30, resume=resume)


def _firsts(batches):
    return [int(i) for batch in batches for i in batch[0]["id"]]


@pytest.mark.parametrize("resume", [False, True])
def test_a_cycling_zip_yields_its_length_every_epoch(halves, resume):
    loader = ld.StreamingDataLoader(_zip(halves, resume), batch_size=5, num_workers=2)
    assert [len(_firsts(loader)) for _ in range(3)] == [30, 30, 30]


def test_a_resuming_zip_continues_after_a_break(halves):
    loader = ld.StreamingDataLoader(_zip(halves, True), batch_size=5, num_workers=2)
    head = []
    for number, batch in enumerate(loader):
        head += _firsts([batch])
        if number == 1:
            break
    rest = _firsts(loader)
    assert len(head) == 10
    assert len(rest) == 20  # the rest of the epoch it broke off
    assert not set(head) & set(rest)
    assert len(_firsts(loader)) == 30  # then whole epochs again


def test_iterating_a_zip_without_a_loader_starts_over(halves):
    dataset = _zip(halves, True)
    first = [int(sample[0]["id"]) for sample in dataset]
    assert [int(sample[0]["id"]) for sample in dataset] == first
    assert len(first) == 30


def test_an_iterator_of_a_dataset_has_a_length(halves):
    dataset = ld.StreamingDataset(halves[0])
    iterator = iter(dataset)
    assert len(iterator) == 50
    assert len(list(iterator)) == 50
