import os

import numpy as np
import pytest
from support.helpers import snapshot

import litdata as ld
from litdata.core.errors import DatasetFormatError, SampleError
from litdata.engine.native.compact_index import DIGEST_RECORD


def ids(iterable):
    return [sample["id"] for sample in iterable]


def test_length_index_slices_and_order(numbers):
    ds = ld.StreamingDataset(numbers)
    assert len(ds) == 1000
    assert ds[7]["id"] == 7
    assert ds[-1]["id"] == 999
    assert ids(ds[10:14]) == [10, 11, 12, 13]
    assert ids(ds) == list(range(1000))  # unshuffled iteration is index order
    with pytest.raises(IndexError, match="out of range"):
        ds[1000]


def test_shuffle_is_deterministic_and_changes_every_epoch(numbers):
    first = ids(ld.StreamingDataset(numbers, shuffle=True, seed=7))
    assert sorted(first) == list(range(1000))
    assert first != list(range(1000))
    assert ids(ld.StreamingDataset(numbers, shuffle=True, seed=7)) == first
    assert ids(ld.StreamingDataset(numbers, shuffle=True, seed=8)) != first
    ds = ld.StreamingDataset(numbers, shuffle=True, seed=7)
    epoch1, epoch2 = ids(ds), ids(ds)
    assert epoch1 == first
    assert epoch2 != first
    assert sorted(epoch2) == list(range(1000))


def test_reads_in_place_without_touching_the_dataset(numbers):
    before = snapshot(numbers)
    ids(ld.StreamingDataset(numbers, shuffle=True))
    assert snapshot(numbers) == before
    cached = [name for _, _, names in os.walk(os.environ["LITDATA_CACHE_DIR"]) for name in names]
    records = [name for name in cached if name.endswith(".ok") or name == DIGEST_RECORD]
    assert records == cached  # no copy: checksum and index digest records at most


def test_window_shuffle_on_network_filesystems(numbers, monkeypatch):
    monkeypatch.setenv("LITDATA_POSIX_FAST", "1")
    ds = ld.StreamingDataset(numbers, shuffle=True)
    assert ds.strategy.name == "window"
    order = ids(ds)
    assert sorted(order) == list(range(1000))
    monkeypatch.setenv("LITDATA_POSIX_SHUFFLE_WINDOW", "1")  # a window of 1 is no shuffle
    assert ids(ld.StreamingDataset(numbers, shuffle=True)) == list(range(1000))
    monkeypatch.setenv("LITDATA_POSIX_FAST", "0")
    assert ld.StreamingDataset(numbers, shuffle=True).strategy.name == "full"


def test_shuffle_plugin_by_name(numbers):
    assert ids(ld.StreamingDataset(numbers, shuffle="none")) == list(range(1000))
    with pytest.raises(KeyError, match="No shuffle strategy named 'fancy'"):
        ids(ld.StreamingDataset(numbers, shuffle="fancy"))


def test_length_follows_workers_batches_and_ranks(numbers, monkeypatch):
    ds = ld.StreamingDataset(numbers)
    assert ds.get_len(num_workers=2, batch_size=64) == 1000
    monkeypatch.setenv("WORLD_SIZE", "3")
    monkeypatch.setenv("RANK", "2")
    ds = ld.StreamingDataset(numbers)
    assert ds.drop_last is None
    assert ds.get_len(num_workers=2, batch_size=10) == 330  # drop_last defaults on: 33 batches
    assert ld.StreamingDataset(numbers, drop_last=False).get_len(2, 10) == 340


def test_ranks_from_the_environment_read_disjoint_complete_shares(numbers, monkeypatch):
    seen = []
    for rank in range(3):
        monkeypatch.setenv("WORLD_SIZE", "3")
        monkeypatch.setenv("RANK", str(rank))
        seen.append(ids(ld.StreamingDataset(numbers, shuffle=True, drop_last=False)))
    flat = [i for part in seen for i in part]
    assert sorted(flat) == list(range(1000))


def test_index_path(numbers, tmp_path):
    (tmp_path / "elsewhere.json").write_bytes((numbers / "index.json").read_bytes())
    ds = ld.StreamingDataset(numbers, index_path=tmp_path / "elsewhere.json")
    assert ds[3]["id"] == 3


def test_tokens(tmp_path):
    ld.write_dataset(
        (np.arange(300, dtype=np.uint16) + i for i in range(10)),
        tmp_path,
        chunk_size=1000,
        item_loader=ld.TokensLoader(),
    )
    ds = ld.StreamingDataset(tmp_path, item_loader=ld.TokensLoader(block_size=100))
    blocks = list(ds)
    assert len(blocks) == len(ds) == 30
    assert all(block.shape == (100,) for block in blocks)
    with pytest.raises(DatasetFormatError, match=r"item_loader=TokensLoader\(block_size=...\)"):
        ld.StreamingDataset(tmp_path)
    with pytest.raises(ValueError, match=r"needs the window size"):
        ld.StreamingDataset(tmp_path, item_loader=ld.TokensLoader())


def test_a_pytree_dataset_opened_with_tokens_loader(numbers):
    with pytest.raises(DatasetFormatError, match="written with PyTreeLoader, but it is opened"):
        ld.StreamingDataset(numbers, item_loader=ld.TokensLoader(block_size=8))


def test_tokens_samples_must_be_one_dimensional(tmp_path):
    with pytest.raises(SampleError, match="1-D token arrays"):
        ld.write_dataset(
            [np.zeros((2, 2), np.uint16)], tmp_path, chunk_size=10, item_loader=ld.TokensLoader()
        )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"shuffle": 1}, "shuffle must be"),
        ({"drop_last": "yes"}, "drop_last must be"),
        ({"seed": -1}, "seed must be"),
        ({"max_pre_download": 0}, "max_pre_download"),
        ({"num_canonical_nodes": 0}, "num_canonical_nodes"),
        ({"max_cache_size": 1.5}, "fraction must be in"),
        ({"max_cache_size": "lots"}, "not a size"),
    ],
)
def test_bad_arguments(numbers, kwargs, message):
    with pytest.raises(ValueError, match=message):
        ld.StreamingDataset(numbers, **kwargs)


def test_cache_budget_forms(numbers):
    assert ld.StreamingDataset(numbers, max_cache_size="10GB").max_cache_size == 10**10
    assert ld.StreamingDataset(numbers, max_cache_size=12345).max_cache_size == 12345
    assert ld.StreamingDataset(numbers, max_cache_size=0.5).max_cache_size > 0
    assert ld.StreamingDataset(numbers).max_cache_size > 0
    assert ld.StreamingDataset(numbers, max_cache_size=0).max_cache_size == 0  # no cache


def test_missing_dataset(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no index\.json"):
        ld.StreamingDataset(tmp_path)
