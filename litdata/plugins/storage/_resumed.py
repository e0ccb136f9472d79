"""One S3 object read through: a cut body resumed where it stopped, every answer checked.

A body cut short (a reset, a connection closed before its ``Content-Length``, a read that timed
out) is not fetched again from its first byte: the read goes on with a ranged GET from the
first byte it lacks, pinned to the ETag of the first answer (``If-Match``), so that the bytes
of two versions of an object never meet in one read. Up to :data:`RESUMES` cuts per read are
resumed so; past them, the error goes to the core, which retries the whole read.

Every answer to a ranged GET must be a ``206`` whose ``Content-Range`` names the bytes asked
for; a ``200`` (a server that ignored the range, or an S3 error document sent with a ``200``)
or another range is refused as a ``ConnectionError`` naming the URL, which the core retries.
An object replaced meanwhile (``412`` to the pinned ETag) is a
:class:`~litdata.core.errors.ChunkCorruptError` naming the URL: the chunk cache reads it again
whole, once.

The read blocks its thread: each body is read from its socket straight into a buffer of
:data:`_READ` bytes taken from a pool of this process (one ``recv`` at a time, one copy from
the kernel, no buffer made per read), and the sink is told of the buffer each time it is
full. Read so, a body costs about the CPU of boto3's own ``read()`` (within ~10% on the
bench's default link), and no thread hop to an event loop and back per read.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from litdata.core.errors import ChunkCorruptError

__all__ = ["RESUMES", "ResumedRead", "replaced"]

#: Cuts resumed within one read before the error goes to the core's retries.
RESUMES = 3
#: Bytes asked of the body at a time, and told to the sink at a time (the last piece less).
_READ = 1 << 20
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
#: Told ``(offset, data)`` of each piece of the body, to put it where it belongs (``data`` is
#: only valid during the call: a sink that keeps it copies it).
Sink = Callable[[int, "bytes | memoryview"], None]
#: One request: ``call("get_object", Bucket=..., Key=..., ...)``, its errors translated.
Call = Callable[..., dict[str, Any]]


def _cuts() -> tuple[type[BaseException], ...]:
    """What a body cut short raises: the socket's errors, and its clients' up to botocore."""
    import http.client
    import ssl

    from botocore import exceptions
    from urllib3.exceptions import HTTPError

    return (
        HTTPError,
        exceptions.HTTPClientError,
        exceptions.IncompleteReadError,
        exceptions.ReadTimeoutError,
        exceptions.ResponseStreamingError,
        http.client.HTTPException,
        ssl.SSLError,
        ConnectionError,
        TimeoutError,
    )


def replaced(error: BaseException) -> bool:
    """Whether ``error`` is S3's ``412 Precondition Failed`` (the pinned ETag moved on)."""
    seen: BaseException | None = error
    while seen is not None:
        response = getattr(seen, "response", None)
        if isinstance(response, dict):
            code = str(response.get("Error", {}).get("Code", ""))
            status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code == "PreconditionFailed" or status == 412:  # noqa: PLR2004
                return True
        seen = seen.__cause__
    return False


class _Buffers:
    """Buffers of :data:`_READ` bytes, reused by the reads of this process.

    A buffer reused stays in memory the process touched already; one made per read would be
    fresh pages each time (page faults, and on a VM the host's faults too).
    """

    def __init__(self) -> None:
        self._free: list[memoryview] = []
        self._lock = threading.Lock()

    @contextmanager
    def taken(self) -> Iterator[memoryview]:
        """A buffer for the block's duration."""
        with self._lock:
            buffer = self._free.pop() if self._free else None
        if buffer is None:
            buffer = memoryview(bytearray(_READ))
        try:
            yield buffer
        finally:
            with self._lock:
                self._free.append(buffer)


_BUFFERS = _Buffers()


