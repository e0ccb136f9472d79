"""The link proxy's copies of objects, so that moto does not copy a whole object on every GET.

A copy is kept per (host, path) with the ETag it had; ``ObjectCopies.get`` returns it only for the
ETag moto reports now (the caller asks moto with a ``HEAD``, which copies nothing), else fetches
the whole object once, however many requests want it at the same time. ``cut`` answers a plain or
single-range GET from a copy. Copies beyond the byte budget are dropped, least recently used
first.
"""

from __future__ import annotations

import asyncio
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from support.link_http import Response, header

__all__ = ["GATHER_S", "Copy", "ObjectCopies", "cut", "parse_range"]

#: How long the first GET of an object waits for others to share its ``HEAD`` to moto.
GATHER_S = 0.002
_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


@dataclass
class Copy:
    """One object's bytes and GET response headers, as of ``etag``."""

    etag: str
    headers: list[tuple[str, str]]
    body: bytes


class ObjectCopies:
    """Whole objects by (host, path), each valid for one ETag, within ``budget`` bytes."""

    def __init__(self, budget: int):
        self._budget = budget
        self._copies: OrderedDict[tuple[str, str], Copy] = OrderedDict()
        self._fetches: dict[tuple[str, str, str], asyncio.Future[Response]] = {}
        self._probes: dict[tuple[str, str], asyncio.Future[Response]] = {}

    async def probe(
        self, key: tuple[str, str], head: Callable[[], Awaitable[Response]]
    ) -> Response:
        """Moto's ``HEAD`` of ``key`` now, one for all the requests that arrive together.

        The first request waits ``GATHER_S``, then sends ``head``; the requests that arrived
        meanwhile share its answer. Each of them arrived before the ``HEAD`` was sent, so the
        answer is as fresh for each as a ``HEAD`` of its own (moto takes about 10 ms of CPU per
        request, so 8 ranged GETs of a chunk would otherwise queue 8 ``HEAD``s).
        """
        waiting = self._probes.get(key)
        if waiting is not None:
            return await asyncio.shield(waiting)
        waiting = self._probes[key] = asyncio.get_running_loop().create_future()
        await asyncio.sleep(GATHER_S)
        del self._probes[key]  # from now on, a request starts a probe of its own
        return await _settle(waiting, head)

    async def get(
        self, key: tuple[str, str], etag: str, fetch: Callable[[], Awaitable[Response]]
    ) -> Copy | None:
        """The copy of ``key`` at ``etag``: kept, or got by ``fetch`` (a whole GET).

        Returns:
            The copy, or ``None`` when the GET did not answer 200 with an ETag.
        """
        copy = self._copies.get(key)
        if copy is not None and copy.etag == etag:
            self._copies.move_to_end(key)
            return copy
        version = (key[0], key[1], etag)
        pending = self._fetches.get(version)
        if pending is not None:
            response = await asyncio.shield(pending)
        else:
            pending = self._fetches[version] = asyncio.get_running_loop().create_future()
            try:
                response = await _settle(pending, fetch)
            finally:
                del self._fetches[version]
        got = header(response.headers, "etag")
        if response.status != 200 or got is None:
            return None
        copy = Copy(got, response.headers, bytes(response.body))
        self._copies[key] = copy
        self._copies.move_to_end(key)
        total = sum(len(item.body) for item in self._copies.values())
        while total > self._budget and len(self._copies) > 1:
            total -= len(self._copies.popitem(last=False)[1].body)
        return copy


async def _settle(
    future: asyncio.Future[Response], work: Callable[[], Awaitable[Response]]
) -> Response:
    """Run ``work`` and give its result, or its error, to ``future``'s waiters too."""
    try:
        future.set_result(await work())
    except BaseException as error:
        future.set_exception(error)
        future.exception()  # retrieved: the waiters, if any, see it
        raise
    return future.result()


def parse_range(value: str | None) -> tuple[str, str] | None:
    """``bytes=A-B``'s two ends as written (either may be empty), or ``None``."""
    if value is None:
        return None
    match = _RANGE.match(value.strip())
    if match is None or match.groups() == ("", ""):
        return None
    return match.group(1), match.group(2)


def cut(copy: Copy, byte_range: tuple[str, str] | None) -> Response:
    size = len(copy.body)
    headers = [(k, v) for k, v in copy.headers if k.lower() not in ("content-range",)]
    if byte_range is None:
        return Response(200, "OK", headers, copy.body)
    first, last = byte_range
    if not first:
        start, end = max(0, size - int(last)), size - 1
    else:
        start, end = int(first), min(size - 1, int(last)) if last else size - 1
    if start >= size or start > end:
        headers = [("Content-Type", "application/xml"), ("Content-Range", f"bytes */{size}")]
        xml = b"<Error><Code>InvalidRange</Code><Message>The requested range is not satisfiable"
        return Response(
            416, "Requested Range Not Satisfiable", headers, xml + b"</Message></Error>"
        )
    headers.append(("Content-Range", f"bytes {start}-{end}/{size}"))
    return Response(206, "Partial Content", headers, memoryview(copy.body)[start : end + 1])
