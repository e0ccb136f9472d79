"""The prefetcher: a fetch's own error as it was raised; how far ahead it fetches."""

import pickle
import threading
import time

import pytest

from litdata.core.errors import ChunkWaitTimeoutError
from litdata.engine.cache.prefetch import Prefetcher


def _stuck(chunk):
    raise TimeoutError(f"another process never published chunk {chunk}")


def test_a_timeout_inside_a_fetch_is_not_reported_as_a_slow_fetch():
    prefetcher = Prefetcher(_stuck, depth=1, describe=lambda chunk: f"chunk {chunk}")
    prefetcher.plan([0])
    with pytest.raises(TimeoutError, match="never published chunk 0"):
        prefetcher.take(0)


def _slow(chunk):
    time.sleep(3)
    return f"chunk-{chunk}"


def test_a_fetch_slower_than_the_timeout_is_a_chunk_wait_timeout(monkeypatch):
    monkeypatch.setenv("LITDATA_CHUNK_TIMEOUT", "1")
    prefetcher = Prefetcher(_slow, depth=1, describe=lambda chunk: f"chunk {chunk} of ds")
    prefetcher.plan([0])
    with pytest.raises(ChunkWaitTimeoutError, match=r"1 s for chunk chunk 0 of ds") as caught:
        prefetcher.take(0)
    # LitData's handlers catch FileNotFoundError; ours caught TimeoutError before.
    assert isinstance(caught.value, FileNotFoundError)
    assert isinstance(caught.value, TimeoutError)
    assert caught.value.waited_s == 1.0
    assert "LITDATA_CHUNK_TIMEOUT" in str(caught.value)
    again = pickle.loads(pickle.dumps(caught.value))
    assert (type(again), str(again)) == (ChunkWaitTimeoutError, str(caught.value))


def test_a_chunk_that_arrives_fetches_more_while_the_reader_still_waits():
    # Chunk 0 is slow; chunk 1 arrives at once, and the link it measured warrants more: the
    # next chunks are fetched then, not only once the reader takes chunk 0.
    release = threading.Event()
    fetched: list[int] = []
    measured = threading.Event()

    def fetch(chunk):
        fetched.append(chunk)
        if chunk == 0:
            assert release.wait(10)
        measured.set()
        return f"chunk-{chunk}"

    prefetcher = Prefetcher(
        fetch,
        depth=1,
        describe=str,
        size=lambda chunk: 1,
        ahead=lambda: 100 if measured.is_set() else 0,
    )
    prefetcher.plan(list(range(6)))
    deadline = time.monotonic() + 10
    while len(fetched) < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(fetched) == list(range(6))  # all six asked for while chunk 0 is in flight
    release.set()
    assert [prefetcher.take(chunk) for chunk in range(6)] == [f"chunk-{n}" for n in range(6)]
