"""``ParallelUpload``: an object put to S3 as a multipart upload whose parts go at once.

One S3 connection carries tens of MB/s; a 64 MB chunk sent as one PUT waits on that cap. Here a
file of at least two parts (``part_size``, 8 MiB unless it would need more than 10,000 parts) is
a multipart upload whose parts are sent concurrently, and a smaller one is one ``PutObject``.
Every request of every upload in the process holds a place in one budget
(``LITDATA_UPLOAD_CONNECTIONS``: the node's ``LITDATA_CONNECTIONS``, 16, unless the processing
job gave each of its workers a share of it), so threads and uploads together never open more.

Each request is retried on its own when it fails transiently (``503 SlowDown``, ``5xx``, a reset
connection, a timeout), with exponential backoff and jitter, up to ``LITDATA_STORAGE_ATTEMPTS``
times: a throttled part is sent again, not the whole object. When an upload fails for good (or
is interrupted), it is aborted, so S3 keeps neither a half object (a multipart upload is
invisible until completed) nor the parts of a dangling upload. A ``CompleteMultipartUpload``
whose answer was lost and whose retry finds the upload gone is checked against the object:
its ETag (the digest of the parts' digests) tells whether it is this upload's.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from litdata.core import config
from litdata.plugins.storage._network import upload_timeout

__all__ = ["ParallelUpload", "part_size", "transient"]

T = TypeVar("T")

#: The smallest part S3 accepts (but the last), and the part size used unless it is too small.
MIN_PART = 5 << 20
PART = 8 << 20
#: S3's most parts per upload.
MAX_PARTS = 10_000
#: Seconds before the first retry of a request (doubled each time, with jitter).
_BACKOFF = 0.1
_PERMANENT = (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)


def part_size(size: int) -> int:
    """The part size for an object of ``size`` bytes: 8 MiB, or more to stay in 10,000 parts."""
    return max(PART, -(-size // MAX_PARTS))


#: One budget per event loop (s3fs runs one loop per process), shared by its uploads, with
#: the size it was made for (a new one is made when the setting changes).
_BUDGETS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[int, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)
_BUDGETS_LOCK = threading.Lock()


def _budget() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    size = config.upload_connections()
    with _BUDGETS_LOCK:
        known = _BUDGETS.get(loop)
        if known is None or known[0] != size:
            known = _BUDGETS[loop] = (size, asyncio.Semaphore(size))
        return known[1]


class ParallelUpload:
    """The upload of one local file to ``bucket/key`` through s3fs's client.

    Args:
        call: s3fs's ``_call_s3`` (``await call("put_object", Bucket=..., ...)``).
        transient: Whether an error is worth retrying.
        local_path: The file.
        bucket: The bucket.
        key: The object's key.
    """

    def __init__(
        self,
        call: Callable[..., Awaitable[Any]],
        transient: Callable[[BaseException], bool],
        local_path: str,
        bucket: str,
        key: str,
    ) -> None:
        self._call = call
        self._transient = transient
        self.local_path = local_path
        self.bucket = bucket
        self.key = key
        self.size = os.path.getsize(local_path)
        self.part_size = part_size(self.size)
        self._attempts = config.integer("LITDATA_STORAGE_ATTEMPTS", 5, minimum=1)
        #: The requests sent, retries included (for tests and stats).
        self.requests = 0
        #: Whether the store answered the last request that failed (it did not time out).
        self._answering = True

    @property
    def multipart(self) -> bool:
        """Whether the file goes as a multipart upload (at least two parts)."""
        return self.size >= 2 * self.part_size

    async def run(self) -> None:
        """Upload the file: parts at once, or one PUT.

        Raises:
            Exception: The last error of a request that kept failing (the upload is aborted).
        """
        if not self.multipart:
            body = await asyncio.to_thread(self._read, 0, self.size)
            await self._request("put_object", Bucket=self.bucket, Key=self.key, Body=body)
            return
        upload_id = await self._create()
        try:
            count = -(-self.size // self.part_size)
            etags = await _all_or_none(
                [self._part(upload_id, number) for number in range(1, count + 1)]
            )
            await self._complete(upload_id, etags)
        except BaseException:
            await asyncio.shield(self._abort(upload_id))
            raise

    async def _create(self) -> str:
        """Start the multipart upload; return its id.

        When an attempt failed, S3 may have started an upload whose id never arrived: those of
        this key (which only this writer writes) are aborted, so none is left dangling.
        """
        failed: list[BaseException] = []
        created = await self._request(
            "create_multipart_upload", failed.append, Bucket=self.bucket, Key=self.key
        )
        upload_id = str(created["UploadId"])
        if failed:
            listed = await self._request(
                "list_multipart_uploads", Bucket=self.bucket, Prefix=self.key
            )
            for upload in listed.get("Uploads", []):
                if upload.get("Key") == self.key and upload.get("UploadId") != upload_id:
                    await self._abort(str(upload["UploadId"]))
        return upload_id

    def _read(self, offset: int, length: int) -> bytes:
        with open(self.local_path, "rb") as source:
            return os.pread(source.fileno(), length, offset)

    async def _part(self, upload_id: str, number: int) -> tuple[str, str]:
        """Send part ``number``; return its ETag and its MD5 (hex)."""
        offset = (number - 1) * self.part_size
        body = await asyncio.to_thread(self._read, offset, min(self.part_size, self.size - offset))
        answer = await self._request(
            "upload_part",
            Bucket=self.bucket,
            Key=self.key,
            UploadId=upload_id,
            PartNumber=number,
            Body=body,
        )
        return str(answer["ETag"]), hashlib.md5(body, usedforsecurity=False).hexdigest()

    async def _complete(self, upload_id: str, etags: list[tuple[str, str]]) -> None:
        parts = [{"PartNumber": n, "ETag": etag} for n, (etag, _) in enumerate(etags, start=1)]
        try:
            await self._request(
                "complete_multipart_upload",
                Bucket=self.bucket,
                Key=self.key,
                UploadId=upload_id,
                MultipartUpload={"Parts": parts},
            )
        except FileNotFoundError:  # NoSuchUpload: an earlier attempt may have completed it
            digest = hashlib.md5(usedforsecurity=False)
            for _, md5 in etags:
                digest.update(bytes.fromhex(md5))
            expected = f'"{digest.hexdigest()}-{len(etags)}"'
            head = await self._request("head_object", Bucket=self.bucket, Key=self.key)
            if head.get("ETag") != expected:
                raise

    async def _abort(self, upload_id: str) -> None:
        """Abort the upload, so that S3 keeps none of its parts (best effort).

        Retried while the store answers (a reset, a 503), one request when it fell silent.
        """
        try:
            await self._request(
                "abort_multipart_upload",
                Bucket=self.bucket,
                Key=self.key,
                UploadId=upload_id,
                retried=self._answering,
            )
        except FileNotFoundError:  # already gone
            pass
        except Exception:  # the original error is the one to report
            return

    async def _request(
        self,
        method: str,
        on_retry: Callable[[BaseException], None] | None = None,
        *,
        retried: bool = True,
        **arguments: Any,
    ) -> Any:
        """One S3 request within the budget and a deadline for its bytes, retried with backoff.

        Args:
            method: The client's method (``"upload_part"``).
            on_retry: Told of each failure that is retried.
            retried: Whether a transient failure is retried (an abort after a failure is not:
                the store is failing already).
            **arguments: The method's arguments.
        """
        body = arguments.get("Body")
        timeout = upload_timeout(len(body) if isinstance(body, bytes) else 0)
        # As the core's retries: no new attempt once the storage timeout (and the time this
        # request's bytes may take) has passed since the first, so a frozen server is an
        # error within the deadline, not after every attempt's own timeout.
        deadline = time.monotonic() + max(config.storage_timeout(), timeout)
        attempts = self._attempts if retried else 1
        for attempt in range(1, attempts + 1):
            try:
                async with _budget():
                    self.requests += 1
                    return await asyncio.wait_for(self._call(method, **arguments), timeout)
            except Exception as error:
                self._answering = not isinstance(error, TimeoutError)
                delay = _BACKOFF * 2 ** (attempt - 1) * (0.5 + random.random())  # noqa: S311
                late = time.monotonic() + delay >= deadline
                if attempt == attempts or late or not self._transient(error):
                    raise
                if on_retry is not None:
                    on_retry(error)
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover


async def _all_or_none(work: list[Coroutine[Any, Any, T]]) -> list[T]:
    """The results of ``work`` run at once; at the first failure the rest are cancelled."""
    tasks = [asyncio.ensure_future(item) for item in work]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            if task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        return [task.result() for task in tasks]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def transient(error: BaseException) -> bool:
    """Whether a (translated) storage error may pass if the request is sent again."""
    if isinstance(error, _PERMANENT):
        return False
    return isinstance(error, OSError | TimeoutError | ConnectionError)
