"""A loader's ``shuffle`` and ``drop_last`` are its own; an epoch they leave empty says so."""

import pytest

import litdata as ld
from litdata.core.errors import LitdataWarning


@pytest.fixture
def ten(tmp_path):
    ld.write_dataset(({"id": i} for i in range(10)), tmp_path / "ten", chunk_size=3)
    return ld.StreamingDataset(str(tmp_path / "ten"))


def _ids(loader):
    return [int(i) for batch in loader for i in batch["id"]]


@pytest.mark.parametrize("workers", [0, 2])
def test_drop_last_of_one_loader_does_not_stay_on_the_dataset(ten, workers):
    dropping = ld.StreamingDataLoader(ten, batch_size=4, drop_last=True)
    assert len(_ids(dropping)) == 8
    keeping = ld.StreamingDataLoader(ten, batch_size=4, num_workers=workers)
    assert sorted(_ids(keeping)) == list(range(10))
    assert ten.drop_last is None
    assert len(_ids(dropping)) == 8  # and the first loader still drops, epoch after epoch
    assert len(dropping) == 2


def test_shuffle_of_one_loader_is_its_own(ten):
    shuffled = ld.StreamingDataLoader(ten, batch_size=10, shuffle=True)
    plain = ld.StreamingDataLoader(ten, batch_size=10)
    assert _ids(plain) == list(range(10))
    assert sorted(_ids(shuffled)) == list(range(10))
    assert _ids(shuffled) != list(range(10))
    assert ten.shuffle is False
    state = shuffled.state_dict()
    assert state["dataset"]["shuffle"] is True  # the state records the loader's settings
    resumed = ld.StreamingDataLoader(ten, batch_size=10, shuffle=True)
    resumed.load_state_dict(state)


def test_an_epoch_that_drop_last_leaves_empty_warns(ten):
    loader = ld.StreamingDataLoader(ten, batch_size=64, drop_last=True)
    with pytest.warns(LitdataWarning, match=r"empty: drop_last keeps only whole batches of 64"):
        assert list(loader) == []
    assert len(list(ld.StreamingDataLoader(ten, batch_size=64))) == 1  # without it: one batch
