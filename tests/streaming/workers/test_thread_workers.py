"""``StreamingDataLoader(worker_mode="thread")``: the batches of worker processes, from threads."""

import json
import threading
import time
import traceback

import numpy as np
import pytest
import torch

import litdata as ld
from litdata.streaming.epoch.topology import thread_worker, worker_and_count
from litdata.streaming.workers.threads import ThreadWorkers, worker_copy


def _loader(path, workers, mode, batch=16, **options):
    options.setdefault("shuffle", True)
    loader_options = {
        key: options.pop(key) for key in ("drop_last", "prefetch_factor") if key in options
    }
    return ld.StreamingDataLoader(
        ld.StreamingDataset(path, **options),
        batch_size=batch,
        num_workers=workers,
        worker_mode=mode,
        **loader_options,
    )


def _ids(batch):
    return [int(i) for i in batch["id"]]


def _take(loader, count=None):
    """``count`` batches' ids (or all) and the state after them (through JSON)."""
    out = []
    for batch in loader:
        out.append(_ids(batch))
        if count is not None and len(out) == count:
            return out, json.loads(json.dumps(loader.state_dict()))
    return out, None


def _litdata_threads():
    return [t for t in threading.enumerate() if t.name.startswith("litdata-thread-worker")]


def _only(before):
    """Whether only the threads of ``before`` run, once idle helpers had 2 s to exit.

    The workers are joined when the epoch stops; their readers' prefetch threads are told
    to end then and do within moments.
    """
    deadline = time.monotonic() + 2
    while not set(threading.enumerate()) <= before and time.monotonic() < deadline:
        time.sleep(0.01)
    return set(threading.enumerate()) <= before


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("drop_last", [False, True])
def test_threads_deliver_the_batches_of_processes_in_their_order(numbers, workers, drop_last):
    # batch 24 over 1,000 items leaves every worker a partial batch to keep or drop, and
    # workers that run out at different turns of the round robin.
    processes = _loader(numbers, workers, "process", batch=24, drop_last=drop_last)
    threads = _loader(numbers, workers, "thread", batch=24, drop_last=drop_last)
    for _ in range(2):  # two epochs: a new order each, the same in both modes
        expected, _ = _take(processes)
        got, _ = _take(threads)
        assert got == expected
        assert len(got) == len(threads)
    assert threads.current_epoch == processes.current_epoch == 2


@pytest.mark.parametrize(("before", "after"), [("thread", "process"), ("process", "thread")])
@pytest.mark.parametrize(("workers", "resumed"), [(2, 2), (3, 2)])
def test_a_state_resumes_exactly_in_the_other_mode(numbers, before, after, workers, resumed):
    whole, _ = _take(_loader(numbers, workers, before))
    head, state = _take(_loader(numbers, workers, before), 11)
    resumed_loader = _loader(numbers, resumed, after)
    resumed_loader.load_state_dict(state)
    tail, _ = _take(resumed_loader)
    seen = [i for batch in head for i in batch]
    rest = [i for batch in tail for i in batch]
    assert sorted(seen + rest) == list(range(1000))  # every item once: none lost or repeated
    if workers == resumed:  # the same topology continues with exactly the next batch
        assert head + tail == whole
    assert resumed_loader.current_epoch == 1


class _Uneven(torch.utils.data.IterableDataset):
    """Worker ``w`` yields ``LENGTHS[w]`` items: workers leave the round robin at odd turns."""

    LENGTHS = (3, 1, 5, 2, 4)

    def __iter__(self):
        worker, _ = worker_and_count()
        return iter([(worker, i) for i in range(self.LENGTHS[worker])])


def test_thread_workers_take_turns_exactly_as_torchs_worker_processes():
    workers = len(_Uneven.LENGTHS)
    torchs = list(torch.utils.data.DataLoader(_Uneven(), batch_size=None, num_workers=workers))
    got = list(ThreadWorkers(_Uneven(), workers, prefetch_factor=1))
    assert got == [tuple(int(v) for v in item) for item in torchs]


def test_thread_and_process_states_are_the_same(numbers):
    _, in_threads = _take(_loader(numbers, 2, "thread"), 9)
    _, in_processes = _take(_loader(numbers, 2, "process"), 9)
    assert in_threads == in_processes


