"""Loader profiles (torch profiler, cProfile) and the streaming classes' ``repr()``."""

import json
import pstats

import pytest

import litdata as ld


@pytest.fixture
def dataset(tmp_path):
    ld.write_dataset(({"i": i, "x": [i] * 8} for i in range(64)), tmp_path / "ds", chunk_size=16)
    return str(tmp_path / "ds")


def _trace_events(path):
    return json.loads(path.read_text())["traceEvents"]


def test_profile_batches_of_worker_zero_and_cprofile_of_it_and_the_training_loop(dataset, tmp_path):
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "result.json").write_text("old")  # an old trace is replaced, never mixed in
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(dataset),
        batch_size=4,
        num_workers=2,
        profile_batches=3,
        profile_skip_batches=1,
        profile_dir=str(folder),
    )
    assert sum(len(batch["i"]) for batch in loader) == 64
    assert sorted(path.name for path in folder.iterdir()) == ["result.json", "result.txt"]
    assert _trace_events(folder / "result.json")  # a Chrome trace of worker 0
    assert "Self CPU" in (folder / "result.txt").read_text()
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(dataset),
        batch_size=4,
        num_workers=2,
        profile_dir=str(folder),
        profile_cprofile=True,
    )
    assert sum(len(batch["i"]) for batch in loader) == 64
    assert {"cprofile_main.prof", "cprofile_worker0.txt"} <= {p.name for p in folder.iterdir()}
    worker = pstats.Stats(str(folder / "cprofile_worker0.prof"))
    functions = {name for (_, _, name) in worker.stats}  # type: ignore[attr-defined]
    assert "runs" in functions  # the worker read the dataset
    assert "tottime" in (folder / "cprofile_worker0.txt").read_text()
    main = pstats.Stats(str(folder / "cprofile_main.prof"))
    assert "runs" not in {name for (_, _, name) in main.stats}  # type: ignore[attr-defined]


def test_profile_batches_and_cprofile_together_are_refused_as_by_litdata(dataset):
    with pytest.raises(ValueError, match=r"both install a profiler; enable only one"):
        ld.StreamingDataLoader(
            ld.StreamingDataset(dataset), num_workers=1, profile_batches=5, profile_cprofile=True
        )


def test_profile_without_workers_profiles_the_training_loop(dataset, tmp_path):
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(dataset), batch_size=8, profile_batches=True, profile_dir=tmp_path
    )
    assert len(list(loader)) == 8
    assert sorted(path.name for path in tmp_path.iterdir() if path.is_file()) == [
        "result.json",
        "result.txt",
    ]
    assert _trace_events(tmp_path / "result.json")


def test_profile_with_thread_workers_profiles_the_process_they_run_in(dataset, tmp_path):
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(dataset),
        batch_size=8,
        num_workers=2,
        worker_mode="thread",
        profile_batches=True,
        profile_dir=tmp_path,
    )
    assert len(list(loader)) == 8
    assert sorted(path.name for path in tmp_path.iterdir() if path.is_file()) == [
        "result.json",
        "result.txt",
    ]
    assert _trace_events(tmp_path / "result.json")


def test_a_whole_epoch_profile_after_skipped_batches(dataset, tmp_path):
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(dataset),
        batch_size=8,
        profile_batches=True,
        profile_skip_batches=2,
        profile_dir=tmp_path,
    )
    assert len(list(loader)) == 8
    assert _trace_events(tmp_path / "result.json")


def test_profile_options_are_checked(dataset):
    with pytest.raises(ValueError, match="cannot be negative"):
        ld.StreamingDataLoader(ld.StreamingDataset(dataset), profile_batches=-1)
    with pytest.raises(ValueError, match="must be an int or True"):
        ld.StreamingDataLoader(ld.StreamingDataset(dataset), profile_batches=2.5)


def test_repr_shows_location_length_chunks_order_and_workers(dataset, tmp_path):
    streaming = ld.StreamingDataset(dataset, shuffle=True, seed=7)
    assert repr(streaming) == (
        f"StreamingDataset(input_dir={dataset!r}, length=64, items=64, chunks=4, shuffle=True, "
        f"seed=7, drop_last=None, epoch=1, workers=1, batch_size=1)"
    )
    loader = ld.StreamingDataLoader(streaming, batch_size=4, num_workers=2)
    text = repr(loader)
    assert text.startswith(
        "StreamingDataLoader(batch_size=4, num_workers=2, batches=16, epoch=0, profile=None)"
    )
    assert "\n  [0] StreamingDataset(" in text
    assert "workers=2, batch_size=4)" in text

    ld.write_dataset(range(10), tmp_path / "other", chunk_size=5)
    other = ld.StreamingDataset(str(tmp_path / "other"))
    combined = ld.CombinedStreamingDataset([streaming, other], seed=3)
    lines = repr(combined).splitlines()
    assert lines[0].startswith("CombinedStreamingDataset(length=74, datasets=2")
    assert "iterate_over_all=True" in lines[0]
    assert "seed=3" in lines[0]
    assert lines[1].startswith(f"  [0] StreamingDataset(input_dir={dataset!r}")
    assert lines[2].startswith("  [1] StreamingDataset(")
    endless = ld.CombinedStreamingDataset(
        [streaming, other], iterate_over_all=False, weights=[0.5, 0.5]
    )
    assert "length='<none: " in repr(endless)
    assert "weights=[0.5, 0.5]" in repr(endless)
    parallel = ld.ParallelStreamingDataset([streaming, other], length=20)
    assert repr(parallel).startswith("ParallelStreamingDataset(length=")
    assert "length_per_epoch=20" in repr(parallel)
