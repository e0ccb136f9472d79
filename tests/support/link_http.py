"""HTTP/1.1 over asyncio streams, as much as the link proxy needs: message heads, bodies, upstream.

Bodies are read whole (``Content-Length``, chunked, or up to the end of the connection), which is
all the proxy needs: it answers from memory, so that it can pace every byte it sends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

__all__ = [
    "BLOCK",
    "HOP_BY_HOP",
    "Message",
    "Reset",
    "Response",
    "Upstream",
    "header",
    "read_body",
    "read_head",
]

#: Bytes read or written (and paced) at a time.
BLOCK = 256 << 10
#: Headers that describe one connection's framing, not the message: never forwarded as they are.
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding"}
    | {"upgrade", "expect", "content-length"}
)


def header(headers: list[tuple[str, str]], name: str) -> str | None:
    """The value of header ``name`` (lower case) in ``headers``, or ``None``."""
    return next((value for key, value in headers if key.lower() == name), None)


class Reset(Exception):
    """Raised to reset the client's connection now."""


@dataclass
class Message:
    """A request or response head: its first line's parts and headers, names as sent."""

    start: tuple[str, str, str]
    headers: list[tuple[str, str]]

    def get(self, name: str) -> str | None:
        """The value of header ``name`` (any case), or ``None``."""
        return header(self.headers, name.lower())

    def forwarded(self) -> list[tuple[str, str]]:
        """The headers to pass on: all but the hop-by-hop ones."""
        return [(k, v) for k, v in self.headers if k.lower() not in HOP_BY_HOP]


async def read_head(reader: asyncio.StreamReader) -> Message | None:
    """The next message head on ``reader``, or ``None`` at a clean end of the connection.

    Raises:
        ValueError: The head is not HTTP.
    """
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as error:
        if error.partial.strip():
            raise
        return None
    lines = raw.decode("latin-1").split("\r\n")
    first = lines[0].split(" ", 2)
    if len(first) < 2:
        raise ValueError(f"malformed HTTP message line {lines[0]!r}")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if line and not colon:
            raise ValueError(f"malformed HTTP header line {line!r}")
        if line:
            headers.append((name.strip(), value.strip()))
    return Message((first[0], first[1], first[2] if len(first) > 2 else ""), headers)


async def read_body(
    reader: asyncio.StreamReader,
    head: Message,
    throttle: Callable[[int], Awaitable[None]] | None = None,
    reset_at: int | None = None,
) -> bytes:
    """The body ``head`` announces (Content-Length or chunked), read through ``throttle``."""
    parts: list[bytes] = []
    got = 0

    async def read(count: int) -> bytes:
        nonlocal got
        data = await reader.readexactly(count)
        got += count
        if reset_at is not None and got >= reset_at:
            raise Reset
        if throttle is not None:
            await throttle(count)
        return data

    if (head.get("transfer-encoding") or "").lower() == "chunked":
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            while size:
                parts.append(await read(min(size, BLOCK)))
                size -= len(parts[-1])
            await reader.readexactly(2)
        while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
            pass
    else:
        left = int(head.get("content-length") or 0)
        while left:
            parts.append(await read(min(left, BLOCK)))
            left -= len(parts[-1])
    return b"".join(parts)


@dataclass
class Response:
    """A response to send: its body whole in memory; ``close`` ends the connection after it."""

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes | memoryview = b""
    close: bool = False


class Upstream:
    """One keep-alive connection to the server behind the proxy."""

    def __init__(self, host: str, port: int):
        self._address = (host, port)
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def request(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes = b""
    ) -> Response:
        """Send one request and read its whole response (reconnecting once if stale)."""
        for attempt in (0, 1):
            fresh = self._streams is None
            if self._streams is None:
                self._streams = await asyncio.open_connection(*self._address)
            reader, writer = self._streams
            lines = [f"{method} {target} HTTP/1.1", *(f"{k}: {v}" for k, v in headers)]
            if body or method in ("PUT", "POST"):
                lines.append(f"Content-Length: {len(body)}")
            try:
                writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
                writer.write(body)
                await writer.drain()
                head = await read_head(reader)
                if head is None:
                    raise ConnectionResetError("upstream closed the connection")
            except (ConnectionError, asyncio.IncompleteReadError):
                self.close()
                if fresh or attempt:
                    raise
                continue
            status = int(head.start[1])
            close = (head.get("connection") or "").lower() == "close"
            if method == "HEAD" or status in (204, 304) or status < 200:
                payload = b""
            elif head.get("content-length") is None and head.get("transfer-encoding") is None:
                payload, close = await reader.read(), True
            else:
                payload = await read_body(reader, head)
            if close:
                self.close()
            return Response(status, head.start[2], head.headers, payload)
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Close the connection (the next request opens a new one)."""
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None
