import multiprocessing

import numpy as np
import pytest
import torch
from torch.utils.data import default_collate

import litdata as ld


def _ids(batches):
    return [int(i) for batch in batches for i in batch["id"]]


@pytest.mark.parametrize("context", ["fork", "spawn"])
@pytest.mark.parametrize("shuffle", [False, True])
def test_workers_cover_every_item_once(numbers, context, shuffle):
    ds = ld.StreamingDataset(numbers, shuffle=shuffle)
    loader = ld.StreamingDataLoader(
        ds, batch_size=32, num_workers=2, multiprocessing_context=context
    )
    batches = list(loader)
    assert len(batches) == len(loader)
    assert sorted(_ids(batches)) == list(range(1000))
    assert all(len(batch["id"]) == 32 for batch in batches[:-2])
    first = batches[0]
    assert first["x"].dtype == torch.float32
    assert first["x"].shape == (32, 4)
    assert torch.equal(first["x"][:, 0], first["id"].float())


def test_batches_are_what_default_collate_makes(numbers):
    ds = ld.StreamingDataset(numbers)
    ours = next(iter(ld.StreamingDataLoader(ds, batch_size=5)))
    theirs = default_collate([ds[i] for i in range(5)])
    assert ours.keys() == theirs.keys()
    for key in ours:
        assert ours[key].dtype == theirs[key].dtype
        assert torch.equal(ours[key], theirs[key])


def test_epochs_reshuffle_and_len(numbers):
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(numbers, shuffle=True), batch_size=100, num_workers=2
    )
    assert len(loader) == 10
    epoch1, epoch2 = _ids(loader), _ids(loader)
    assert epoch1 != epoch2
    assert sorted(epoch1) == sorted(epoch2) == list(range(1000))
    assert loader.current_epoch == 2


def test_drop_last_and_options_override_the_dataset(numbers):
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(numbers), batch_size=300, drop_last=True, shuffle=True
    )
    batches = list(loader)
    assert [len(b["id"]) for b in batches] == [300, 300, 300]
    assert sorted(i for b in batches for i in b["id"].tolist()) != [
        i for b in batches for i in b["id"].tolist()
    ]
    assert len(loader) == 3
    assert loader.dataset.shuffle is False  # the loader's overrides are its own (see below)


def test_custom_collate_runs_in_the_workers(numbers):
    def count(samples):  # defined locally: fine with fork
        return {"n": len(samples), "pid": multiprocessing.current_process().name}

    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(numbers),
        batch_size=10,
        num_workers=2,
        collate_fn=count,
        multiprocessing_context="fork",
    )
    batches = list(loader)
    assert sum(b["n"] for b in batches) == 1000
    assert {b["pid"] for b in batches} != {"MainProcess"}


def test_refuses_other_datasets(numbers):
    with pytest.raises(RuntimeError, match="reads a StreamingDataset"):
        ld.StreamingDataLoader([1, 2, 3])


def test_plain_dataloader_still_works(numbers):
    loader = torch.utils.data.DataLoader(ld.StreamingDataset(numbers), batch_size=50, num_workers=2)
    assert sorted(_ids(loader)) == list(range(1000))


def test_large_tensors_keep_shared_memory(tmp_path):
    ld.write_dataset(
        ({"big": np.full((512, 512), i, np.float32)} for i in range(8)), tmp_path, chunk_size=4
    )
    loader = ld.StreamingDataLoader(ld.StreamingDataset(tmp_path), batch_size=2, num_workers=2)
    batches = list(loader)
    assert [b["big"].shape for b in batches] == [(2, 512, 512)] * 4
    assert sorted(float(v) for b in batches for v in b["big"][:, 0, 0]) == list(range(8))


@pytest.mark.parametrize("workers", [0, 3])
def test_len_matches_what_a_window_shuffled_epoch_yields(numbers, workers):
    # 16 chunks (15 of 64 items, one of 40): window shuffling deals whole chunks per worker.
    dataset = ld.StreamingDataset(numbers, shuffle="window")
    loader = ld.StreamingDataLoader(dataset, batch_size=100, num_workers=workers)
    batches = list(loader)
    assert len(loader) == len(batches)
    assert len(dataset) == sum(len(batch["id"]) for batch in batches) == 1000


@pytest.mark.parametrize("batch_size", [0, True, 1.5])
def test_bad_batch_sizes(numbers, batch_size):
    datasets = [
        ld.StreamingDataset(numbers),
        ld.ParallelStreamingDataset([ld.StreamingDataset(numbers)]),
        ld.CombinedStreamingDataset([ld.StreamingDataset(numbers)]),
    ]
    for dataset in datasets:
        with pytest.raises(ValueError, match="batch_size must be a positive integer"):
            ld.StreamingDataLoader(dataset, batch_size=batch_size)
