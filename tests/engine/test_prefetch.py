"""The prefetcher reports a fetch's own error as it was raised."""

import pickle
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
