import multiprocessing
import queue
import threading
import time

import pytest

import litdata as ld
from litdata.streaming.workers.direct_queue import DirectQueue, direct_context


def _echo(requests, replies):
    while (item := requests.get()) is not None:
        replies.put(("echo", item))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_objects_cross_between_processes_in_order(method):
    context = direct_context(multiprocessing.get_context(method))
    requests, replies = context.Queue(), context.Queue()
    assert isinstance(requests, DirectQueue)
    worker = context.Process(target=_echo, args=(requests, replies))
    worker.start()
    for i in range(50):
        requests.put({"i": i, "blob": bytes(i)})
    requests.put(None)
    got = [replies.get(timeout=30) for _ in range(50)]
    worker.join(30)
    assert got == [("echo", {"i": i, "blob": bytes(i)}) for i in range(50)]
    assert worker.exitcode == 0


def _write_many(results, writer, sizes):
    for n in range(400):
        size = sizes[n % len(sizes)]
        results.put((writer, n, bytes([writer]) * size))


def test_writers_at_once_never_mix_their_messages():
    # Four writers at once, messages under and over PIPE_BUF: every message arrives whole,
    # each writer's in its order. (Skipping the lock for messages a single write carries
    # fails this: a large message's writes let a small one in between them.)
    context = direct_context(multiprocessing.get_context("fork"))
    results = context.Queue()
    sizes = [10, 3000, 4000, 20_000, 70_000]  # under and over PIPE_BUF, and the pipe itself
    writers = [context.Process(target=_write_many, args=(results, w, sizes)) for w in range(4)]
    for writer in writers:
        writer.start()
    got = [results.get(timeout=60) for _ in range(4 * 400)]
    for writer in writers:
        writer.join(30)
        assert writer.exitcode == 0
    for w in range(4):
        mine = [(n, blob) for who, n, blob in got if who == w]
        assert [n for n, _ in mine] == list(range(400))
        assert all(blob == bytes([w]) * sizes[n % len(sizes)] for n, blob in mine)


def test_get_waits_for_its_timeout_then_raises_empty():
    q = direct_context(multiprocessing.get_context("fork")).Queue()
    start = time.monotonic()
    with pytest.raises(queue.Empty):
        q.get(timeout=0.2)
    assert 0.15 < time.monotonic() - start < 5
    with pytest.raises(queue.Empty):
        q.get(block=False)
    q.put(1)
    assert q.get(block=False) == 1


def test_a_put_whose_reader_is_gone_is_dropped():
    q = DirectQueue(ctx=multiprocessing.get_context("fork"))
    q._reader.close()
    q.put(b"x" * 100_000)  # no BrokenPipeError: nobody reads any more
    q.cancel_join_thread()
    q.join_thread()


def test_the_loader_starts_no_feeder_thread_and_keeps_the_users_start_method(tmp_path):
    ld.write_dataset(({"i": i} for i in range(64)), tmp_path, chunk_size=8)
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(tmp_path), batch_size=4, num_workers=2, multiprocessing_context="spawn"
    )
    seen = []
    for batch in loader:
        seen.extend(batch["i"].tolist())
        feeders = [t.name for t in threading.enumerate() if "QueueFeeder" in t.name]
        assert feeders == []
    assert sorted(seen) == list(range(64))
    assert loader.multiprocessing_context.get_start_method() == "spawn"
