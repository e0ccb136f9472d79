"""``Link``: what this process has measured of the path to one store, and what follows from it.

Every ranged request reports its size and duration. A least-squares line through recent
requests, ``seconds = ttfb + bytes / rate``, separates the time to first byte from the
throughput of one connection; their product is the link's bandwidth-delay product (the bytes
one connection could have moved while waiting for its first byte). A part ``PARTS_PER_BDP``
times that size spends ~80% of its time moving bytes, so parts are sized so. The aggregate
throughput over the last seconds sizes the prefetch depth: the bytes of the requests that
ended in the window over the time since the first of them began, so that the first requests
of a process measure the link as it is, not diluted by seconds in which nothing was asked.

Until enough requests were seen (or when their sizes do not vary), the defaults describe a
typical cloud store: 50 ms to first byte, 50 MB/s per connection.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque

from litdata.core.chunks.blocks import BLOCK_SIZE

__all__ = ["Link", "link_to"]

#: Parts are this many bandwidth-delay products long (80% of a request moves bytes).
PARTS_PER_BDP = 4
MIN_PART = 1 << 20
MAX_PART = 64 << 20
_DEFAULT_TTFB = 0.05
_DEFAULT_RATE = 50e6
_KEPT = 64
#: The aggregate throughput is measured over this many seconds.
_WINDOW = 3.0


class Link:
    """Measurements of the requests made to one store by this process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._samples: deque[tuple[int, float]] = deque(maxlen=_KEPT)
        self._recent: deque[tuple[float, float, int]] = deque()  # (ended, began, bytes)
        self._ttfb = _DEFAULT_TTFB
        self._rate = _DEFAULT_RATE

    def observe(self, nbytes: int, seconds: float) -> None:
        """One request moved ``nbytes`` in ``seconds`` (from sending it to its last byte)."""
        now = time.monotonic()
        with self._lock:
            self._samples.append((nbytes, max(seconds, 1e-6)))
            self._recent.append((now, now - seconds, nbytes))
            while self._recent and self._recent[0][0] < now - _WINDOW:
                self._recent.popleft()
            self._fit()

    def _fit(self) -> None:
        count = len(self._samples)
        sizes = [float(size) for size, _ in self._samples]
        times = [seconds for _, seconds in self._samples]
        mean_size, mean_time = sum(sizes) / count, sum(times) / count
        spread = sum((size - mean_size) ** 2 for size in sizes)
        if count >= 3 and spread > (MIN_PART / 2) ** 2 * count:  # noqa: PLR2004
            slope = sum(
                (size - mean_size) * (took - mean_time)
                for size, took in zip(sizes, times, strict=True)
            )
            slope /= spread
            if slope > 0:
                self._rate = 1.0 / slope
                # No request is faster than its first byte: requests sharing a capped link
                # stretch the fit's intercept, never the quickest one.
                self._ttfb = min(max(0.0, mean_time - slope * mean_size), *times)
                return
        # One size only: keep the first-byte time, and the rate that explains the mean.
        moving = mean_time - self._ttfb
        if moving > 0:
            self._rate = mean_size / moving

    @property
    def ttfb(self) -> float:
        """The estimated seconds to a request's first byte."""
        return self._ttfb

    @property
    def rate(self) -> float:
        """The estimated bytes per second of one connection."""
        return self._rate

    def part_size(self) -> int:
        """The bytes of one ranged request: ``PARTS_PER_BDP`` bandwidth-delay products."""
        wanted = PARTS_PER_BDP * self._ttfb * self._rate
        blocks = max(1, round(min(MAX_PART, max(MIN_PART, wanted)) / BLOCK_SIZE))
        return int(blocks * BLOCK_SIZE)

    def throughput(self) -> float:
        """Bytes per second moved by all requests together over the last seconds (0: none)."""
        now = time.monotonic()
        with self._lock:
            since = now - _WINDOW
            recent = [(began, size) for ended, began, size in self._recent if ended >= since]
        if not recent:
            return 0.0
        span = min(_WINDOW, now - min(began for began, _ in recent))
        return sum(size for _, size in recent) / max(span, 1e-3)


_LINKS: dict[tuple[int, str], Link] = {}
_LINKS_LOCK = threading.Lock()


def link_to(store: str) -> Link:
    """This process's measurements of the store ``store`` (a scheme and host: ``s3://bucket``)."""
    key = (os.getpid(), store)  # a forked worker measures its own (and shares no lock)
    with _LINKS_LOCK:
        found = _LINKS.get(key)
        if found is None:
            found = _LINKS[key] = Link()
        return found
