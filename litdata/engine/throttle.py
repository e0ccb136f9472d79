"""``Throttle``: how many requests may run at once against one store, adapted (AIMD).

Object stores answer too many requests with ``503 SlowDown`` (S3), ``429 Too Many Requests``
(GCS, Azure) or a throttling error. Like TCP's congestion window, the number of requests
allowed in flight grows by one for every window's worth of requests that succeed (additive
increase) and halves when one is throttled (multiplicative decrease), between 1 and the
connection budget. The throttled request itself is retried by the core (``Storage``), so a
throttled read is slower, never an error while retries remain.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import threading
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["PLACE", "Throttle", "line_key", "place_in_line", "throttle_of", "throttled"]

_ORDER = itertools.count()
#: The place in line of the requests made in this context: the prefetcher sets its chunk's,
#: taken when it was scheduled (in the order the reader needs them), so the chunk needed
#: first is fetched first whichever prefetch thread starts first.
PLACE: ContextVar[int | None] = ContextVar("litdata_place", default=None)


def place_in_line() -> int:
    """A place in line after every place given so far."""
    return next(_ORDER)


def line_key(place: int | None, number: int = 0) -> tuple[int, int, int]:
    """Where a request waits in a line: its chunk's place, then its part, then its arrival.

    Args:
        place: The request's place in line (its chunk's); a new one, after all given so far,
            when omitted.
        number: Its order among the requests of the same place (the chunk's part).
    """
    return (place_in_line() if place is None else place, number, next(_ORDER))


#: What throttling errors say, in the words of S3, GCS, Azure and HTTP.
_SIGNS = (
    "SlowDown",
    "Slow Down",
    "reduce your request rate",  # S3's message, all s3fs keeps (as OSError EBUSY)
    "Throttl",
    "TooManyRequests",
    "Too Many Requests",
    "HTTP 429",
)
_SIGNS_503 = ("HTTP 503", "503 ", "(503)", "ServiceUnavailable", "Service Unavailable")


def throttled(error: BaseException) -> bool:
    """Whether ``error`` is the store asking for fewer requests (or a 503, which on S3 is)."""
    text = f"{type(error).__name__}: {error} {error.__cause__!r}"
    return any(sign in text for sign in (*_SIGNS, *_SIGNS_503))


class Throttle:
    """A concurrency window between 1 and ``ceiling`` requests, shared by threads.

    Args:
        ceiling: The most requests in flight (the connection budget).
        start: The window to begin with; ``ceiling`` when omitted.
    """

    def __init__(self, ceiling: int, start: int | None = None) -> None:
        self.ceiling = max(1, ceiling)
        #: The number of requests allowed in flight (fractional while it grows).
        self.window = float(min(self.ceiling, max(1, start or self.ceiling)))
        self._running = 0
        self._condition = threading.Condition()
        self._queue: list[tuple[int, int, int]] = []
        #: How many times a request was throttled (the window halved at most once per window).
        self.slowdowns = 0
        self._calm_until = 0

    @property
    def limit(self) -> int:
        """The whole number of requests allowed in flight now."""
        return max(1, int(self.window))

    @contextlib.contextmanager
    def slot(self, place: int | None = None, number: int = 0) -> Iterator[None]:
        """Hold one of the window's places for one request, in line.

        Args:
            place: The request's place in line (its chunk's); a new one, after all given so
                far, when omitted.
            number: Its order among the requests of the same place (the chunk's part).
        """
        key = line_key(place, number)
        with self._condition:
            heapq.heappush(self._queue, key)
            while self._running >= self.limit or self._queue[0] != key:
                self._condition.wait()
            heapq.heappop(self._queue)
            self._running += 1
            self._condition.notify_all()  # the next in line may fit too
        try:
            yield
        finally:
            with self._condition:
                self._running -= 1
                self._condition.notify_all()

    def succeeded(self) -> None:
        """A request went through: grow the window by one per window of successes."""
        with self._condition:
            self.window = min(float(self.ceiling), self.window + 1.0 / self.window)
            if self._calm_until > 0:
                self._calm_until -= 1
            self._condition.notify_all()

    def slowed(self) -> None:
        """A request was throttled: halve the window (once per window of requests answered)."""
        with self._condition:
            self.slowdowns += 1
            if self._calm_until > 0:  # the requests in flight when it halved say it again
                self._calm_until -= 1
                return
            self.window = max(1.0, self.window / 2)
            self._calm_until = self.limit


_THROTTLES: dict[tuple[int, str], Throttle] = {}
_THROTTLES_LOCK = threading.Lock()


def throttle_of(store: str, ceiling: int) -> Throttle:
    """This process's window for the store ``store`` (a scheme and host: ``s3://bucket``)."""
    key = (os.getpid(), store)  # a forked worker adapts its own (and shares no lock)
    with _THROTTLES_LOCK:
        found = _THROTTLES.get(key)
        if found is None:
            found = _THROTTLES[key] = Throttle(ceiling)
        return found
