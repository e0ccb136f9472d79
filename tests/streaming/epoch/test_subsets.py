import pytest

import litdata as ld
from litdata.core.errors import LitdataWarning


@pytest.fixture(scope="module")
def hundred(tmp_path_factory):
    path = tmp_path_factory.mktemp("hundred")
    ld.write_dataset(({"id": i} for i in range(100)), path, chunk_size=10)
    return path


def ids(dataset):
    return [sample["id"] for sample in dataset]


def test_subsample_and_upsample(hundred):
    assert ids(ld.StreamingDataset(hundred, subsample=0.25)) == list(range(25))
    shuffled = ids(ld.StreamingDataset(hundred, subsample=0.25, shuffle=True))
    assert len(shuffled) == 25
    assert len(set(shuffled)) == 25
    up = ids(ld.StreamingDataset(hundred, subsample=2.5))
    assert len(up) == 250
    assert sorted(set(up)) == list(range(100))
    with pytest.raises(ValueError, match="positive float"):
        ld.StreamingDataset(hundred, subsample=2)


def test_train_test_split(hundred):
    train, val, test = ld.train_test_split(ld.StreamingDataset(hundred), [0.7, 0.2, 0.1])
    parts = [ids(train), ids(val), ids(test)]
    assert [len(p) for p in parts] == [70, 20, 10]
    assert sorted(i for p in parts for i in p) == list(range(100))
    with pytest.raises(ValueError, match="add up to 1.2"):
        ld.train_test_split(ld.StreamingDataset(hundred), [0.7, 0.5])
    with pytest.raises(ValueError, match="floats between 0 and 1"):
        ld.train_test_split(ld.StreamingDataset(hundred), [1])
    with pytest.warns(LitdataWarning, match="no items"):
        ld.train_test_split(ld.StreamingDataset(hundred), [0.5, 0.0])


def test_subset(hundred):
    dataset = ld.StreamingDataset(hundred)
    assert ids(dataset.subset([5, 6, 7, 42, 3])) == [5, 6, 7, 42, 3]
    assert ids(dataset.subset(slice(90, None))) == list(range(90, 100))
    assert len(dataset.subset(range(0, 100, 2))) == 50
    with pytest.raises(ValueError, match="out of range"):
        dataset.subset([100])


def test_transforms(hundred):
    dataset = ld.StreamingDataset(hundred, transform=[lambda s: s["id"], lambda i: i * 10])
    assert dataset[3] == 30
    assert list(dataset)[:3] == [0, 10, 20]
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(hundred, transform=lambda s: s["id"] + 1), batch_size=10, num_workers=2
    )
    assert sorted(int(i) for batch in loader for i in batch) == list(range(1, 101))
    with pytest.raises(ValueError, match="callable"):
        ld.StreamingDataset(hundred, transform=[lambda s: s, "nope"])


def test_split_parts_resume_and_refuse_each_others_state(hundred):
    train, val = ld.train_test_split(ld.StreamingDataset(hundred, shuffle=True), [0.8, 0.2])
    loader = ld.StreamingDataLoader(train, batch_size=8)
    iterator = iter(loader)
    head = [next(iterator)["id"].tolist() for _ in range(3)]
    state = loader.state_dict()
    del iterator  # the loader stops batching inside the dataset when its iteration ends
    resumed = ld.StreamingDataLoader(
        ld.train_test_split(ld.StreamingDataset(hundred, shuffle=True), [0.8, 0.2])[0], batch_size=8
    )
    resumed.load_state_dict(state)
    tail = [batch["id"].tolist() for batch in resumed]
    assert sorted(i for b in head + tail for i in b) == sorted(ids(train))
    with pytest.raises(ValueError, match="different dataset|another dataset"):
        ld.StreamingDataLoader(val, batch_size=8).load_state_dict(state)
