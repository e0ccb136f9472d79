"""``CountingStore``: a dataset's storage, counting the requests and bytes each view costs."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from litdata.core.location import Store

__all__ = ["Cost", "CountingStore"]


@dataclass
class Cost:
    """What reading cost: requests to the storage backend and the bytes they moved.

    A local dataset read in place is memory-mapped: it costs no request, and its bytes are not
    counted (``in_place`` says so).
    """

    requests: int = 0
    bytes: int = 0
    in_place: bool = False

    def add(self, other: Cost) -> None:
        """Add ``other``'s requests and bytes to this one."""
        self.requests += other.requests
        self.bytes += other.bytes

    def as_json(self) -> dict[str, Any]:
        """The cost as the API reports it."""
        return {"requests": self.requests, "bytes": self.bytes, "in_place": self.in_place}


class CountingStore:
    """A :class:`~litdata.core.location.Store` that counts every call that reaches the backend.

    Thread-safe: parallel ranged parts of one download add to the same totals.

    Args:
        inner: The storage the dataset's location was resolved to.
    """

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.name = inner.name
        self.backend = inner.backend
        self._lock = threading.Lock()
        self._total = Cost(in_place=inner.in_place)

    @property
    def origin(self) -> str:
        """The plugin and its distribution, for messages."""
        return self.inner.origin

    @property
    def in_place(self) -> bool:
        """Whether objects are local files read where they lie."""
        return self.inner.in_place

    @property
    def ranged(self) -> bool:
        """Whether byte ranges can be read."""
        return self.inner.ranged

    @property
    def streams_ranges(self) -> bool:
        """Whether the pieces of a byte range can be had as they arrive."""
        return self.inner.streams_ranges

    def total(self) -> Cost:
        """A copy of the totals so far (subtract two to get what happened in between)."""
        with self._lock:
            return Cost(self._total.requests, self._total.bytes, self._total.in_place)

    def _count(self, nbytes: int) -> None:
        with self._lock:
            self._total.requests += 1
            self._total.bytes += nbytes

    def probing(self) -> contextlib.AbstractContextManager[None]:
        """A block within which each object is fetched at most once."""
        return self.inner.probing()

    def download(self, url: str, local_path: str, size: int | None = None) -> None:
        """Download ``url`` into ``local_path`` (one request, the file's bytes)."""
        self.inner.download(url, local_path, size)
        self._count(os.path.getsize(local_path) if os.path.isfile(local_path) else 0)

    def upload(self, local_path: str, url: str) -> None:
        """Refused: the viewer never writes to a dataset."""
        raise PermissionError(f"The viewer is read-only; it does not write {url}.")

    def exists(self, url: str) -> bool:
        """Whether an object exists at ``url`` (one request unless local)."""
        found = self.inner.exists(url)
        self._count_remote()
        return found

    def probe(self, url: str) -> bool:
        """Whether a small object exists at ``url``, fetched in the same request."""
        found = self.inner.probe(url)
        self._count_remote()
        return found

    def list(self, url: str) -> list[str]:
        """The names under ``url`` (one request unless local)."""
        names = self.inner.list(url)
        self._count_remote()
        return names

    def delete(self, url: str) -> None:
        """Refused: the viewer never writes to a dataset."""
        raise PermissionError(f"The viewer is read-only; it does not delete {url}.")

    def read_range(
        self,
        url: str,
        start: int,
        end: int,
        on_retry: Callable[[BaseException], None] | None = None,
    ) -> bytes:
        """Bytes ``[start, end)`` of ``url`` (one request, their length)."""
        data = self.inner.read_range(url, start, end, on_retry)
        self._count(len(data))
        return data

    def read_range_into(
        self,
        url: str,
        start: int,
        end: int,
        sink: Callable[[int, bytes | memoryview], None],
        on_retry: Callable[[BaseException], None] | None = None,
    ) -> None:
        """Bytes ``[start, end)`` of ``url`` into ``sink`` (one request, their length)."""
        self.inner.read_range_into(url, start, end, sink, on_retry)
        self._count(end - start)

    def local_path(self, url: str) -> str:
        """The local file behind ``url``."""
        return self.inner.local_path(url)

    def _count_remote(self) -> None:
        if not self.inner.in_place:
            self._count(0)