class _Boom(RuntimeError):
    pass


def _explode_at_500(sample):
    if sample["id"] == 500:
        raise _Boom(f"sample {sample['id']} is bad")
    return sample


def test_a_worker_threads_exception_is_raised_in_the_loop_with_its_traceback(numbers):
    before = set(threading.enumerate())
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(numbers, transform=_explode_at_500),
        batch_size=10,
        num_workers=2,
        worker_mode="thread",
    )
    with pytest.raises(_Boom, match="sample 500 is bad") as caught:
        _take(loader)
    frames = "".join(traceback.format_tb(caught.value.__traceback__))
    assert "_explode_at_500" in frames  # where it happened, in the worker thread
    assert any("thread worker" in note for note in getattr(caught.value, "__notes__", []))
    assert not _litdata_threads()
    assert _only(before)


def test_breaking_off_an_epoch_leaves_no_thread(numbers):
    before = set(threading.enumerate())
    loader = _loader(numbers, 3, "thread", batch=4)
    for number, _ in enumerate(loader):
        assert len(_litdata_threads()) == 3
        if number == 5:
            break
    assert not _litdata_threads()  # the workers are joined at once
    assert _only(before)
    # The loader goes on as one with worker processes does after the same break.
    processes = _loader(numbers, 3, "process", batch=4)
    for number, _ in enumerate(processes):
        if number == 5:
            break
    assert _take(loader)[0] == _take(processes)[0]


def test_dropping_the_iterator_mid_epoch_leaves_no_thread(numbers):
    before = set(threading.enumerate())
    iterator = iter(_loader(numbers, 2, "thread", batch=4))
    next(iterator)
    assert len(_litdata_threads()) == 2
    del iterator
    assert not _litdata_threads()
    assert _only(before)


def test_prefetching_is_bounded_by_prefetch_factor(numbers):
    read = []

    def counted(sample):
        read.append(sample["id"])
        return sample

    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(numbers, transform=counted),
        batch_size=8,
        num_workers=1,
        worker_mode="thread",
        prefetch_factor=2,
    )
    iterator = iter(loader)
    next(iterator)
    time.sleep(0.5)  # plenty of time to read the whole dataset, were it not bounded
    # the batch taken, 2 queued, 1 made and waiting for room; samples are read 8 at a time
    assert len(read) <= (1 + 2 + 1) * 8
    del iterator


def test_threads_know_their_worker_id(numbers):
    seen = set()
    inits = []

    def record(sample):
        seen.add((thread_worker(), worker_and_count()))
        return sample

    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(numbers, transform=record),
        batch_size=50,
        num_workers=2,
        worker_mode="thread",
        worker_init_fn=inits.append,
    )
    _take(loader)
    assert seen == {((0, 2), (0, 2)), ((1, 2), (1, 2))}
    assert sorted(inits) == [0, 1]
    assert thread_worker() is None  # the training thread is no worker


def test_worker_threads_run_torch_on_one_thread_and_leave_the_loops_setting(numbers):
    counts = set()

    def record(sample):
        counts.add(torch.get_num_threads())
        return sample

    torch.set_num_threads(2)
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(numbers, transform=record),
        batch_size=50,
        num_workers=2,
        worker_mode="thread",
    )
    _take(loader)
    assert counts == {1}  # as in torch's worker processes
    assert torch.get_num_threads() == 2
    found = []
    later = threading.Thread(target=lambda: found.append(torch.get_num_threads()))
    later.start()
    later.join()
    assert found == [2]  # a thread started afterwards gets the default as it was


def test_combined_datasets_stream_the_same_in_threads(numbers, tmp_path):
    other = tmp_path / "other"
    ld.write_dataset(
        ({"id": 1000 + i, "x": np.zeros(4, np.float32)} for i in range(300)), other, chunk_size=32
    )

    def loader(mode):
        combined = ld.CombinedStreamingDataset(
            [ld.StreamingDataset(numbers, shuffle=True), ld.StreamingDataset(other, shuffle=True)],
            seed=7,
            weights=[0.7, 0.3],
            iterate_over_all=False,
        )
        return ld.StreamingDataLoader(combined, batch_size=10, num_workers=3, worker_mode=mode)

    expected, _ = _take(loader("process"))
    threads = loader("thread")
    got, _ = _take(threads)
    assert got == expected
    head, state = _take(loader("thread"), 7)
    resumed = loader("process")
    resumed.load_state_dict(state)
    tail, _ = _take(resumed)
    assert head + tail == expected


