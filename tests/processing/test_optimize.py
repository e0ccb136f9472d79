import multiprocessing
import os

import pytest
from support import fns
from support.helpers import chunk_files

import litdata as ld
from litdata.core.errors import DatasetExistsError, DatasetFormatError, ProcessingError
from litdata.processing.optimize import ALL_DONE


def _ids(directory):
    reader = ld.DatasetReader(directory)
    return [reader[i]["id"] for i in range(len(reader))]


def test_shared_queue_writes_every_sample_once(tmp_path):
    ld.optimize(fns.record, range(500), tmp_path, chunk_size=50, num_workers=2, verbose=False)
    assert sorted(_ids(tmp_path)) == list(range(500))
    sample = ld.DatasetReader(tmp_path)[0]
    assert sample["x"].tolist() == [sample["id"]] * 3
    assert not list(tmp_path.glob("*.index.json"))  # per-worker indexes merged and removed


def test_ordered_mode_keeps_input_order_with_spawned_workers(tmp_path):
    ld.optimize(
        fns.record,
        list(range(103)),
        tmp_path,
        chunk_size=10,
        num_workers=2,
        keep_data_ordered=True,
        start_method="spawn",
        verbose=False,
    )
    assert _ids(tmp_path) == list(range(103))
    names = chunk_files(tmp_path)
    assert "chunk-0-0.bin" in names
    assert "chunk-1-0.bin" in names


def test_none_skips_and_generators_yield_many(tmp_path):
    ld.optimize(fns.record_or_none, range(30), tmp_path / "a", chunk_size=4, verbose=False)
    assert sorted(_ids(tmp_path / "a")) == [i for i in range(30) if i % 3]
    ld.optimize(
        fns.several, range(30), tmp_path / "b", chunk_bytes="1kb", num_workers=2, verbose=False
    )
    assert len(_ids(tmp_path / "b")) == sum(i % 3 for i in range(30))


def test_align_chunking_matches_a_single_worker(tmp_path):
    ld.optimize(
        fns.record,
        range(95),
        tmp_path / "one",
        chunk_size=10,
        num_workers=1,
        keep_data_ordered=True,
        verbose=False,
    )
    ld.optimize(
        fns.record,
        range(95),
        tmp_path / "two",
        chunk_size=10,
        num_workers=3,
        align_chunking=True,
        verbose=False,
    )
    one = ld.DatasetReader(tmp_path / "one").index.chunks
    two = ld.DatasetReader(tmp_path / "two").index.chunks
    assert [c.chunk_size for c in one] == [c.chunk_size for c in two]
    assert _ids(tmp_path / "two") == list(range(95))


def test_fast_dev_run_and_batches(tmp_path):
    ld.optimize(
        fns.record, range(100), tmp_path / "a", chunk_size=4, fast_dev_run=True, verbose=False
    )
    assert sorted(_ids(tmp_path / "a")) == list(range(10))
    ld.optimize(fns.record, range(100), tmp_path / "b", chunk_size=4, fast_dev_run=3, verbose=False)
    assert sorted(_ids(tmp_path / "b")) == [0, 1, 2]
    ld.optimize(len, range(10), tmp_path / "c", chunk_size=4, batch_size=4, verbose=False)
    reader = ld.DatasetReader(tmp_path / "c")
    assert sorted(reader[i] for i in range(len(reader))) == [2, 4, 4]


def test_queue_inputs(tmp_path):
    queue = multiprocessing.get_context("fork").Queue()
    for i in range(40):
        queue.put(i)
    queue.put(ALL_DONE)
    ld.optimize(
        fns.record, queue=queue, output_dir=tmp_path, chunk_size=8, num_workers=2, verbose=False
    )
    assert sorted(_ids(tmp_path)) == list(range(40))


def test_tokens(tmp_path):
    ld.optimize(
        fns.tokens,
        range(20),
        tmp_path,
        chunk_size=1000,
        item_loader=ld.TokensLoader(),
        num_workers=2,
        verbose=False,
    )
    reader = ld.DatasetReader(tmp_path, item_loader=ld.TokensLoader(block_size=100))
    assert len(reader) == sum(reader.decoder.items_in_chunk(c) for c in reader.index.chunks)
    assert all(len(reader[i]) == 100 for i in range(len(reader)))


def test_mode_none_refuses_an_existing_dataset(tmp_path):
    ld.optimize(fns.record, range(10), tmp_path, chunk_size=4, verbose=False)
    with pytest.raises(DatasetExistsError, match="mode='append'"):
        ld.optimize(fns.record, range(10), tmp_path, chunk_size=4, verbose=False)


def test_mode_none_removes_leftovers_of_a_failed_run(tmp_path):
    (tmp_path / "chunk-5-0.bin").write_bytes(b"junk")
    (tmp_path / "5.index.json").write_text("{}")
    ld.optimize(fns.record, range(10), tmp_path, chunk_size=4, verbose=False)
    assert "chunk-5-0.bin" not in chunk_files(tmp_path)
    assert sorted(_ids(tmp_path)) == list(range(10))


def test_overwrite_replaces_and_a_failed_overwrite_keeps_the_old_dataset(tmp_path):
    ld.optimize(fns.record, range(10), tmp_path, chunk_size=4, verbose=False)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(ProcessingError):
        ld.optimize(
            fns.fails_on_17, range(30), tmp_path, chunk_size=4, mode="overwrite", verbose=False
        )
    assert sorted(_ids(tmp_path)) == list(range(10))
    assert sorted(os.listdir(tmp_path)) == before
    ld.optimize(
        fns.record, range(100, 105), tmp_path, chunk_size=4, mode="overwrite", verbose=False
    )
    assert sorted(_ids(tmp_path)) == list(range(100, 105))
    listed = sorted(c.filename for c in ld.DatasetReader(tmp_path).index.chunks)
    assert chunk_files(tmp_path) == listed  # nothing of the old dataset is left
    assert not (tmp_path / ".litdata-staging").exists()


