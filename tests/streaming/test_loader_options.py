"""StreamingDataLoader options and state as LitData users rely on them."""

from __future__ import annotations

from pathlib import Path

import pytest

import litdata as ld
from litdata.core.errors import LitdataWarning


@pytest.fixture
def dataset(tmp_path):
    ld.write_dataset(({"id": i} for i in range(40)), tmp_path, chunk_size=7)
    return str(tmp_path)


def _ids(loader):
    return [int(i) for batch in loader for i in batch["id"]]


@pytest.mark.parametrize("workers", [0, 2])
def test_a_state_saved_at_the_end_of_an_epoch_resumes_with_the_whole_next_one(dataset, workers):
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(dataset, shuffle=True), batch_size=4, num_workers=workers
    )
    first = _ids(loader)
    state = loader.state_dict()  # where Lightning checkpoints: after the epoch's last batch
    resumed = ld.StreamingDataLoader(
        ld.StreamingDataset(dataset, shuffle=True), batch_size=4, num_workers=workers
    )
    resumed.load_state_dict(state)
    assert not resumed.restore
    following = _ids(resumed)
    assert following == _ids(loader)  # the epoch the original loader reads next
    assert following != first
    assert sorted(following) == list(range(40))


def test_restore_is_true_from_load_until_the_resumed_epoch_starts(dataset):
    loader = ld.StreamingDataLoader(ld.StreamingDataset(dataset), batch_size=4)
    assert not loader.restore
    for number, _ in enumerate(loader):
        if number == 2:
            break
    state = loader.state_dict()
    resumed = ld.StreamingDataLoader(ld.StreamingDataset(dataset), batch_size=4)
    resumed.load_state_dict(state)
    assert resumed.restore
    assert len(_ids(resumed)) == 28
    assert not resumed.restore


def test_a_state_saved_before_any_iteration_restores_nothing(dataset):
    """LitData: ``restore`` stays False; the next iteration is the whole first epoch."""
    fresh = ld.StreamingDataLoader(ld.StreamingDataset(dataset, shuffle=True), batch_size=4)
    loader = ld.StreamingDataLoader(ld.StreamingDataset(dataset, shuffle=True), batch_size=4)
    loader.load_state_dict(loader.state_dict())
    assert not loader.restore
    assert _ids(loader) == _ids(fresh)
    assert loader.current_epoch == fresh.current_epoch == 1


def test_persistent_workers_and_prefetch_factor_are_accepted(dataset):
    with pytest.warns(LitdataWarning, match="persistent_workers=True is ignored"):
        loader = ld.StreamingDataLoader(
            ld.StreamingDataset(dataset),
            batch_size=4,
            num_workers=2,
            persistent_workers=True,
            prefetch_factor=4,
        )
    assert sorted(_ids(loader)) == list(range(40))
    assert sorted(_ids(loader)) == list(range(40))  # a second epoch, workers started again
    single = ld.StreamingDataLoader(ld.StreamingDataset(dataset), batch_size=4, prefetch_factor=2)
    assert sorted(_ids(single)) == list(range(40))


def test_the_docs_say_what_persistent_workers_does():
    """Accepted with a warning (as the test above checks), which is what the docs promise."""
    docs = Path(__file__).resolve().parents[2] / "docs"
    streaming = " ".join((docs / "streaming.md").read_text().split())
    assert "`persistent_workers=True` is accepted with a warning and has no effect" in streaming
    assert "persistent_workers=True` is refused" not in streaming


@pytest.mark.parametrize("workers", [0, 2])
def test_a_state_saved_after_the_last_batch_resumes_with_the_next_epoch(dataset, workers):
    def loader():
        return ld.StreamingDataLoader(
            ld.StreamingDataset(dataset, shuffle=True), batch_size=4, num_workers=workers
        )

    whole = loader()
    _ids(whole)
    following = _ids(whole)
    head = loader()
    for _ in zip(range(len(head)), head, strict=False):
        pass  # every batch, but the loop never saw the epoch end: epoch_finished is False
    state = head.state_dict()
    assert not state["epoch_finished"]
    resumed = loader()
    resumed.load_state_dict(state)
    assert _ids(resumed) == following  # as LitData: the next epoch, not an empty one
