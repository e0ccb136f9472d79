"""The prefetcher reports a fetch's own error as it was raised."""

import pytest

from litdata.core.cache.prefetch import Prefetcher


def _stuck(chunk):
    raise TimeoutError(f"another process never published chunk {chunk}")


def test_a_timeout_inside_a_fetch_is_not_reported_as_a_slow_fetch():
    prefetcher = Prefetcher(_stuck, depth=1, describe=lambda chunk: f"chunk {chunk}")
    prefetcher.plan([0])
    with pytest.raises(TimeoutError, match="never published chunk 0"):
        prefetcher.take(0)