def test_parallel_datasets_stream_the_same_in_threads(numbers, tmp_path):
    other = tmp_path / "captions"
    ld.write_dataset(({"id": 5000 + i} for i in range(1000)), other, chunk_size=50)

    def loader(mode):
        parallel = ld.ParallelStreamingDataset(
            [ld.StreamingDataset(numbers, shuffle=True), ld.StreamingDataset(other)], length=700
        )
        return ld.StreamingDataLoader(parallel, batch_size=10, num_workers=2, worker_mode=mode)

    def pairs(batches):
        return [
            (int(a), int(b))
            for batch in batches
            for a, b in zip(batch[0]["id"], batch[1]["id"], strict=True)
        ]

    expected = pairs(loader("process"))
    assert len(expected) == 700
    assert pairs(loader("thread")) == expected


class _Fetches:
    """Counts the chunks the cache fetched (decompressed) in this process."""

    def __init__(self):
        self.names = []
        self._lock = threading.Lock()

    @ld.hookimpl
    def litdata_chunk_downloaded(self, url, path, nbytes, seconds):
        with self._lock:
            self.names.append(url.rsplit("/", 1)[-1])


def test_threads_share_one_cache_and_fetch_each_chunk_once(tmp_path):
    from litdata.core.registry.manager import get_plugin_manager

    samples = ({"id": i, "x": np.full(2000, i % 256, dtype=np.uint8)} for i in range(600))
    path = ld.write_dataset(samples, tmp_path / "ds", chunk_size=50, compression="zstd")

    def loader(mode, cache):
        dataset = ld.StreamingDataset(path, cache_dir=str(tmp_path / cache), shuffle=True)
        return ld.StreamingDataLoader(dataset, batch_size=16, num_workers=3, worker_mode=mode)

    expected, _ = _take(loader("process", "process-cache"))
    fetches = _Fetches()
    manager = get_plugin_manager()
    manager.register(fetches)
    try:
        got, _ = _take(loader("thread", "thread-cache"))
    finally:
        manager.unregister(fetches)
    assert got == expected
    assert sorted(fetches.names) == sorted(f"chunk-0-{i}.zstd.bin" for i in range(12))


def test_pin_memory_without_an_accelerator_reads_as_usual(numbers):
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(numbers),
        batch_size=100,
        num_workers=2,
        worker_mode="thread",
        pin_memory=True,
    )
    got, _ = _take(loader)
    assert sorted(i for batch in got for i in batch) == list(range(1000))


def test_a_worker_copy_shares_the_index_but_not_the_reader(numbers):
    dataset = ld.StreamingDataset(numbers, transform=lambda sample: sample)
    copy = worker_copy(dataset)
    assert copy is not dataset
    assert copy._reader is not dataset._reader
    assert copy._reader.index is dataset._reader.index  # frozen: shared, never copied
    assert copy._reader.chunk_sizes is dataset._reader.chunk_sizes  # arrays: shared
    assert copy.transforms[0] is dataset.transforms[0]  # the user's function, shared
    assert copy[3]["id"] == dataset[3]["id"] == 3


def test_more_threads_than_cores_are_no_warning_about_processes(numbers):
    import os
    import warnings

    workers = (os.cpu_count() or 1) + 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch's "will create N worker processes" included
        loader = _loader(numbers, workers, "thread", batch=100)
        got, _ = _take(loader)
    assert sorted(i for batch in got for i in batch) == list(range(1000))


def test_an_unknown_worker_mode_is_refused(numbers):
    with pytest.raises(ValueError, match="worker_mode='threads' is not one of process, thread"):
        ld.StreamingDataLoader(ld.StreamingDataset(numbers), worker_mode="threads")