class ResumedRead:
    """The read of bytes ``[start, end)`` of one object (``end=None``: to its end).

    Args:
        call: One S3 request (its errors translated, no retries of its own).
        bucket: The object's bucket.
        key: The object's key.
        url: The object's URL, for errors.
        start: The first byte.
        end: The byte after the last, or ``None`` for all the rest (a plain GET from 0).
        etag: The version to read (``If-Match``), or ``None`` for the one the first answer has.
    """

    def __init__(
        self,
        call: Call,
        bucket: str,
        key: str,
        url: str,
        *,
        start: int = 0,
        end: int | None = None,
        etag: str | None = None,
    ) -> None:
        self._call = call
        self._bucket = bucket
        self._key = key
        self.url = url
        self.at = start
        self.end = end
        #: The version read (known after the first answer).
        self.etag = etag
        #: Cuts resumed so far.
        self.cuts = 0

    def into(self, sink: Sink) -> None:
        """Read every byte into ``sink``, resuming after cuts.

        Raises:
            ConnectionError: A lying answer, or more than :data:`RESUMES` cuts.
            ChunkCorruptError: The object was replaced since the version pinned.
        """
        cuts = _cuts()
        with _BUFFERS.taken() as buffer:
            while True:
                body = _Body(self._open())
                try:
                    self._drain(body, sink, buffer)
                except cuts as error:
                    body.close()
                    self._cut(error)
                    continue
                except BaseException:
                    body.close()
                    raise
                body.finish()
                if self.end is None or self.at >= self.end:
                    return
                self._cut(None)  # a clean end before the bytes asked for

    def _cut(self, error: BaseException | None) -> None:
        self.cuts += 1
        if self.cuts > RESUMES:
            why = f"{type(error).__name__}: {error}" if error else "the body ended early"
            raise ConnectionError(
                f"{self.url}: the answer was cut {self.cuts} times, the last at byte "
                f"{self.at:,} ({why})"
            ) from error

    def _open(self) -> Any:
        ranged = self.at > 0 or self.end is not None
        kwargs: dict[str, str] = {}
        if ranged:
            last = "" if self.end is None else str(self.end - 1)
            kwargs["Range"] = f"bytes={self.at}-{last}"
        if self.etag is not None:
            kwargs["IfMatch"] = self.etag
        try:
            response = self._call("get_object", Bucket=self._bucket, Key=self._key, **kwargs)
        except OSError as error:
            if self.etag is not None and replaced(error):
                raise ChunkCorruptError(
                    f"{self.url} was replaced while it was read (its ETag is no longer "
                    f"{self.etag}); nothing of two versions is used: it is read again whole."
                ) from error
            raise
        self.etag = self.etag or response.get("ETag")
        length = response.get("ContentLength")
        if self.end is None and isinstance(length, int):
            self.end = self.at + length  # a body that ends early is then a cut, resumed
        if ranged:
            self._check_range(response)
        return response["Body"]

    def _check_range(self, response: dict[str, Any]) -> None:
        answered = response.get("ContentRange")
        match = _CONTENT_RANGE.fullmatch(answered or "")
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if (
            match is None
            or int(match.group(1)) != self.at
            or (self.end is not None and int(match.group(2)) != self.end - 1)
        ):
            response["Body"].close()
            asked = f"bytes {self.at}-{'' if self.end is None else self.end - 1}"
            raise ConnectionError(
                f"{self.url}: the server answered a GET of {asked} with HTTP {status} and "
                f"Content-Range {answered!r}; refused (retried)"
            )

    def _drain(self, body: _Body, sink: Sink, buffer: memoryview) -> None:
        """Read the body into ``buffer``, telling ``sink`` of it each time it is full.

        What arrived before a cut is told to the sink before the cut is raised (the read
        resumes after it).
        """
        filled = 0
        while True:
            wanted = _READ - filled
            if self.end is not None:
                wanted = min(wanted, self.end - self.at - filled)
            got = 0
            if wanted > 0:
                try:
                    got = body.readinto(buffer[filled : filled + wanted])
                except BaseException:  # a cut: what arrived before it is kept
                    if filled:
                        sink(self.at, buffer[:filled])
                        self.at += filled
                    raise
            filled += got
            if filled == _READ or (filled and not got):
                sink(self.at, buffer[:filled])
                self.at, filled = self.at + filled, 0
            if not got:
                return


class _Body:
    """A GET's body, read one socket read at a time into the caller's buffer.

    Under botocore's body lie urllib3's response and the standard library's; their
    ``readinto`` waits for the whole buffer, and a cut in that wait loses what the buffer got
    before it. Here each read is one ``recv`` (``readinto1`` of the socket's stream), so what
    arrived before a cut is kept. Another body (chunked, or not botocore's) is read with its
    own ``read``.
    """

    def __init__(self, body: Any) -> None:
        self._body = body
        self._raw = getattr(body, "_raw_stream", None)
        self._response: Any = getattr(self._raw, "_fp", None)
        stream = getattr(self._response, "fp", None)
        plain = isinstance(getattr(self._response, "length", None), int) and not getattr(
            self._response, "chunked", True
        )
        self._stream = stream if plain and callable(getattr(stream, "readinto1", None)) else None
        #: The body's bytes not yet read (socket reads only).
        self._left: int = getattr(self._response, "length", 0) or 0

    def readinto(self, view: memoryview) -> int:
        """Read some bytes into ``view``: how many (0 at the body's end)."""
        if self._stream is not None:
            if not self._left:
                return 0
            got: int = self._stream.readinto1(view[: self._left])
            self._left -= got
            return got
        data = self._body.read(len(view))
        view[: len(data)] = data
        return len(data)

    def finish(self) -> None:
        """Close a body read through: its connection goes back to the pool if it is clean."""
        if self._stream is not None and not self._left:
            self._response.close()  # its bytes were read: the connection can take a request
            release = getattr(self._raw, "release_conn", None)
            if callable(release):
                release()
        self._body.close()

    def close(self) -> None:
        """Close a body cut short, and its connection."""
        self._body.close()
