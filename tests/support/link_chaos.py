"""The link proxy's chaos mode: the faults trusted S3 clients are tested against, from a seed.

``Chaos`` tells the proxy (``LinkProxy(..., chaos=...)`` or ``proxy.chaos = ...``) which faults to
inject, per S3 operation (``operation``): independent rates per request, and countdowns (fail the
k-th request of an operation, or cut its body at the n-th read of ``READ`` bytes). Each fault
injected is logged on the request (``Logged.fault``). The faults:

============  =====================================================================================
``429``       ``429 Too Many Requests`` (``SlowDown``), the request not forwarded
``500``       ``500 Internal Server Error`` (``InternalError``), the request not forwarded
``503``       ``503 Service Unavailable`` (``ServiceUnavailable``), the request not forwarded
``reset``     the connection reset (``SO_LINGER`` 0) half-way through the request body (if it has
              one: the request never reaches the server) or else the response body
``short``     the connection closed cleanly half-way through a body its ``Content-Length`` promised
``drip``      the body sent at ``drip_bytes_per_s`` (one byte a second by default)
``error``     a ``200`` whose body is an S3 error document (``InternalError``) instead of the data
``bad_range`` a ``206`` whose ``Content-Range`` names other bytes (shifted by ``READ``)
``no_range``  a ``206`` without ``Content-Range``
``whole``     a ``200`` with the whole object, answering a ranged GET
``replace``   the object replaced (by ``Chaos.replace``) before a ranged GET is answered
``flip``      one bit of the body flipped
============  =====================================================================================

Standard library only, like the proxy.
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from support.link_http import Message, Response, header

__all__ = [
    "BODY_FAULTS",
    "FAULTS",
    "RANGE_FAULTS",
    "READ",
    "STATUS_FAULTS",
    "Chaos",
    "Countdown",
    "error_document",
    "operation",
]

#: The bytes of one "read" of a body, for countdowns that cut the n-th read.
READ = 64 << 10
#: Answered instead of forwarding the request: status, reason, S3 error code.
STATUS_FAULTS: dict[str, tuple[int, str, str]] = {
    "429": (429, "Too Many Requests", "SlowDown"),
    "500": (500, "Internal Server Error", "InternalError"),
    "503": (503, "Service Unavailable", "ServiceUnavailable"),
}
#: Faults in how a response body is delivered (any response with a body).
BODY_FAULTS = ("reset", "short", "drip", "flip")
#: Faults of the answer to a ranged GET.
RANGE_FAULTS = ("bad_range", "no_range", "whole", "replace")
FAULTS = (*STATUS_FAULTS, *BODY_FAULTS, "error", *RANGE_FAULTS)
_BUCKET_QUERY = re.compile(r"[?&](list-type|prefix|delimiter|uploads$|uploads&)")


def operation(method: str, target: str) -> str:
    """The S3 operation of a request: GET, HEAD, LIST, PUT, PART, CREATE, COMPLETE, DELETE...

    ``GET`` is a read of an object (``GetObject``); ``LIST`` any GET of a bucket; ``PART`` an
    ``UploadPart``; ``CREATE`` and ``COMPLETE`` the multipart upload's first and last requests.
    """
    path, _, query = target.partition("?")
    is_object = path.strip("/").count("/") >= 1
    if method == "GET":
        return "GET" if is_object and not _BUCKET_QUERY.search(target) else "LIST"
    if method == "PUT":
        return "PART" if "partNumber=" in query else "PUT"
    if method == "POST":
        if "uploadId=" in query:
            return "COMPLETE"
        return "CREATE" if "uploads" in query else "POST"
    return method


def error_document(code: str, message: str = "We encountered an internal error.") -> bytes:
    """S3's XML error body for ``code``."""
    request = uuid.uuid4().hex[:16].upper()
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>"
        f"<RequestId>{request}</RequestId><HostId>link-chaos</HostId></Error>"
    ).encode()


@dataclass(frozen=True)
class Countdown:
    """Inject ``fault`` into the ``k``-th request (1 = the first) of ``operation``.

    Attributes:
        operation: The operation counted (see :func:`operation`), ``"*"`` for all.
        k: Which request of it.
        fault: What to inject (one of ``FAULTS``).
        read: For ``reset`` and ``short``: cut the body at its ``read``-th read of ``READ``
            bytes (the reads before it arrive whole) instead of half-way.
    """

    operation: str
    k: int
    fault: str
    read: int | None = None


