"""``PartedDownload``: one large remote chunk fetched as ranged GETs in parallel, verified.

One connection to an object store moves a capped number of bytes per second and waits tens
of milliseconds for its first byte; a chunk of tens of megabytes fetched with one GET runs at
that one connection's cap. Here a chunk is cut into parts (block-aligned, sized from the
measured bandwidth-delay product, see :mod:`litdata.engine.link`; the first part small, so
that the chunk's header and first items arrive first), fetched at once by threads of the download,
each request holding

- a place in the store's :class:`~litdata.engine.throttle.Throttle` window, which halves when
  a request is throttled (``503 SlowDown``) and grows back as requests succeed, and
- one of the node's connection slots (:mod:`litdata.engine.cache.slots`), so all ranks and
  workers of a machine together stay within its connection budget, and
- its size of the process's memory for parts (:mod:`litdata.engine.cache.budget`), taken
  before the others, so that a part waiting for memory holds no connection; memory, like the
  window, lets parts in by their chunk's place in line, then their order in the chunk.

Each part is written into the chunk's temporary file where it belongs. A chunk with block
checksums has every part checked block by block as it lands, before any byte of it is used:
a reader of the same process may then read items from the parts that arrived
(:meth:`PartedDownload.read`) while the rest are in flight. A chunk without them is checked
whole once complete (by the cache), and nothing is read from it before.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from pathlib import Path

from litdata.core import cpu_stages
from litdata.core.chunks.blocks import BLOCK_SIZE, BlockTable
from litdata.core.errors import ChunkCorruptError
from litdata.core.location import Store
from litdata.engine.cache.budget import ByteBudget, part_budget
from litdata.engine.cache.pool import DaemonPool
from litdata.engine.cache.slots import ConnectionSlots
from litdata.engine.link import MIN_PART, Link
from litdata.engine.throttle import PLACE, Throttle, line_key, throttled

__all__ = ["FLOOR_PART", "SPREAD", "PartedDownload", "arriving", "parts_of"]

#: A chunk is cut into at least this many parts (fewer when they would be under a MiB).
SPREAD = 8
#: Parts are at least this long, whatever the link's fit says, when the chunk has room for
#: ``SPREAD`` of them. The fit sees each connection's share of a link that many requests
#: share, not what one connection could carry alone, so it shrinks parts just when many fly;
#: on the bench's default link it made 1.3 MB parts, each waiting 30 ms for its first byte.
#: Object-store clients use 8-16 MB ranges for the same reason.
FLOOR_PART = 8 << 20


def parts_of(size: int, part: int, align: int = BLOCK_SIZE) -> list[tuple[int, int]]:
    """``(start, end)`` of each part of a ``size``-byte object: a small first one, then ``part``.

    Every boundary but the end is a multiple of ``align`` (the block checksums' block).
    """
    part = max(align, part - part % align)
    first = min(size, max(align, min(part, MIN_PART) // align * align))
    bounds = [(0, first)]
    while bounds[-1][1] < size:
        start = bounds[-1][1]
        bounds.append((start, min(size, start + part)))
    return bounds


class PartedDownload:
    """The parallel download of one object into one local file.

    Args:
        storage: The store.
        url: The object.
        path: The (new, temporary) local file to fill.
        target: The plain file it will be published as, if its bytes are the chunk's items
            (not compressed): readers of this process then find it (:func:`arriving`).
        size: The object's size.
        table: Its block checksums, or ``None`` (checked whole by the caller).
        link: The measurements of the store's link (sizes the parts; told of each request).
        throttle: The store's concurrency window.
        slots: The node's connection slots.
        budget: The process's memory for parts in flight (:func:`part_budget` if omitted).
    """

    def __init__(
        self,
        storage: Store,
        url: str,
        path: Path,
        *,
        target: Path | None,
        size: int,
        table: BlockTable | None,
        link: Link,
        throttle: Throttle,
        slots: ConnectionSlots,
        budget: ByteBudget | None = None,
    ) -> None:
        self.storage = storage
        self.url = url
        self.path = path
        self.target = target
        self.size = size
        self.table = table
        self.link = link
        self.throttle = throttle
        self.slots = slots
        self.budget = part_budget() if budget is None else budget
        # At least ``SPREAD`` parts, so that one chunk alone fills the link's connections,
        # and at least two within the memory budget; none under ``FLOOR_PART`` otherwise.
        wanted = max(link.part_size(), FLOOR_PART)
        part = min(wanted, max(MIN_PART, -(-size // SPREAD)), self.budget.total // 2)
        self.parts = parts_of(size, part, table.block if table else BLOCK_SIZE)
        self._done = [False] * len(self.parts)
        self._condition = threading.Condition()
        self._failed = False
        self._descriptor: int | None = None
        #: The process fetching it.
        self.owner = os.getpid()
        #: Its place in the throttle's line (the chunk's, as the prefetcher scheduled it).
        self.place = PLACE.get()

    def run(self) -> None:
        """Fetch every part into :attr:`path`; the first failure is raised once all stopped.

        Raises:
            StorageError: A part kept failing.
            ChunkCorruptError: A part failed its block checksums.
        """
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        self._descriptor = descriptor
        if self.target is not None:
            with _ARRIVALS:
                _ARRIVING[str(self.target)] = self
                _ARRIVALS.notify_all()
        try:
            os.ftruncate(descriptor, self.size)
            # Threads of its own, which end with it (the throttle's window and the node's
            # slots bound the requests; their queue serves the chunks asked for first, first).
            pool = DaemonPool(min(len(self.parts), self.throttle.ceiling), "parts")
            try:
                futures = [pool.submit(partial(self._fetch, n)) for n in range(len(self.parts))]
                _first_error(futures)
            finally:
                pool.shutdown()
        finally:
            with _ARRIVALS:
                _ARRIVING.pop(str(self.target), None)
            with self._condition:
                self._failed = self._failed or not all(self._done)
                self._descriptor = None
                os.close(descriptor)
                self._condition.notify_all()

    def _fetch(self, number: int) -> None:
        if self._failed:  # another part failed: the chunk is fetched again or not at all
            return
        start, end = self.parts[number]
        retried: list[BaseException] = []

        def slowed(error: BaseException) -> None:
            retried.append(error)
            if throttled(error):
                self.throttle.slowed()

        try:
            with (
                self.budget.holding(end - start, line_key(self.place, number)),
                self.throttle.slot(self.place, number),
                self.slots.slot(),
            ):
                began = time.perf_counter()
                if self.table is not None and self.storage.streams_ranges:
                    self._stream(self.table, start, end, slowed)
                    took = time.perf_counter() - began
                else:
                    data = self.storage.read_range(self.url, start, end, on_retry=slowed)
                    took = time.perf_counter() - began
                    self._keep(data, start)
                    del data  # the budget's bytes are free once it is written
        except BaseException:
            with self._condition:
                self._failed = True
                self._condition.notify_all()
            raise
        if not retried:
            self.link.observe(end - start, took)
        self.throttle.succeeded()
        with self._condition:
            self._done[number] = True
            self._condition.notify_all()

    def _keep(self, data: bytes, start: int) -> None:
        """Check a part read whole (block checksums) and write it where it belongs."""
        if self.table is not None:
            with cpu_stages.timed("checksum"):
                self.table.verify(data, start, self.url)
        with cpu_stages.timed("cache write"):
            os.pwrite(self._open_descriptor(), data, start)

    def _stream(
        self, table: BlockTable, start: int, end: int, slowed: Callable[[BaseException], None]
    ) -> None:
        """Fetch a part piece by piece: each written where it belongs and hashed as it comes.

        Nothing of the part is read before every one of its blocks passed (its ``_done``
        flag is set after this returns), so bytes that land before a block fails are never
        used: the download fails and its file is dropped.
        """
        check = table.checker(start, end, self.url)
        counting = cpu_stages.enabled()

        def sink(offset: int, data: bytes | memoryview) -> None:
            began = time.thread_time() if counting else 0.0
            check.update(offset, data)
            hashed = time.thread_time() if counting else 0.0
            with self._condition:  # not after run() closed the file (an abandoned attempt)
                _write_at(self._open_descriptor(), data, offset)
            if counting:
                cpu_stages.add("checksum", hashed - began)
                cpu_stages.add("cache write", time.thread_time() - hashed)

        self.storage.read_range_into(self.url, start, end, sink, on_retry=slowed)
        if not check.done:
            raise ChunkCorruptError(f"{self.url}: bytes [{start:,}, {end:,}) arrived incomplete")

    def _open_descriptor(self) -> int:
        if self._descriptor is None:
            raise RuntimeError(f"the download of {self.url} into {self.path} was closed")
        return self._descriptor

    def read(self, start: int, end: int) -> bytes | None:
        """Bytes ``[start, end)`` once the parts holding them arrived and passed their checks.

        Returns ``None`` when they cannot be had so (the chunk has no block checksums, the
        download failed or finished meanwhile): read the published chunk instead.
        """
        if self.table is None:
            return None
        wanted = [n for n, (first, last) in enumerate(self.parts) if first < end and last > start]
        with self._condition:
            while not self._failed and not all(self._done[n] for n in wanted):
                if self._descriptor is None:
                    return None
                self._condition.wait()
            if self._failed or self._descriptor is None:
                return None
            data = os.pread(self._descriptor, end - start, start)
        return data if len(data) == end - start else None


def _write_at(descriptor: int, data: bytes | memoryview, offset: int) -> None:
    """Write all of ``data`` at ``offset`` of the file."""
    view = memoryview(data)
    while view:
        written = os.pwrite(descriptor, view, offset)
        view, offset = view[written:], offset + written


def _first_error(futures: list[Future[None]]) -> None:
    """Wait for every future; raise the first one's error, if any failed."""
    errors = [future.exception() for future in futures]
    for error in errors:
        if error is not None:
            raise error


#: The downloads in flight in this process, by the file they will be published as.
_ARRIVING: dict[str, PartedDownload] = {}
_ARRIVALS = threading.Condition()
#: How often a reader waiting for a download to start looks whether its fetch ended.
_LOOK_SECONDS = 0.005


def arriving(target: Path, starting: Callable[[], bool] | None = None) -> PartedDownload | None:
    """The download in flight in this process of what will be published as ``target``.

    Args:
        target: The published file.
        starting: While it says so, a download of ``target`` is about to start (a fetch was
            scheduled and has not ended): wait for it.
    """
    with _ARRIVALS:
        while (found := _ARRIVING.get(str(target))) is None and starting is not None:
            if not starting():
                return None
            _ARRIVALS.wait(_LOOK_SECONDS)
        # A download of the parent a worker was forked from has no threads here.
        return found if found is not None and found.owner == os.getpid() else None
