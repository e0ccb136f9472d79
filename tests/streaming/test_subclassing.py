"""Subclasses of StreamingDataset customise every streamed item, as LitData documents."""

from __future__ import annotations

import pytest

import litdata as ld

fns = pytest.importorskip("support.fns")


@pytest.fixture
def dataset(tmp_path):
    ld.write_dataset(({"id": i} for i in range(40)), tmp_path, chunk_size=7)
    return str(tmp_path)


@pytest.mark.parametrize("workers", [0, 2])
def test_a_transform_method_applies_while_iterating_and_indexing(dataset, workers):
    ds = fns.DoubledDataset(dataset, shuffle=True)
    assert ds[3] == {"id": 6}
    loader = ld.StreamingDataLoader(ds, batch_size=4, num_workers=workers)
    assert sorted(int(i) for batch in loader for i in batch["id"]) == [2 * i for i in range(40)]


@pytest.mark.parametrize("workers", [0, 2])
def test_an_overridden_getitem_sees_every_streamed_item(dataset, workers):
    ds = fns.TaggedDataset(dataset, transform=lambda s: {**s, "id": s["id"] + 100})
    assert ds[0] == {"id": 100, "tag": "seen"}
    loader = ld.StreamingDataLoader(ds, batch_size=5, num_workers=workers)
    batches = list(loader)
    assert all(batch["tag"] == ["seen"] * len(batch["id"]) for batch in batches)
    assert sorted(int(i) for batch in batches for i in batch["id"]) == list(range(100, 140))


def test_plain_iteration_without_a_loader_uses_the_override(dataset):
    assert [sample["id"] for sample in fns.DoubledDataset(dataset)] == [2 * i for i in range(40)]
