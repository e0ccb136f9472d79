"""``network_error``: the builtin error for a failure of the HTTP stack under fsspec's clients.

s3fs, gcsfs and adlfs all speak HTTP through aiohttp. When a server is unreachable, cuts a
response short or answers ``5xx``, they raise aiohttp's (or ``http.client``'s) own errors,
which are not all ``OSError``; the core retries ``ConnectionError`` and ``TimeoutError``.
"""

from __future__ import annotations

import asyncio
import http.client

__all__ = ["network_error", "status_error"]

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
        return TimeoutError(str(error) or "The request timed out.")
    if isinstance(error, aiohttp.ClientResponseError):
        return status_error(error.status, error.message)
    if isinstance(error, aiohttp.ClientError | http.client.HTTPException):
        return ConnectionError(f"{type(error).__name__}: {error}")
    return None
