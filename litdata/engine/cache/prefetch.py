"""``Prefetcher``: fetches (downloads, decompresses, checks) the next chunks in background threads.

A reader announces the order it will use chunks in; the prefetcher keeps at most ``depth``
chunks in flight ahead of the one being read. A chunk that failed in the background raises
its original exception (and traceback) in the reader as soon as the reader next asks for any
chunk, never as a later timeout.

The order is kept as an int64 array (a worker of a million-chunk epoch announces a quarter
million chunks: 2 MB, where a list of ints took 10), and each scheduled chunk remembers its
position in it, so taking a chunk costs the same at the end of an epoch as at its start.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

import numpy as np
import numpy.typing as npt

from litdata.core import config
from litdata.core.errors import ChunkWaitTimeoutError
from litdata.core.registry import hooks

__all__ = ["Prefetcher"]


class Prefetcher:
    """Runs ``fetch(chunk)`` ahead of the reader, ``depth`` chunks at a time.

    Args:
        fetch: Makes one chunk available (and holds it); returns its local path.
        depth: How many chunks may be fetched ahead of the one being read.
        describe: Names a chunk for messages (its URL, the rank and worker reading it).
    """

    def __init__(
        self, fetch: Callable[[int], str], depth: int, describe: Callable[[int], str]
    ) -> None:
        self._fetch = fetch
        self._depth = max(1, depth)
        self._describe = describe
        self._timeout = float(config.integer("LITDATA_CHUNK_TIMEOUT", 600, minimum=1))
        self._lock = threading.Lock()
        self._pool: _DaemonPool | None = None
        self._order: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._futures: dict[int, Future[str]] = {}
        self._positions: dict[int, int] = {}  # where each scheduled chunk is in the order

    def plan(self, order: Sequence[int] | npt.NDArray[np.int64]) -> None:
        """Use chunks in ``order`` from now on (each chunk's first use); start fetching."""
        chunks = np.asarray(order, dtype=np.int64).ravel()
        _, first = np.unique(chunks, return_index=True)
        with self._lock:
            self._order = chunks if len(first) == len(chunks) else chunks[np.sort(first)]
            found = {chunk: np.flatnonzero(self._order == chunk) for chunk in self._futures}
            self._positions = {chunk: int(at[0]) for chunk, at in found.items() if len(at)}
        self._schedule(0)

    def _schedule(self, start: int) -> None:
        with self._lock:
            upcoming = self._order[start : start + self._depth + 1].tolist()
            for position, chunk in enumerate(upcoming, start):
                if chunk not in self._futures:
                    if self._pool is None:
                        self._pool = _DaemonPool(self._depth)
                    self._futures[chunk] = self._pool.submit(self._fetch, chunk)
                    self._positions[chunk] = position

    def take(self, chunk: int) -> str | None:
        """The path of ``chunk`` if it was scheduled (waiting for it), else ``None``.

        The chunk is then the reader's: the prefetcher forgets it and schedules the next ones.

        Raises:
            Exception: What fetching it (or an earlier scheduled chunk) raised, as it was raised.
            ChunkWaitTimeoutError: It took longer than ``LITDATA_CHUNK_TIMEOUT`` seconds (600).
        """
        with self._lock:
            future = self._futures.pop(chunk, None)
            position = self._positions.pop(chunk, None)
        self._raise_failures()
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
            if not future.cancel():
                try:
                    future.result()
                except Exception:  # noqa: S112  # nobody needs this chunk any more
                    continue
                release(chunk)
        if pool is not None:
            pool.shutdown()


def _failed(future: Future[str]) -> bool:
    return future.done() and not future.cancelled() and future.exception() is not None


class _DaemonPool:
    """A few daemon threads running submitted calls.

    A process never waits for them to exit: a DataLoader worker whose trainer died must be
    able to exit in the middle of a download.
    """

    def __init__(self, size: int) -> None:
        self._tasks: queue.SimpleQueue[tuple[Future[str], Callable[[int], str], int] | None]
        self._tasks = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"litdata-prefetch-{n}", daemon=True)
            for n in range(size)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, call: Callable[[int], str], chunk: int) -> Future[str]:
        future: Future[str] = Future()
        self._tasks.put((future, call, chunk))
        return future

    def _work(self) -> None:
        while (task := self._tasks.get()) is not None:
            future, call, chunk = task
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(call(chunk))
            except BaseException as error:  # handed to the reader as it is
                hooks.failed("prefetch", error)
                future.set_exception(error)

    def shutdown(self) -> None:
        for _ in self._threads:
            self._tasks.put(None)
