"""``Storage``: a storage backend plugin as the core uses it, checked and retried.

Every call the core makes to a backend goes through here: what the plugin returns is checked
(a listing is a list of names, a download leaves a file, a range has the asked length), with an
error naming the plugin and its distribution; and transient failures (connection resets,
timeouts, throttling, 5xx) are retried with exponential backoff and jitter before the error,
with the URL, reaches the caller. A missing object or a refused permission is never retried.
A throttled request (``503 SlowDown``) does not count against the attempts: the store is
pacing its clients, so it is tried again, with growing pauses, as long as the deadline allows.

Retries are bounded in number (``LITDATA_STORAGE_ATTEMPTS``) and in time: another attempt
starts only if it can end before the call's deadline, taking as long as the last one did. A
server that times out gets ``LITDATA_STORAGE_TIMEOUT`` seconds (30) from when it was first
found silent, whichever calls wait on it, so one that accepts and never answers is an error
within about that time; after any other failure a call has that long from its start plus one
second per MiB it moves (a large transfer cut off half way is tried again). The backends time
each request out after a third of it without a byte, and never cut a transfer that keeps
moving.

While a dataset is opened (:meth:`Storage.probing`), each object's existence and bytes are
fetched once: every installed format plugin looks at the same ``index.json``, and on object
storage each look would otherwise be a request.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import random
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from litdata.core import config
from litdata.core.errors import PluginValidationError, StorageError
from litdata.core.protocols import (
    InPlaceStorage,
    RangedStorage,
    StorageBackend,
    StreamedRangeStorage,
)
from litdata.core.registry import kinds
from litdata.engine.throttle import throttled

__all__ = ["ServerAnswerError", "Storage"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


#: Errors that are the object's or the caller's fault: retrying cannot help.
class ServerAnswerError(ConnectionError):
    """The server's answer is not what was asked (a range not honoured): retried, then named."""


_PERMANENT = (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)
#: A full local disk (while downloading) is not transient either.
_FULL = (errno.ENOSPC, errno.EDQUOT)
#: A throttled request waits at most ``2**this`` backoffs (3.2 s) before it is tried again.
_THROTTLED_DOUBLINGS = 4
#: The slowest transfer a call's deadline allows for, in bytes per second (1 MiB/s).
_SLOWEST = float(1 << 20)


def _transient(error: BaseException) -> bool:
    if isinstance(
        error, (*_PERMANENT, StorageError, PluginValidationError, ValueError, TypeError)
    ) or (isinstance(error, OSError) and error.errno in _FULL):
        return False
    return isinstance(error, OSError | TimeoutError | ConnectionError) or "Throttl" in repr(error)


