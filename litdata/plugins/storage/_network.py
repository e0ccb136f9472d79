"""The HTTP stack under fsspec's clients: its errors as builtins, and its timeouts.

s3fs, gcsfs and adlfs all speak HTTP through aiohttp. When a server is unreachable, cuts a
response short or answers ``5xx``, they raise aiohttp's (or ``http.client``'s) own errors,
which are not all ``OSError``; the core retries ``ConnectionError`` and ``TimeoutError``
(:func:`network_error`).

Each request waits at most a third of ``LITDATA_STORAGE_TIMEOUT`` (10 s of 30) for a byte, and
5 s to connect (:func:`request_timeouts`), so that the core can try a silent server twice
within that timeout; a transfer that keeps moving is never cut. Uploads also have a total
bound (:func:`upload_timeout`): aiohttp has no write timeout, and waits for an S3 PUT's
``100 Continue`` with none at all, so a server that accepts and never reads would hold an
upload forever.
"""

from __future__ import annotations

import asyncio
import http.client

from litdata.core import config

__all__ = ["network_error", "request_timeouts", "status_error", "upload_timeout"]

#: The slowest upload not cut off, in bytes per second (128 KiB/s, 1 Mbit/s).
_SLOWEST_UPLOAD = float(128 << 10)
#: The most seconds a request waits to connect.
_CONNECT = 5.0


def request_timeouts() -> tuple[float, float]:
    """``(connect, read)``: the seconds a request waits to connect, and for each next byte."""
    third = config.storage_timeout() / 3
    return min(_CONNECT, third), third


def upload_timeout(size: int) -> float:
    """The seconds an upload of ``size`` bytes may take in all: a read timeout, and 1 Mbit/s."""
    return request_timeouts()[1] + size / _SLOWEST_UPLOAD


#: HTTP statuses worth retrying: throttled, or the server failed.
_TRANSIENT = {408, 429, 500, 502, 503, 504}


def status_error(status: int, message: str) -> Exception | None:
    """The builtin error for an HTTP error status, or ``None`` when none fits."""
    if status == 404:  # noqa: PLR2004
        return FileNotFoundError(message)
    if status in (401, 403):
        return PermissionError(message)
    if status in _TRANSIENT:
        return ConnectionError(f"HTTP {status}: {message}")
    return None


def network_error(error: Exception) -> Exception | None:
    """A ``ConnectionError``/``TimeoutError`` (or the error a status means) for ``error``.

    ``None`` when ``error`` is not a network failure.
    """
    import aiohttp

    if isinstance(error, asyncio.TimeoutError | TimeoutError):
        return TimeoutError(str(error) or "The request timed out")
    if isinstance(error, aiohttp.ClientResponseError):
        return status_error(error.status, error.message)
    if isinstance(error, aiohttp.ClientError | http.client.HTTPException):
        return ConnectionError(f"{type(error).__name__}: {error}")
    return None
