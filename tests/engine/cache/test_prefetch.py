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


class _Gated:
    """A fetch that records each chunk, waits at its gate (if any), and fails on ``failing``."""

    def __init__(self, gates: dict[int, threading.Event], failing: int | None = None) -> None:
        self.gates = gates
        self.failing = failing
        self.fetched: list[int] = []

    def __call__(self, chunk: int) -> str:
        self.fetched.append(chunk)
        if chunk in self.gates:
            assert self.gates[chunk].wait(10)
        if chunk == self.failing:
            raise OSError(f"chunk {chunk} is corrupt")
        return f"chunk-{chunk}"


def test_a_chunk_that_arrives_fetches_more_while_the_reader_still_waits():
    # Chunk 1 is slow; chunk 2 arrives at once, and the link it measured warrants more: the
    # next chunks are fetched then, not only once the reader takes chunk 1.
    release = threading.Event()
    fetch = _Gated({1: release})
    fetched = fetch.fetched
    prefetcher = Prefetcher(
        fetch,
        depth=2,
        describe=str,
        size=lambda chunk: 1,
        ahead=lambda: 100 if 2 in fetched else 0,  # what chunk 2 measured warrants more
    )
    prefetcher.plan(list(range(6)))
    deadline = time.monotonic() + 10
    while len(fetched) < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(fetched) == list(range(6))  # all six asked for while chunk 1 is in flight
    release.set()
    assert [prefetcher.take(chunk) for chunk in range(6)] == [f"chunk-{n}" for n in range(6)]


def test_the_first_chunk_of_a_plan_is_fetched_alone_then_the_window_opens():
    # The reader waits for chunk 0: nothing of its reader shares the link with it. Once it
    # arrived, the chunks the link warrants are fetched, before the reader takes any.
    release = threading.Event()
    fetch = _Gated({0: release})
    fetched = fetch.fetched
    prefetcher = Prefetcher(fetch, depth=2, describe=str, size=lambda chunk: 1, ahead=lambda: 4)
    prefetcher.plan(list(range(8)))
    time.sleep(0.2)
    assert fetched == [0]
    release.set()
    deadline = time.monotonic() + 10
    while len(fetched) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(fetched) == [0, 1, 2, 3]  # 4 bytes from the one the reader is at
    assert [prefetcher.take(chunk) for chunk in range(8)] == [f"chunk-{n}" for n in range(8)]


def test_a_local_reader_keeps_its_depth_from_the_start():
    fetched: list[int] = []
    prefetcher = Prefetcher(lambda chunk: fetched.append(chunk) or str(chunk), 2, describe=str)
    prefetcher.plan(list(range(8)))
    deadline = time.monotonic() + 10
    while len(fetched) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    assert sorted(fetched) == [0, 1, 2]  # the chunk read and two ahead, never more


def test_a_chunk_that_failed_is_not_fetched_again_by_a_later_arrival():
    # Chunk 1 fails and the reader is told; chunk 2 arrives after that. Its arrival tops
    # the window up, and must not fetch chunk 1 again (a second failure, a second crash).
    release = threading.Event()
    fetch = _Gated({2: release}, failing=1)
    fetched = fetch.fetched
    prefetcher = Prefetcher(fetch, depth=2, describe=str, size=lambda chunk: 1, ahead=lambda: 0)
    prefetcher.plan(list(range(4)))
    deadline = time.monotonic() + 10
    while 2 not in fetched and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(OSError, match="chunk 1 is corrupt"):
        prefetcher.take(0)
    release.set()
    time.sleep(0.3)
    assert fetched.count(1) == 1


def test_a_chunk_that_fails_while_the_reader_waits_for_it_is_not_fetched_again():
    # The reader waits in take(2) when chunk 2 fails; chunk 3 arrives after that and tops the
    # window up: from after chunk 2, which the reader took, never chunk 2 again.
    gates = {2: threading.Event(), 3: threading.Event()}
    fetch = _Gated(gates, failing=2)
    fetched = fetch.fetched
    prefetcher = Prefetcher(fetch, depth=2, describe=str, size=lambda chunk: 1, ahead=lambda: 0)
    prefetcher.plan(list(range(6)))
    assert prefetcher.take(0) == "chunk-0"
    assert prefetcher.take(1) == "chunk-1"
    failure: list[BaseException] = []

    def read_chunk_2():
        try:
            prefetcher.take(2)
        except OSError as error:
            failure.append(error)

    reader = threading.Thread(target=read_chunk_2)
    reader.start()
    time.sleep(0.1)
    gates[2].set()
    reader.join(10)
    assert failure
    gates[3].set()
    time.sleep(0.3)
    assert fetched.count(2) == 1
