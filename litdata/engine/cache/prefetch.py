"""``Prefetcher``: fetches (downloads, decompresses, checks) the next chunks in background threads.

A reader announces the order it will use chunks in; the prefetcher keeps ``depth`` chunks in
flight ahead of the one being read, and more while the chunks ahead hold fewer bytes than
``ahead()`` asks for: the bytes the link moves in a few seconds, as measured (see
:meth:`~litdata.engine.cache.chunk_cache.ChunkCache.lookahead`), so a fast link is kept busy and a
slow one does not fill the cache. With ``ahead``, the first chunk of a plan (the one the
reader waits for) is fetched alone, with the whole link, and each chunk that arrives tops the
window up at once (not only when the reader moves on), so the link is never idle while the
reader is still busy with a chunk and more were warranted. A chunk that failed in the
background raises its original exception (and traceback) in the reader as soon as the reader
next asks for any chunk, never as a later timeout.

The order is kept as an int64 array (a worker of a million-chunk epoch announces a quarter
million chunks: 2 MB, where a list of ints took 10), and each scheduled chunk remembers its
position in it, so taking a chunk costs the same at the end of an epoch as at its start.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from functools import partial

import numpy as np
import numpy.typing as npt

from litdata.core import config
from litdata.core.errors import ChunkWaitTimeoutError
from litdata.engine.cache.pool import DaemonPool
from litdata.engine.throttle import PLACE, place_in_line

__all__ = ["Prefetcher", "uses"]

#: ``uses`` keeps a table of every chunk only while chunks are at most this many per segment.
DENSE_FACTOR = 4

#: The most chunks in flight at once, however small (threads of one reader's prefetch).
MOST_AHEAD = 8


class Prefetcher:
    """Runs ``fetch(chunk)`` ahead of the reader, ``depth`` chunks or ``ahead()`` bytes at a time.

    Args:
        fetch: Makes one chunk available (and holds it); returns its local path.
        depth: How many chunks may be fetched ahead of the one being read, at least.
        describe: Names a chunk for messages (its URL, the rank and worker reading it).
        size: The bytes of a chunk (with ``ahead``).
        ahead: How many bytes of chunks to keep in flight ahead (beyond ``depth`` chunks, up
            to :data:`MOST_AHEAD` chunks); ``None``: ``depth`` chunks only.
    """

    def __init__(
        self,
        fetch: Callable[[int], str],
        depth: int,
        describe: Callable[[int], str],
        size: Callable[[int], int] | None = None,
        ahead: Callable[[], int] | None = None,
    ) -> None:
        self._fetch = fetch
        self._depth = max(1, depth)
        self._size = size
        self._ahead = ahead if size is not None else None
        self._describe = describe
        self._timeout = float(config.integer("LITDATA_CHUNK_TIMEOUT", 600, minimum=1))
        self._lock = threading.Lock()
        self._pool: DaemonPool | None = None
        self._order: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._futures: dict[int, Future[str]] = {}
        self._positions: dict[int, int] = {}  # where each scheduled chunk is in the order
        self._reading = 0  # the position the reader reads from (the last scheduling's start)
        self._broken = False  # a fetch failed: no top-ups until the next plan

    def plan(self, order: Sequence[int] | npt.NDArray[np.int64]) -> None:
        """Use chunks in ``order`` from now on (each chunk's first use); start fetching."""
        chunks = np.asarray(order, dtype=np.int64).ravel()
        first, _ = uses(chunks)
        with self._lock:
            self._order = chunks if first.all() else chunks[first]
            # The chunks already in flight, where the new order has them (each once): one pass.
            flying = np.fromiter(self._futures, dtype=np.int64, count=len(self._futures))
            at = np.flatnonzero(np.isin(self._order, flying)) if len(flying) else flying
            self._positions = dict(zip(self._order[at].tolist(), at.tolist(), strict=True))
            self._broken = False
            # The reader waits for the first chunk: it is fetched alone, so that the link is
            # all its own; the window opens as it arrives (``_arrived``).
            alone = self._ahead is not None and bool(len(self._order))
            alone = alone and int(self._order[0]) not in self._futures
        self._schedule(0, alone=alone)

    def _schedule(self, start: int, *, alone: bool = False) -> None:
        wanted = 0 if self._ahead is None or alone else self._ahead()
        most = 0 if alone else max(self._depth, MOST_AHEAD) if wanted else self._depth
        submitted: list[Future[str]] = []
        with self._lock:
            self._reading = start
            upcoming = self._order[start : start + most + 1].tolist()
            planned = 0
            for position, chunk in enumerate(upcoming, start):
                if position - start > self._depth and planned >= wanted:
                    break
                if self._size is not None and wanted:
                    planned += self._size(chunk)
                if chunk not in self._futures:
                    if self._pool is None:
                        threads = max(self._depth, MOST_AHEAD) if self._ahead else self._depth
                        self._pool = DaemonPool(threads, "prefetch")
                    call = partial(_in_line, place_in_line(), self._fetch, chunk)
                    self._futures[chunk] = future = self._pool.submit(call)
                    self._positions[chunk] = position
                    submitted.append(future)
        if self._ahead is not None:  # a chunk that arrived leaves room for the next ones
            for future in submitted:
                future.add_done_callback(self._arrived)

    def _arrived(self, future: Future[str]) -> None:
        """A chunk fetched ahead arrived: fetch more, as far ahead as the link now warrants."""
        if future.cancelled():
            return
        if future.exception() is not None:  # the reader raises it when it next asks
            with self._lock:
                self._broken = True
            return
        with self._lock:
            start, broken = self._reading, self._broken
        if not broken:  # else the failed chunk, forgotten once raised, would be fetched again
            self._schedule(start)

    def fetching(self, chunk: int) -> bool:
        """Whether a fetch of ``chunk`` is scheduled and has not ended."""
        future = self._futures.get(chunk)
        return future is not None and not future.done()

    def take(self, chunk: int) -> str | None:
        """The path of ``chunk`` if it was scheduled (waiting for it), else ``None``.

        The chunk is then the reader's: the prefetcher forgets it and schedules the next ones.

        Raises:
            Exception: What fetching it (or an earlier scheduled chunk) raised, as it was raised.
            ChunkWaitTimeoutError: It took longer than ``LITDATA_CHUNK_TIMEOUT`` seconds (600).
        """
        self._raise_failures()  # first: a chunk still fetching stays known, so cancel waits
        with self._lock:
            future = self._futures.pop(chunk, None)
            position = self._positions.pop(chunk, None)
            if position is not None:  # taken: arrivals top up from after it, never it again
                self._reading = position + 1
        if future is None:
            return None
        try:
            path = future.result(timeout=self._timeout)
        except FutureTimeout:
            if future.done():  # the fetch itself raised a TimeoutError (the same class)
                raise
            raise ChunkWaitTimeoutError(
                self._describe(chunk),
                self._timeout,
                "Its fetch is stuck: the storage is unreachable or far too slow. Raise "
                "LITDATA_CHUNK_TIMEOUT (seconds) if it is only slow.",
            ) from None
        if position is not None:
            self._schedule(position + 1)
        return path

    def _raise_failures(self) -> None:
        with self._lock:
            failed = [chunk for chunk, future in self._futures.items() if _failed(future)]
            futures = [self._futures.pop(chunk) for chunk in failed]
            self._broken = self._broken or bool(failed)
            for chunk in failed:
                self._positions.pop(chunk, None)
        for future in futures:
            future.result()  # raises the background error in the reader

    def cancel(self, release: Callable[[int], None]) -> None:
        """Stop prefetching; chunks fetched but never taken are released with ``release``."""
        with self._lock:
            futures, self._futures = self._futures, {}
            self._order, self._positions = np.zeros(0, dtype=np.int64), {}
            pool, self._pool = self._pool, None
        for chunk, future in futures.items():
            if future.cancel():
                continue
            if sys.is_finalizing() and not future.done():
                # The interpreter is exiting (a loop left suspended is closed as modules
                # are torn down): daemon threads never run again, so this would never end.
                continue
            try:
                future.result()
            except Exception:  # noqa: S112  # nobody needs this chunk any more
                continue
            release(chunk)
        if pool is not None:
            pool.shutdown()


def uses(chunks: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Where a reading order (a chunk per segment) reads each chunk the first and last time.

    Linear in the segments when their chunks are dense (a worker reading much of a dataset of
    10^7 chunks: no sort of 10^7; a single count when each chunk is read once); a sort of the
    segments' chunks otherwise (a worker reading few chunks of many, where a table of every
    chunk would cost more than it saves).
    """
    count = len(chunks)
    if count == 0:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
    top = int(chunks.max()) + 1
    if top > DENSE_FACTOR * count:
        _, first = np.unique(chunks, return_index=True)
        _, from_end = np.unique(chunks[::-1], return_index=True)
        firsts, lasts = np.zeros(count, dtype=bool), np.zeros(count, dtype=bool)
        firsts[first] = True
        lasts[count - 1 - from_end] = True
        return firsts, lasts
    if int(np.bincount(chunks, minlength=top).max()) == 1:  # each chunk read once (the rule)
        return np.ones(count, dtype=bool), np.ones(count, dtype=bool)
    positions = np.arange(count, dtype=np.int64)
    first = np.full(top, count, dtype=np.int64)
    np.minimum.at(first, chunks, positions)
    last = np.full(top, -1, dtype=np.int64)
    np.maximum.at(last, chunks, positions)
    return first[chunks] == positions, last[chunks] == positions


def _in_line(place: int, fetch: Callable[[int], str], chunk: int) -> str:
    """``fetch(chunk)``, its requests at ``place`` in line (where it was scheduled)."""
    token = PLACE.set(place)
    try:
        return fetch(chunk)
    finally:
        PLACE.reset(token)


def _failed(future: Future[str]) -> bool:
    return future.done() and not future.cancelled() and future.exception() is not None