def test_append_continues_numbering_per_rank(tmp_path):
    ld.optimize(
        fns.record,
        range(20),
        tmp_path,
        chunk_size=5,
        num_workers=2,
        keep_data_ordered=True,
        verbose=False,
    )
    ld.optimize(
        fns.record,
        range(20, 30),
        tmp_path,
        chunk_size=5,
        num_workers=2,
        keep_data_ordered=True,
        mode="append",
        verbose=False,
    )
    assert _ids(tmp_path) == list(range(30))
    names = [c.filename for c in ld.DatasetReader(tmp_path).index.chunks]
    assert names == [
        "chunk-0-0.bin",
        "chunk-0-1.bin",
        "chunk-1-0.bin",
        "chunk-1-1.bin",
        "chunk-0-2.bin",
        "chunk-1-2.bin",
    ]


def test_append_refuses_another_structure_and_keeps_the_dataset(tmp_path):
    ld.optimize(fns.record, range(10), tmp_path, chunk_size=5, verbose=False)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(
        ProcessingError,
        match="The config isn.t consistent between chunks: these samples cannot extend the dataset",
    ) as caught:
        ld.optimize(
            fns.other_structure, range(5), tmp_path, chunk_size=5, mode="append", verbose=False
        )
    assert "data_format" in str(caught.value)
    assert sorted(os.listdir(tmp_path)) == before
    with pytest.raises(DatasetFormatError, match=r"chunk_size=7 \(the dataset has 5\)"):
        ld.optimize(fns.record, range(5), tmp_path, chunk_size=7, mode="append", verbose=False)


def test_failure_names_the_input_and_leaves_nothing_behind(tmp_path):
    with pytest.raises(ProcessingError) as caught:
        ld.optimize(
            fns.fails_on_17, range(100), tmp_path, chunk_size=4, num_workers=2, verbose=False
        )
    message = str(caught.value)
    assert "input 17 (17)" in message
    assert "ValueError: input 17 is cursed" in message
    assert "fns.py" in message
    assert "fails_on_17" in message
    assert not (tmp_path / "index.json").exists()
    assert chunk_files(tmp_path) == []
    assert multiprocessing.active_children() == []


def test_a_worker_that_dies_is_reported(tmp_path):
    with pytest.raises(ProcessingError, match="exit code 3"):
        ld.optimize(fns.dies_on_5, range(20), tmp_path, chunk_size=4, num_workers=2, verbose=False)
    assert multiprocessing.active_children() == []


def test_spawn_needs_an_importable_fn(tmp_path):
    with pytest.raises(ProcessingError, match="define it at module level"):
        ld.optimize(
            lambda i: i,
            range(4),
            tmp_path,
            chunk_size=4,
            num_workers=1,
            start_method="spawn",
            verbose=False,
        )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of chunk_size"),
        ({"chunk_size": 2, "chunk_bytes": "1MB"}, "exactly one of chunk_size"),
        ({"chunk_size": 2, "inputs": []}, "inputs is empty"),
        ({"chunk_size": 2, "inputs": None}, "either inputs"),
        ({"chunk_size": 2, "queue": multiprocessing.Queue()}, "not both"),
        (
            {"chunk_size": 2, "mode": "replace"},
            "The provided .mode. should be either .append. or .overwrite..*got mode='replace'",
        ),
        # LitData's phrases, then ours
        (
            {"chunk_bytes": "1MB", "align_chunking": True},
            "^align_chunking=True: `chunk_size` needs",
        ),
        (
            {"chunk_size": 2, "align_chunking": True, "keep_data_ordered": False},
            "^align_chunking requires keep_data_ordered=True",
        ),
        (
            {"chunk_size": 2, "use_checkpoint": True, "keep_data_ordered": False},
            "^Checkpoint feature is not supported .*needs ordered inputs",
        ),
        ({"chunk_size": 2, "num_workers": -1}, "non-negative integer"),
        ({"chunk_size": 2, "fast_dev_run": -2}, "fast_dev_run"),
        ({"chunk_size": 2, "batch_size": 0}, "batch_size"),
        ({"chunk_size": 2, "compression": "zip"}, "No compressor named 'zip'"),
        ({"chunk_size": 2, "executor": "slurm"}, "No executor named 'slurm'"),
        ({"chunk_size": 2, "start_method": "teleport"}, "start_method='teleport'"),
        ({"chunk_size": 2, "inputs": "abc"}, "sequence of inputs"),
    ],
)
def test_bad_arguments(tmp_path, kwargs, message):
    arguments = {"inputs": range(4), **kwargs}
    with pytest.raises((ValueError, KeyError), match=message):
        ld.optimize(fns.record, output_dir=tmp_path, verbose=False, **arguments)
    assert not (tmp_path / "index.json").exists()


def test_generator_fn_cannot_checkpoint(tmp_path):
    with pytest.raises(ValueError, match="generator"):
        ld.optimize(fns.several, range(4), tmp_path, chunk_size=2, use_checkpoint=True)


def test_progress_bar_and_silence(tmp_path, capfd):
    ld.optimize(fns.record, range(50), tmp_path / "loud", chunk_size=10, num_workers=1)
    out, err = capfd.readouterr()
    assert "optimize -> loud" in err
    assert "50/50" in err
    assert "Wrote 50 samples in 5 chunks" in out
    ld.optimize(
        fns.record, range(50), tmp_path / "quiet", chunk_size=10, num_workers=1, verbose=False
    )
    assert capfd.readouterr() == ("", "")
