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
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
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


def _cuts() -> tuple[type[BaseException], ...]:
    """What a body cut short raises, from aiohttp up to botocore."""
    import http.client

    import aiohttp
    from botocore import exceptions

    return (
        aiohttp.ClientError,
        exceptions.HTTPClientError,
        exceptions.IncompleteReadError,
        exceptions.ReadTimeoutError,
        http.client.IncompleteRead,
        ConnectionError,
        asyncio.TimeoutError,
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


class ResumedRead:
    """The read of bytes ``[start, end)`` of one object (``end=None``: to its end).

    Args:
        call: s3fs's ``_call_s3`` (its errors translated, its retries off).
        bucket: The object's bucket.
        key: The object's key.
        url: The object's URL, for errors.
        start: The first byte.
        end: The byte after the last, or ``None`` for all the rest (a plain GET from 0).
        etag: The version to read (``If-Match``), or ``None`` for the one the first answer has.
    """

    def __init__(
        self,
        call: Callable[..., Awaitable[dict[str, Any]]],
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
        self._buffer: memoryview | None = None

    async def into(self, sink: Sink) -> None:
        """Read every byte into ``sink``, resuming after cuts.

        Raises:
            ConnectionError: A lying answer, or more than :data:`RESUMES` cuts.
            ChunkCorruptError: The object was replaced since the version pinned.
        """
        cuts = _cuts()
        while True:
            body = await self._open()
            try:
                await self._drain(body, sink)
            except cuts as error:
                self._cut(error)
                continue
            finally:
                body.close()
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

    async def _open(self) -> Any:
        ranged = self.at > 0 or self.end is not None
        kwargs: dict[str, str] = {}
        if ranged:
            last = "" if self.end is None else str(self.end - 1)
            kwargs["Range"] = f"bytes={self.at}-{last}"
        if self.etag is not None:
            kwargs["IfMatch"] = self.etag
        try:
            response = await self._call("get_object", Bucket=self._bucket, Key=self._key, **kwargs)
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

    async def _drain(self, body: Any, sink: Sink) -> None:
        content = _content(body)
        if content is None:
            await self._drain_read(body, sink)
            return
        # aiohttp's buffers as they came off the socket (tens of KiB each: as many calls of
        # the sink), gathered into one buffer of ``_READ`` bytes, reused, that the sink is
        # told of when full: no bytes are joined, no buffer is made per read
        if self._buffer is None:
            self._buffer = memoryview(bytearray(_READ))
        buffer, filled = self._buffer, 0
        while self.end is None or self.at + filled < self.end:
            try:
                piece, _ = await content.readchunk()
            except BaseException:  # a cut: what arrived before it is kept, the read resumes
                if filled:
                    sink(self.at, buffer[:filled])
                    self.at += filled
                raise
            if not piece:
                break
            view = memoryview(piece)
            if self.end is not None:
                view = view[: self.end - self.at - filled]
            while view:
                taken = min(len(view), _READ - filled)
                buffer[filled : filled + taken] = view[:taken]
                filled, view = filled + taken, view[taken:]
                if filled == _READ:
                    sink(self.at, buffer)
                    self.at, filled = self.at + filled, 0
        if filled:
            sink(self.at, buffer[:filled])
            self.at += filled

    async def _drain_read(self, body: Any, sink: Sink) -> None:
        while (wanted := _READ if self.end is None else min(_READ, self.end - self.at)) > 0:
            chunk = await body.read(wanted)
            if not chunk:
                return
            sink(self.at, chunk)
            self.at += len(chunk)


def _content(body: Any) -> Any:
    """The aiohttp stream under an aiobotocore body, or ``None`` for another body."""
    stream = getattr(getattr(body, "raw_stream", None), "content", None)
    return stream if callable(getattr(stream, "readchunk", None)) else None