@dataclass
class Chaos:
    """Which faults the proxy injects, and with what seed.

    Attributes:
        rates: Per operation (``"*"``: every operation), the chance of each fault per request;
            a request draws each applicable fault in ``FAULTS`` order, the first hit wins.
        countdowns: Faults injected into the k-th request of an operation (before the rates).
        seed: Seed of every draw (fault, bit to flip): the same seed, the same faults for the
            same sequence of requests.
        drip_bytes_per_s: The pace of a ``drip``.
        replace: Called with the request target (``/bucket/key``) to replace the object, for
            ``replace`` (the proxy runs it in a thread, then answers the GET).
    """

    rates: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    countdowns: tuple[Countdown, ...] = ()
    seed: int = 0
    drip_bytes_per_s: float = 1.0
    replace: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        unknown = {f for rates in self.rates.values() for f in rates} | {
            c.fault for c in self.countdowns
        }
        unknown -= set(FAULTS)
        if unknown:
            raise ValueError(f"unknown chaos faults {sorted(unknown)}; known: {list(FAULTS)}")
        self._random = random.Random(self.seed)  # fault draws, not secrets
        self._counts: dict[str, int] = {}

    @classmethod
    def mix(
        cls, total: float, operations: tuple[str, ...] = ("GET",), seed: int = 0, **kwargs: object
    ) -> Chaos:
        """``total`` chance of a fault per request of ``operations``, spread over the faults
        that a client can retry (statuses, resets, short bodies, error bodies, range faults,
        flipped bits; not ``drip`` nor ``replace``, which need their own timeouts and hooks).
        """
        faults = [f for f in FAULTS if f not in ("drip", "replace")]
        each = {fault: total / len(faults) for fault in faults}
        return cls(dict.fromkeys(operations, each), seed=seed, **kwargs)  # type: ignore[arg-type]

    def count(self, method: str, target: str) -> tuple[str, Countdown | None]:
        """Count a request; its operation and the countdown it meets, if any."""
        op = operation(method, target)
        hit = None
        for name in (op, "*"):
            self._counts[name] = self._counts.get(name, 0) + 1
            for countdown in self.countdowns:
                if countdown.operation == name and countdown.k == self._counts[name]:
                    hit = hit or countdown
        return op, hit

    def draw(self, op: str, applicable: Callable[[str], bool]) -> str | None:
        """The fault the rates pick for a request of ``op`` (only ``applicable`` ones)."""
        rates = {**self.rates.get("*", {}), **self.rates.get(op, {})}
        for fault in FAULTS:
            rate = rates.get(fault, 0.0)
            if rate and applicable(fault) and self._random.random() < rate:
                return fault
        return None

    def flip(self, body: bytes | memoryview) -> bytes:
        """``body`` with one bit flipped (a drawn one)."""
        flipped = bytearray(body)
        if flipped:
            bit = self._random.randrange(len(flipped) * 8)
            flipped[bit // 8] ^= 1 << (bit % 8)
        return bytes(flipped)


def applies(fault: str, head: Message, response: Response | None, replace: bool) -> bool:
    """Whether ``fault`` can be injected into this request (``response``: its answer, if known).

    Statuses apply to any request (decided before it is forwarded); body faults to a response
    with a body; ``error`` to an object's data; range faults to a ``206``.
    """
    if fault in STATUS_FAULTS:
        return True
    if response is None:  # a request body is cut half-way; a range answered from a new version
        if fault == "reset":
            return int(head.get("content-length") or 0) > 0
        return fault == "replace" and replace and head.get("range") is not None
    data = response.status in (200, 206) and head.start[0] == "GET" and len(response.body) > 0
    if fault in BODY_FAULTS:
        return head.start[0] != "HEAD" and len(response.body) > 0
    if fault == "error":
        return data
    return fault in ("bad_range", "no_range", "whole") and data and response.status == 206


def status_response(fault: str) -> Response:
    """The answer of a status fault."""
    status, reason, code = STATUS_FAULTS[fault]
    return Response(
        status, reason, [("Content-Type", "application/xml")], error_document(code, reason)
    )


def range_response(fault: str, response: Response, whole: Response | None) -> Response:
    """``response`` (a ``206``) with its range fault: ``whole`` is the object's plain GET."""
    headers = [(k, v) for k, v in response.headers if k.lower() != "content-range"]
    if fault == "error":
        headers = [(k, v) for k, v in headers if k.lower() not in ("etag", "content-type")]
        xml = error_document("InternalError")
        return Response(200, "OK", [*headers, ("Content-Type", "application/xml")], xml)
    if fault == "no_range":
        return Response(206, response.reason, headers, response.body)
    if fault == "whole" and whole is not None:
        return Response(200, "OK", whole.headers, whole.body)
    content_range = header(response.headers, "content-range") or "bytes 0-0/1"
    match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+|\*)", content_range)
    if match is None:
        return Response(206, response.reason, headers, response.body)
    start, end, total = int(match.group(1)), int(match.group(2)), match.group(3)
    shifted = f"bytes {start + READ}-{end + READ}/{total}"
    return Response(206, response.reason, [*headers, ("Content-Range", shifted)], response.body)