class Storage:
    """A backend plugin wrapped with checks and retries.

    Args:
        backend: The plugin instance.
        name: The name it is registered under (the URL scheme).
    """

    def __init__(self, backend: StorageBackend, name: str) -> None:
        self.backend = backend
        self.name = name
        self._attempts = config.integer("LITDATA_STORAGE_ATTEMPTS", 5, minimum=1)
        self._timeout = config.storage_timeout()
        #: The longest any one call may take, all its attempts together, however it moves
        #: (plus the time its bytes take at 1 MiB/s: a large upload is not cut).
        self._overall = float(config.integer("LITDATA_CHUNK_TIMEOUT", 600, minimum=1))
        #: Since when the server has not answered (a timeout), across calls; ``None`` once a
        #: call succeeds.
        self._silent_since: float | None = None
        self._backoff = 0.2
        #: While probing: url -> a downloaded copy (or ``None``: no object there).
        self._probes: dict[str, str | None] | None = None
        self._probe_dir: str | None = None

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_probes": None, "_probe_dir": None, "_silent_since": None}

    @contextlib.contextmanager
    def probing(self) -> Iterator[None]:
        """Within the block, ``exists`` and ``download`` of one URL reach the backend once.

        Safe in threads: each download lands in a file of its own before it is kept.
        """
        self._probes = {}
        self._probe_dir = tempfile.mkdtemp(prefix="litdata-probe-")
        try:
            yield
        finally:
            if self._probe_dir is not None:
                shutil.rmtree(self._probe_dir, ignore_errors=True)
            self._probes, self._probe_dir = None, None

    @property
    def origin(self) -> str:
        """The plugin, for messages: ``'s3' (litdata 0.3.0)``."""
        if self.name in kinds.storage:
            return f"{self.name!r} ({kinds.storage.info(self.name).origin})"
        return repr(self.name)

    @property
    def in_place(self) -> bool:
        """Whether the backend's objects are local files that may be read where they lie."""
        return isinstance(self.backend, InPlaceStorage)

    @property
    def ranged(self) -> bool:
        """Whether the backend reads byte ranges."""
        return isinstance(self.backend, RangedStorage)

    @property
    def streams_ranges(self) -> bool:
        """Whether the backend hands the pieces of a range over as they arrive."""
        return isinstance(self.backend, StreamedRangeStorage)

    def _call(
        self,
        what: str,
        url: str,
        call: Callable[[], T],
        size: int = 0,
        on_retry: Callable[[BaseException], None] | None = None,
    ) -> T:
        """``call()``, retried while it fails transiently and another attempt fits in time.

        Args:
            what: The action, for messages (``"Downloading"``).
            url: The object, for messages.
            call: One attempt.
            size: The bytes the call moves (0 when unknown or small), for its deadline.
            on_retry: Told of each transient failure before it is retried.
        """
        started = time.monotonic()
        failures = throttles = 0
        while True:
            began = time.monotonic()
            try:
                result = self._within(call, what, url, started + self._overall + size / _SLOWEST)
            except BaseException as error:  # retrying is the point
                if not _transient(error):
                    raise
                # The store pacing us: retried while the deadline allows, whatever the count.
                slowed = throttled(error)
                throttles += slowed
                failures += not slowed
                now = time.monotonic()
                exponent = min(throttles, _THROTTLED_DOUBLINGS) if slowed else failures - 1
                delay = self._backoff * 2**exponent * (0.5 + random.random())  # noqa: S311
                deadline = self._deadline(error, started, began, size)
                if failures == self._attempts or now + delay + (now - began) > deadline:
                    failed = self._failed(what, url, error, failures + throttles, now - started)
                    raise failed from error
                logger.log(
                    logging.INFO if slowed else logging.WARNING,  # throttling is not news
                    "%s %s failed (%s: %s); retrying in %.1f s",
                    what,
                    url,
                    type(error).__name__,
                    error,
                    delay,
                )
                if on_retry is not None:
                    on_retry(error)
                time.sleep(delay)
            else:
                self._silent_since = None
                return result

    def _within(self, call: Callable[[], T], what: str, url: str, deadline: float) -> T:
        """``call()``, given up at ``deadline`` however its bytes still trickle in.

        A remote call runs in a daemon thread of its own, which is left behind if it overruns
        (the client's socket timeouts end it later); a local one runs here.

        Raises:
            StorageError: The deadline passed (``LITDATA_CHUNK_TIMEOUT``), naming the URL.
        """
        if self.in_place:
            return call()
        future: Future[T] = Future()

        def run() -> None:
            try:
                future.set_result(call())
            except BaseException as error:  # handed to the waiting caller
                future.set_exception(error)

        threading.Thread(target=run, name="litdata-storage-call", daemon=True).start()
        try:
            return future.result(max(0.0, deadline - time.monotonic()))
        except FutureTimeout:
            if future.done():  # the call itself raised a TimeoutError
                raise
            raise StorageError(
                f"{what} {url} through the {self.origin} storage backend took longer than "
                f"LITDATA_CHUNK_TIMEOUT={self._overall:g} s (plus its bytes' time at 1 MiB/s), "
                f"all attempts together: the server answers, but far too slowly. Raise "
                f"LITDATA_CHUNK_TIMEOUT (seconds) if it is only slow."
            ) from None

    def _failed(
        self, what: str, url: str, error: BaseException, tries: int, took: float
    ) -> StorageError:
        silent = self._silent_since
        quiet = "" if silent is None else f" (no answer for {time.monotonic() - silent:.1f} s)"
        return StorageError(
            f"{what} {url} failed {tries} times in {took:.1f} s through "
            f"the {self.origin} storage backend{quiet}; last error: "
            f"{type(error).__name__}: {error}. Is the server reachable and the URL "
            f"right? (LITDATA_STORAGE_ATTEMPTS={self._attempts} and "
            f"LITDATA_STORAGE_TIMEOUT={self._timeout:g} s bound the retries.)"
        )

    def _deadline(self, error: BaseException, started: float, began: float, size: int) -> float:
        """When the retries of a call that began at ``started`` must have ended.

        After a timeout, ``LITDATA_STORAGE_TIMEOUT`` seconds from when the server was first
        found silent, by this call or a concurrent one (the chunks fetched in parallel from a
        frozen server all give up by then); after another failure, from the call's start, plus
        the time its bytes take at 1 MiB/s.
        """
        if isinstance(error, TimeoutError):
            if self._silent_since is None:
                self._silent_since = began
            return min(started, self._silent_since) + self._timeout
        return started + self._timeout + size / _SLOWEST

    def _invalid(self, method: str, problem: str) -> PluginValidationError:
        return PluginValidationError(
            f"The storage backend {self.origin} {problem} from {method}; fix the plugin "
            f"(litdata.testing.StorageContract checks it)."
        )

    # -- the protocol ----------------------------------------------------------------------
    def download(self, url: str, local_path: str, size: int | None = None) -> None:
        """Download the object at ``url`` into the new file ``local_path``.

        Args:
            url: The object.
            local_path: The file to create.
            size: The object's expected size in bytes, if known: a larger object is given
                more time before the retries give up.

        Raises:
            FileNotFoundError: No object at ``url``.
            StorageError: The transfer kept failing.
        """
        if self._probes is not None:
            kept = self._probed(self._probes, url, size)
            if kept is None:
                raise FileNotFoundError(f"No object at {url}.")
            shutil.copyfile(kept, local_path)
            return
        self._download(url, local_path, size)

    def _download(self, url: str, local_path: str, size: int | None) -> None:
        self._call(
            "Downloading", url, lambda: self.backend.download(url, local_path), max(0, size or 0)
        )
        if not os.path.isfile(local_path):
            raise self._invalid("download", f"left no file at {local_path} for {url}")

    def upload(self, local_path: str, url: str) -> None:
        """Upload ``local_path`` as the object ``url``."""
        size = os.path.getsize(local_path) if os.path.isfile(local_path) else 0
        self._call("Uploading to", url, lambda: self.backend.upload(local_path, url), size)

    def exists(self, url: str) -> bool:
        """Whether an object exists at ``url``."""
        if self._probes is not None and url in self._probes:
            return self._probes[url] is not None
        found = self._call("Looking for", url, lambda: self.backend.exists(url))
        if not isinstance(found, bool):
            raise self._invalid("exists", f"returned {found!r} (not a bool) for {url}")
        if self._probes is not None and not found:
            self._probes[url] = None
        return found

    def probe(self, url: str) -> bool:
        """Whether a small object that is read next if present (an index) exists at ``url``.

        Within :meth:`probing`, a remote one is fetched by the same request (one GET, where
        ``exists`` then ``download`` take a HEAD and a GET: a round trip each); otherwise it
        is ``exists``. Use ``exists`` for objects that may be large.
        """
        if self._probes is None or self.in_place:
            return self.exists(url)
        return self._probed(self._probes, url, None) is not None

    def _probed(self, probes: dict[str, str | None], url: str, size: int | None) -> str | None:
        """The kept copy of ``url`` among ``probes`` (fetched once), ``None`` if missing."""
        if url not in probes:
            handle, fresh = tempfile.mkstemp(dir=self._probe_dir)
            os.close(handle)
            try:
                self._download(url, fresh, size)
            except FileNotFoundError:
                probes[url] = None
                return None
            probes[url] = fresh
        return probes[url]

    def list(self, url: str) -> list[str]:
        """The names of the objects directly under the prefix ``url``."""
        names = self._call("Listing", url, lambda: self.backend.list(url))
        if not isinstance(names, list) or not all(
            isinstance(name, str) and name and "/" not in name for name in names
        ):
            shown = names if not isinstance(names, list) else names[:5]
            raise self._invalid("list", f"returned {shown!r} for {url} (not a list of names)")
        return names

    def delete(self, url: str) -> None:
        """Remove the object at ``url`` (a missing one is not an error)."""
        self._call("Deleting", url, lambda: self.backend.delete(url))

    def read_range(
        self,
        url: str,
        start: int,
        end: int,
        on_retry: Callable[[BaseException], None] | None = None,
    ) -> bytes:
        """Bytes ``[start, end)`` of the object at ``url`` (the backend must be ranged).

        Args:
            url: The object.
            start: The first byte.
            end: The byte after the last.
            on_retry: Told of each transient failure (a throttled request) before its retry.
        """
        if not isinstance(self.backend, RangedStorage):
            raise TypeError(f"The storage backend {self.origin} does not read byte ranges.")
        backend = self.backend

        def attempt() -> bytes | bytearray:
            data = backend.read_range(url, start, end)
            if not isinstance(data, bytes | bytearray):
                raise self._invalid("read_range", f"returned {type(data).__name__} for {url}")
            if len(data) != end - start:  # what the server sent: retried, then its fault
                raise ServerAnswerError(
                    f"the server answered {len(data):,} bytes for bytes [{start:,}, {end:,}) of "
                    f"{url}: it ignored the Range header or cut the body short (a server or "
                    f"proxy without range support, or a broken connection)"
                )
            return data

        return bytes(self._call("Reading", url, attempt, max(0, end - start), on_retry))

    def read_range_into(
        self,
        url: str,
        start: int,
        end: int,
        sink: Callable[[int, bytes | memoryview], None],
        on_retry: Callable[[BaseException], None] | None = None,
    ) -> None:
        """Hand bytes ``[start, end)`` of ``url`` to ``sink(offset, data)`` as they arrive.

        Each attempt starts again at ``start`` (the sink starts over when told ``start``);
        an attempt that ends before ``end`` is retried like a short answer.

        Args:
            url: The object.
            start: The first byte.
            end: The byte after the last.
            sink: Told each piece, in order; ``data`` is valid during the call only.
            on_retry: Told of each transient failure (a throttled request) before its retry.
        """
        if not isinstance(self.backend, StreamedRangeStorage):
            raise TypeError(f"The storage backend {self.origin} does not stream byte ranges.")
        backend = self.backend

        def attempt() -> None:
            reached = start

            def counted(offset: int, data: bytes | memoryview) -> None:
                nonlocal reached
                if offset not in (reached, start):
                    raise self._invalid(
                        "read_range_into", f"skipped from byte {reached:,} to {offset:,} of {url}"
                    )
                sink(offset, data)
                reached = offset + len(data)

            backend.read_range_into(url, start, end, counted)
            if reached != end:
                raise ServerAnswerError(
                    f"the server answered {reached - start:,} bytes for bytes [{start:,}, "
                    f"{end:,}) of {url}: it ignored the Range header or cut the body short"
                )

        self._call("Reading", url, attempt, max(0, end - start), on_retry)

    def local_path(self, url: str) -> str:
        """The local file behind ``url`` (the backend must be in place)."""
        if not isinstance(self.backend, InPlaceStorage):
            raise TypeError(f"The storage backend {self.origin} does not read in place.")
        return self.backend.local_path(url)
