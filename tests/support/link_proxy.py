"""A realistic link to object storage: an HTTP/1.1 proxy on loopback in front of the moto server.

Real S3 answers the first byte in tens of milliseconds, caps what one connection carries, and
answers ``503 SlowDown`` above a request rate. Loopback moto does none of that, so a reader that
would crawl on S3 looks fine on it. ``LinkProxy`` sits between a client and moto and adds, per
``LinkSettings``:

- a time to first byte per request (``ttfb_s`` plus uniform jitter of ``±jitter_s``), counted from
  the moment the whole request arrived;
- bandwidth caps as token buckets, one per connection and one for the whole link, each direction
  (request bodies up, response bodies down) with its own buckets;
- a request-rate limit (a token bucket of ``requests_per_s`` with ``request_burst``) whose
  excess requests are answered ``503 SlowDown`` with S3's XML error body, after the time to first
  byte, as S3 does; the connection stays open unless the client announced ``Expect:
  100-continue`` (its body is then never sent, so the connection is closed);
- connection resets with probability ``reset_probability`` per request: half-way through the
  request body if there is one (the request never reaches moto), else half-way through the
  response body; the socket is closed with ``SO_LINGER`` 0, so the client sees a reset;
- two lies of broken servers and proxies: ``ignore_range`` answers a ranged ``GET`` with the
  whole object (``200``), ``short_ranges`` answers it with the first half of the range only
  (a ``206`` whose ``Content-Length`` matches the short body);
- a drip: ``drip_s`` sends every response body one byte at a time, a byte each ``drip_s``
  seconds (a server that keeps answering, too slowly ever to finish);
- chaos (``LinkProxy.chaos``, see ``link_chaos.py``): error statuses, cut, short, dripped or
  flipped bodies, error documents, lying ranges and replaced objects, per operation, by rate or
  countdown, from a seed; each logged on its request (``Logged.fault``).

Connections are kept alive (HTTP/1.1 keep-alive both ways: each client connection has its own
connection to moto), and every request is logged (``LinkProxy.log``: method, path, ``Range``,
status, bytes each way, connection id) so tests and the bench count requests and ranges.

moto copies a whole object on every GET (about 40 ms of CPU per 64 MB), which would make moto, not
the link, the limit. So the proxy answers a plain ``GET`` of an object (no query string, no
condition but ``If-Match``, no ``Range`` or one byte range) from an in-memory copy: it first
asks moto for the object's ``HEAD`` (cheap: moto copies nothing), and serves its copy only when
the ETag moto reports equals the copy's (and the ``If-Match``, if any: else moto answers);
otherwise it fetches the whole object once (concurrent requests
for the same version share that fetch), keeps it, and cuts the range from it. Since every GET is
validated against moto, an object overwritten by any client, through the proxy or not, is never
served stale. Copies are evicted least recently used beyond ``cache_bytes``. Everything else
(lists, PUTs, multipart uploads, HEADs, errors) is forwarded as it is.

Standard library only: the bench (``bench/remote_link.py``) imports this file directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import re
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from support.link_chaos import (
    READ,
    STATUS_FAULTS,
    Chaos,
    applies,
    operation,
    range_response,
    status_response,
)
from support.link_copies import ObjectCopies, cut, parse_range
from support.link_http import (
    BLOCK,
    HOP_BY_HOP,
    Message,
    Reset,
    Response,
    Upstream,
    header,
    read_body,
    read_head,
)

__all__ = ["DEFAULT_LINK", "HARSH_LINK", "OPEN_LINK", "LinkProxy", "LinkSettings", "Logged"]

#: Conditions the proxy leaves to moto (``If-Match``, which ranged downloads send to pin the
#: version, is checked against the copy's ETag).
_CONDITIONAL = ("if-none-match", "if-modified-since", "if-unmodified-since")
_SLOWDOWN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    "<Message>Please reduce your request rate.</Message><RequestId>{id}</RequestId>"
    "<HostId>link-proxy</HostId></Error>"
)


@dataclass(frozen=True)
class LinkSettings:
    """What the link adds to every request; ``None`` means no limit.

    Attributes:
        ttfb_s: Time to first byte of every response, in seconds.
        jitter_s: The time to first byte varies uniformly by up to this much either way.
        connection_bytes_per_s: Bandwidth cap of one connection, each direction.
        total_bytes_per_s: Bandwidth cap of all connections together, each direction.
        requests_per_s: Requests admitted per second; the excess is answered ``503 SlowDown``.
        request_burst: Requests admitted at once above the rate (default: a tenth of a second's
            worth, at least 1).
        reset_probability: Chance that a request's connection is reset half-way.
        reset_methods: The methods whose requests may be reset (all when ``None``).
        ignore_range: Answer a ranged ``GET`` with the whole object, as a server without
            range support does.
        short_ranges: Answer a ranged ``GET`` with the first half of the bytes asked for.
        drip_s: Send response bodies one byte every this many seconds.
    """

    ttfb_s: float = 0.0
    jitter_s: float = 0.0
    connection_bytes_per_s: float | None = None
    total_bytes_per_s: float | None = None
    requests_per_s: float | None = None
    request_burst: float | None = None
    reset_probability: float = 0.0
    reset_methods: frozenset[str] | None = None
    ignore_range: bool = False
    short_ranges: bool = False
    drip_s: float | None = None

    def burst(self) -> float:
        """Requests admitted at once by the request-rate bucket."""
        if self.request_burst is not None:
            return self.request_burst
        return max(1.0, (self.requests_per_s or 0.0) / 10)

    def describe(self) -> str:
        """A short label, e.g. ``30 ms, 50 MB/s/conn, 400 MB/s, 200 req/s``."""

        def mb(rate: float | None) -> str:
            return "∞" if rate is None else f"{rate / 1e6:g} MB/s"

        rate = "∞" if self.requests_per_s is None else f"{self.requests_per_s:g}"
        return (
            f"{self.ttfb_s * 1000:g} ms, {mb(self.connection_bytes_per_s)}/conn, "
            f"{mb(self.total_bytes_per_s)}, {rate} req/s"
        )


#: No limits: the proxy only forwards (and logs).
OPEN_LINK = LinkSettings()
#: A good link to a nearby region.
DEFAULT_LINK = LinkSettings(0.030, 0.006, 50e6, 400e6, 200.0)
#: A far, busy one.
HARSH_LINK = LinkSettings(0.080, 0.016, 25e6, 200e6, 50.0)


@dataclass(frozen=True)
class Logged:
    """One request as the proxy saw it.

    Attributes:
        method: The HTTP method.
        path: The request target (path and query string).
        range: The ``Range`` header, or ``None``.
        status: The status answered (0 when the connection was reset before an answer).
        bytes_out: Response body bytes sent to the client.
        bytes_in: Request body bytes received from the client.
        connection: The id of the client connection (1, 2, ... in order of accepting).
        reset: Whether the proxy reset the connection during this request.
        started: When its head arrived (``time.monotonic()``).
        answered: When its answer's head was sent (``started`` if never).
        fault: The chaos fault injected into it (see ``link_chaos.py``), if any.
        headers: The request's headers, names in lower case.
    """

    method: str
    path: str
    range: str | None
    status: int
    bytes_out: int
    bytes_in: int
    connection: int
    reset: bool = False
    started: float = 0.0
    answered: float = 0.0
    fault: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


class _Bucket:
    """A token bucket of bytes (or requests) that may go into debt: takers sleep it off."""

    def __init__(self, rate: Callable[[], float | None], capacity: Callable[[float], float]):
        self._rate = rate
        self._capacity = capacity
        self._tokens = math.inf  # full: the first refill caps it at the capacity
        self._stamp = time.monotonic()

    def _refill(self, rate: float) -> None:
        now = time.monotonic()
        self._tokens = min(self._capacity(rate), self._tokens + (now - self._stamp) * rate)
        self._stamp = now

    async def take(self, amount: float) -> None:
        """Take ``amount``, waiting until the bucket has paid for it."""
        rate = self._rate()
        if rate is None:
            return
        self._refill(rate)
        self._tokens -= amount
        if self._tokens < 0:
            await asyncio.sleep(-self._tokens / rate)

    def admit(self) -> bool:
        """Take one token if there is one now; never waits."""
        rate = self._rate()
        if rate is None:
            return True
        self._refill(rate)
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True


def _byte_capacity(rate: float) -> float:
    return max(float(BLOCK), rate * 0.005)


@dataclass
class _Connection:
    id: int
    upstream: Upstream
    down: _Bucket
    up: _Bucket
    closing: bool = False


@dataclass
class _Counters:
    log: list[Logged] = field(default_factory=list)
    connections: int = 0


class LinkProxy:
    """An HTTP/1.1 proxy to ``upstream_url`` that behaves like a link to real object storage.

    Use it as a context manager: it runs its own event loop in a thread and listens on
    ``endpoint`` until the block ends. ``settings`` may be replaced at any time (it applies from
    the next byte).

    Args:
        upstream_url: ``http://HOST:PORT`` of the server behind it (moto).
        settings: What the link adds (see ``LinkSettings``).
        port: The port to listen on (default: any free one).
        cache_bytes: The most bytes of object copies kept to spare moto its copy per GET.
        seed: Seed of the jitter and resets, for repeatable runs.
        chaos: The faults to inject (see ``link_chaos.py``; ``None``: none). May be replaced
            at any time, like ``settings``.
    """

    def __init__(
        self,
        upstream_url: str,
        settings: LinkSettings = OPEN_LINK,
        *,
        port: int = 0,
        cache_bytes: int = 2 << 30,
        seed: int | None = None,
        chaos: Chaos | None = None,
    ):
        match = re.fullmatch(r"http://([^:/]+):(\d+)/?", upstream_url)
        if match is None:
            raise ValueError(f"upstream_url must be http://HOST:PORT, not {upstream_url!r}")
        self._upstream = (match.group(1), int(match.group(2)))
        self.settings = settings
        self.chaos = chaos
        self._port = port
        self._copies = ObjectCopies(cache_bytes)
        self._random = random.Random(seed)  # jitter, not secrets
        self._counters = _Counters()
        self._total_down = _Bucket(lambda: self.settings.total_bytes_per_s, _byte_capacity)
        self._total_up = _Bucket(lambda: self.settings.total_bytes_per_s, _byte_capacity)
        self._requests = _Bucket(
            lambda: self.settings.requests_per_s, lambda _: self.settings.burst()
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self.endpoint = ""

    # -- lifetime ------------------------------------------------------------------------------
    def __enter__(self) -> LinkProxy:
        ready = threading.Event()
        errors: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._run, args=(ready, errors), name="link-proxy", daemon=True
        )
        self._thread.start()
        ready.wait(30)
        if errors or not self.endpoint:
            raise RuntimeError(f"the link proxy did not start: {errors or 'no answer in 30 s'}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)

    def _run(self, ready: threading.Event, errors: list[BaseException]) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            server = await asyncio.start_server(self._serve, "127.0.0.1", self._port, limit=1 << 20)
            self.endpoint = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
            ready.set()
            async with server:
                await self._stop.wait()

        try:
            asyncio.run(main())
        except BaseException as error:  # reported to __enter__
            errors.append(error)
            ready.set()

    # -- what tests read -----------------------------------------------------------------------
    @property
    def log(self) -> list[Logged]:
        """The requests so far, in the order they were answered."""
        return list(self._counters.log)

    def reset_log(self) -> None:
        """Forget the requests so far."""
        self._counters.log = []

    def cpu_s(self) -> float:
        """CPU seconds the proxy's own thread has used."""
        if self._loop is None:
            return 0.0

        async def probe() -> float:
            return time.thread_time()

        return asyncio.run_coroutine_threadsafe(probe(), self._loop).result(10)

    def stats(self) -> dict[str, Any]:
        """Counts over the log: requests, ranged, 503s, resets, bytes each way, CPU, settings."""
        log = self.log
        return {
            "requests": len(log),
            "ranged": sum(entry.range is not None for entry in log),
            "slowdowns": sum(entry.status == 503 for entry in log),
            "resets": sum(entry.reset for entry in log),
            "faults": sum(entry.fault is not None for entry in log),
            "bytes_out": sum(entry.bytes_out for entry in log),
            "bytes_in": sum(entry.bytes_in for entry in log),
            "connections": self._counters.connections,
            "cpu_s": self.cpu_s(),
            "settings": asdict(self.settings),
        }

    @contextlib.contextmanager
    def using(self, settings: LinkSettings) -> Iterator[LinkProxy]:
        """Apply ``settings`` with a fresh log for a block, then restore the previous ones."""
        before, self.settings = self.settings, settings
        self.reset_log()
        try:
            yield self
        finally:
            self.settings = before

    # -- serving -------------------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._counters.connections += 1
        settings = lambda: self.settings.connection_bytes_per_s  # noqa: E731
        connection = _Connection(
            self._counters.connections,
            Upstream(*self._upstream),
            _Bucket(settings, _byte_capacity),
            _Bucket(settings, _byte_capacity),
        )
        writer.transport.set_write_buffer_limits(high=BLOCK)
        try:
            while not connection.closing and (head := await read_head(reader)) is not None:
                await self._answer(head, reader, writer, connection)
        except Reset:
            sock = writer.get_extra_info("socket")
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        except asyncio.CancelledError:  # the proxy stops: open connections are dropped
            return
        finally:
            connection.upstream.close()
            writer.close()

    async def _throttle_up(self, connection: _Connection, count: int) -> None:
        await connection.up.take(count)
        await self._total_up.take(count)

    async def _answer(
        self,
        head: Message,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        connection: _Connection,
    ) -> None:
        method, target, version = head.start
        settings = self.settings
        expect = (head.get("expect") or "").lower() == "100-continue"
        connection.closing = (head.get("connection") or "").lower() == "close" or version.endswith(
            "1.0"
        )
        now = time.monotonic()
        entry = Logged(method, target, head.get("range"), 0, 0, 0, connection.id, False, now, now)
        reset = self._random.random() < settings.reset_probability and (
            settings.reset_methods is None or method in settings.reset_methods
        )
        admitted = self._requests.admit()
        fault, read = self._pre_fault(head)
        entry = replace(entry, fault=fault, headers={k.lower(): v for k, v in head.headers})
        reset = reset or (fault == "reset" and int(head.get("content-length") or 0) > 0)
        if fault in STATUS_FAULTS:
            admitted = False
        body = b""
        if admitted or not expect:
            if expect:
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            size = int(head.get("content-length") or 0) or None
            reset_at = size // 2 + 1 if reset and size else None
            try:
                body = await read_body(
                    reader, head, lambda n: self._throttle_up(connection, n), reset_at
                )
            except Reset:
                self._counters.log.append(replace(entry, bytes_in=reset_at or 0, reset=True))
                raise
        entry = replace(entry, bytes_in=len(body))
        arrived = time.monotonic()
        if admitted:
            if settings.ignore_range and head.get("range") is not None:
                kept = [(k, v) for k, v in head.headers if k.lower() != "range"]
                head = Message(head.start, kept)
            if fault == "replace" and self.chaos is not None and self.chaos.replace is not None:
                await asyncio.to_thread(self.chaos.replace, target.partition("?")[0])
            response = await self._response(head, body, connection)
            if settings.short_ranges and response.status == 206:
                response.body = response.body[: len(response.body) // 2]
            if fault is None or fault == "replace":
                fault = self._post_fault(head, response, fault)
            response, fault = await self._faulty(head, response, fault, connection)
            entry = replace(entry, fault=fault)
        else:
            if fault in STATUS_FAULTS:
                response = status_response(fault)
            else:
                xml = _SLOWDOWN.format(id=uuid.uuid4().hex[:16].upper()).encode()
                response = Response(503, "Slow Down", [("Content-Type", "application/xml")], xml)
            response.close = expect
            reset = False
        delay = settings.ttfb_s + self._random.uniform(-settings.jitter_s, settings.jitter_s)
        await asyncio.sleep(max(0.0, arrived + delay - time.monotonic()))
        connection.closing = connection.closing or response.close
        await self._send(writer, method, response, connection, entry, reset, read)

    def _pre_fault(self, head: Message) -> tuple[str | None, int | None]:
        """The fault decided before forwarding: a countdown's, a status or ``replace``."""
        chaos = self.chaos
        if chaos is None:
            return None, None
        op, countdown = chaos.count(head.start[0], head.start[1])
        if countdown is not None:
            return countdown.fault, countdown.read
        early = lambda f: applies(f, head, None, chaos.replace is not None)  # noqa: E731
        return chaos.draw(op, early), None

    def _post_fault(self, head: Message, response: Response, fault: str | None) -> str | None:
        """The fault the rates pick once the answer is known (``fault``, if one was)."""
        chaos = self.chaos
        if chaos is None or fault is not None:
            return fault
        late = lambda f: f not in STATUS_FAULTS and applies(f, head, response, False)  # noqa: E731
        return chaos.draw(operation(*head.start[:2]), late)

    async def _faulty(
        self, head: Message, response: Response, fault: str | None, connection: _Connection
    ) -> tuple[Response, str | None]:
        """``response`` with ``fault`` applied to it (body delivery faults are ``_send``'s),
        and the fault, or ``None`` if it could not be applied.
        """
        if fault == "replace":
            return response, fault
        if fault is None or not applies(fault, head, response, False):
            return response, None
        if fault == "flip" and self.chaos is not None:
            return replace(response, body=self.chaos.flip(response.body)), fault
        if fault in ("error", "bad_range", "no_range"):
            return range_response(fault, response, None), fault
        if fault == "whole":  # the proxy's GET carries the ranged GET's signature: moto only
            plain = [(k, v) for k, v in head.forwarded() if k.lower() != "range"]
            whole = await connection.upstream.request("GET", head.start[1], plain)
            if whole.status == 200:
                return range_response(fault, response, whole), fault
            return response, None
        return response, fault

    async def _send(
        self,
        writer: asyncio.StreamWriter,
        method: str,
        response: Response,
        connection: _Connection,
        entry: Logged,
        reset: bool,
        read: int | None = None,
    ) -> None:
        headers = [(k, v) for k, v in response.headers if k.lower() not in HOP_BY_HOP]
        length = next((v for k, v in response.headers if k.lower() == "content-length"), None)
        if method != "HEAD":
            length = str(len(response.body))
        if length is not None and response.status not in (204, 304):
            headers.append(("Content-Length", length))
        if connection.closing:
            headers.append(("Connection", "close"))
        lines = [
            f"HTTP/1.1 {response.status} {response.reason}",
            *(f"{k}: {v}" for k, v in headers),
        ]
        body = memoryview(response.body)
        cut = len(body) // 2 if reset else len(body)
        if entry.fault in ("reset", "short") and method != "HEAD" and body:
            cut = min(len(body) - 1, read * READ) if read else len(body) // 2
            reset = reset or entry.fault == "reset"
            connection.closing = connection.closing or entry.fault == "short"
        chaos_drip = entry.fault == "drip"
        entry = replace(entry, status=response.status, reset=reset, answered=time.monotonic())
        if reset and not cut:
            self._counters.log.append(entry)
            raise Reset
        # Logged before the last byte goes, so that a client that has its answer finds it logged.
        log = self._counters.log
        log.append(replace(entry, bytes_out=cut))
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        sent = 0
        try:
            while sent < cut:
                pause = self._byte_pause(chaos_drip)  # read again: a drip ends with its settings
                block = body[sent : min(cut, sent + (BLOCK if pause is None else 1))]
                if pause is not None:
                    await asyncio.sleep(pause)
                await connection.down.take(len(block))
                await self._total_down.take(len(block))
                writer.write(block)
                await writer.drain()
                sent += len(block)
        finally:
            if sent < cut:  # the client went away
                log[log.index(replace(entry, bytes_out=cut))] = replace(entry, bytes_out=sent)
        if reset:
            raise Reset

    def _byte_pause(self, chaos_drip: bool) -> float | None:
        """Seconds between the bytes of a dripped body (``drip_s``, or a chaos drip), else None."""
        if self.settings.drip_s is not None:
            return self.settings.drip_s
        if chaos_drip and self.chaos is not None:
            return 1 / self.chaos.drip_bytes_per_s
        return None

    async def _response(self, head: Message, body: bytes, connection: _Connection) -> Response:
        method, target, _ = head.start
        headers = head.forwarded()
        byte_range = head.get("range")
        parsed = parse_range(byte_range)
        cacheable = (
            method == "GET"
            and "?" not in target
            and target.count("/") >= 2  # /bucket/key
            and not any(head.get(name) for name in _CONDITIONAL)
            and (byte_range is None or parsed is not None)
        )
        if not cacheable:
            return await connection.upstream.request(method, target, headers, body)
        plain = [(k, v) for k, v in headers if k.lower() != "range"]
        key = (head.get("host") or "", target)
        probe = await self._copies.probe(
            key, lambda: connection.upstream.request("HEAD", target, plain)
        )
        etag = header(probe.headers, "etag")
        wanted = head.get("if-match")
        if probe.status != 200 or etag is None or (wanted is not None and wanted != etag):
            return await connection.upstream.request(method, target, headers, body)
        copy = await self._copies.get(
            key, etag, lambda: connection.upstream.request("GET", target, plain)
        )
        if copy is None:
            return await connection.upstream.request(method, target, headers, body)
        return cut(copy, parsed, (head.get("x-amz-checksum-mode") or "").upper() == "ENABLED")
