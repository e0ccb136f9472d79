"""The link proxy itself: its caps, latency, throttling, resets and copies do what they promise.

Timing asserts are loose on purpose (the machine is shared): they compare what the caps predict
with a factor of slack, or one mode against another.
"""

from __future__ import annotations

import http.client
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import boto3
import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError, ConnectionClosedError

from support.link_proxy import DEFAULT_LINK, HARSH_LINK, LinkProxy, LinkSettings
from support.links import Link

MB = 1_000_000


def _put(link: Link, size: int, key: str = "object") -> tuple[str, bytes]:
    """A fresh bucket holding ``size`` random bytes at ``key``, written to moto directly."""
    bucket = link.new_bucket()
    data = os.urandom(size)
    boto3.client("s3", **link.store.storage_options).put_object(Bucket=bucket, Key=key, Body=data)
    return f"/{bucket}/{key}", data


def _signed(method: str, url: str, headers: dict[str, str] | None) -> dict[str, str]:
    """``headers`` with S3's signature added (moto refuses anonymous requests)."""
    request = AWSRequest(method=method, url=url, headers=headers or {})
    S3SigV4Auth(Credentials("testing", "testing"), "s3", "us-east-1").add_auth(request)
    return dict(request.headers.items())


def _get(
    endpoint: str, path: str, headers: dict[str, str] | None = None, method: str = "GET"
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection(endpoint.removeprefix("http://"), timeout=60)
    try:
        connection.request(method, path, headers=_signed(method, endpoint + path, headers))
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def _ranged(endpoint: str, path: str, size: int, parts: int) -> bytes:
    step = -(-size // parts)
    ranges = [f"bytes={start}-{min(size, start + step) - 1}" for start in range(0, size, step)]
    with ThreadPoolExecutor(parts) as pool:
        answers = list(pool.map(lambda r: _get(endpoint, path, {"Range": r}), ranges))
    assert {status for status, _, _ in answers} == {206}
    return b"".join(body for _, _, body in answers)


def _no_retries(link: Link) -> Any:
    """A boto3 client through the link that tries each request once."""
    config = Config(retries={"total_max_attempts": 1})
    return boto3.client("s3", **link.storage_options, config=config)


def _timed(work: Any) -> tuple[float, Any]:
    start = time.monotonic()
    result = work()
    return time.monotonic() - start, result


def test_one_get_takes_the_time_to_first_byte_plus_the_connection_cap(link: Link) -> None:
    path, data = _put(link, 8 * MB)
    link.use(LinkSettings(ttfb_s=0.05, connection_bytes_per_s=20 * MB))
    seconds, (status, _, body) = _timed(lambda: _get(link.endpoint, path))
    predicted = 0.05 + 8 * MB / (20 * MB)
    assert status == 200
    assert body == data
    assert 0.8 * predicted <= seconds <= 3 * predicted + 1


def test_eight_ranged_gets_go_past_the_connection_cap_and_assemble_the_object(link: Link) -> None:
    path, data = _put(link, 32 * MB)
    link.use(LinkSettings(ttfb_s=0.03, connection_bytes_per_s=10 * MB, total_bytes_per_s=400 * MB))
    one, (_, _, whole) = _timed(lambda: _get(link.endpoint, path))
    link.proxy.reset_log()
    eight, parts = _timed(lambda: _ranged(link.endpoint, path, len(data), 8))
    assert whole == data
    assert parts == data
    assert eight * 3 <= one, (one, eight)
    log = link.log
    assert len(log) == 8
    assert all(entry.range is not None and entry.status == 206 for entry in log)
    assert len({entry.connection for entry in log}) == 8
    assert sum(entry.bytes_out for entry in log) == len(data)
    assert link.proxy.stats()["ranged"] == 8


def test_the_total_cap_holds_across_connections(link: Link) -> None:
    path, data = _put(link, 4 * MB)
    _get(link.endpoint, path)  # the proxy now has its copy
    link.use(LinkSettings(total_bytes_per_s=40 * MB))
    with ThreadPoolExecutor(8) as pool:
        seconds, answers = _timed(
            lambda: list(pool.map(lambda _: _get(link.endpoint, path), range(8)))
        )
    assert all(body == data for _, _, body in answers)
    assert 8 * len(data) / seconds <= 1.2 * 40 * MB, seconds


def test_requests_above_the_rate_get_slowdown_and_the_log_counts_them(link: Link) -> None:
    path, _ = _put(link, 1000)
    link.use(LinkSettings(requests_per_s=20, request_burst=2))
    with ThreadPoolExecutor(4) as pool:
        seconds, answers = _timed(
            lambda: list(pool.map(lambda _: _get(link.endpoint, path, method="HEAD"), range(60)))
        )
    statuses = [status for status, _, _ in answers]
    admitted = statuses.count(200)
    assert statuses.count(503) + admitted == 60
    assert statuses.count(503) > 0
    assert admitted <= 20 * seconds + 2 + 1
    stats = link.proxy.stats()
    assert (stats["requests"], stats["slowdowns"], stats["ranged"]) == (60, 60 - admitted, 0)
    status, headers, body = _get(link.endpoint, path)
    while status != 503:
        status, headers, body = _get(link.endpoint, path)
    assert b"<Code>SlowDown</Code>" in body
    assert headers["Content-Type"] == "application/xml"


def test_boto3_reads_slowdown_as_s3s_error(link: Link) -> None:
    path, _ = _put(link, 1000)
    link.use(LinkSettings(requests_per_s=0.001, request_burst=0))
    client = _no_retries(link)
    bucket, key = path.strip("/").split("/", 1)
    with pytest.raises(ClientError) as error:
        client.get_object(Bucket=bucket, Key=key)
    assert error.value.response["Error"]["Code"] == "SlowDown"
    assert error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503


def test_one_connection_carries_many_requests(link: Link) -> None:
    path, data = _put(link, 100_000)
    connection = http.client.HTTPConnection(link.endpoint.removeprefix("http://"), timeout=30)
    for start in range(0, 100_000, 25_000):
        headers = {"Range": f"bytes={start}-{start + 24_999}"}
        connection.request("GET", path, headers=_signed("GET", link.endpoint + path, headers))
        response = connection.getresponse()
        assert response.read() == data[start : start + 25_000]
    connection.close()
    assert [entry.connection for entry in link.log] == [link.log[0].connection] * 4


@pytest.mark.parametrize(
    ("header", "status", "want"),
    [
        ("bytes=-100", 206, slice(900, 1000)),
        ("bytes=990-", 206, slice(990, 1000)),
        ("bytes=10-5000", 206, slice(10, 1000)),
        ("bytes=1000-1001", 416, slice(0, 0)),
    ],
)
def test_ranges_are_answered_as_s3_does(link: Link, header: str, status: int, want: slice) -> None:
    path, data = _put(link, 1000)
    got, headers, body = _get(link.endpoint, path, {"Range": header})
    assert got == status
    if status == 206:
        assert body == data[want]
        assert headers["Content-Range"] == f"bytes {want.start}-{want.stop - 1}/1000"


def test_a_reset_cuts_a_download_and_an_upload_never_reaches_moto(link: Link) -> None:
    path, data = _put(link, 4 * MB)
    link.use(LinkSettings(reset_probability=1.0))
    with pytest.raises((http.client.HTTPException, ConnectionError)):
        _get(link.endpoint, path)
    bucket = path.split("/")[1]
    client = _no_retries(link)
    with pytest.raises(ConnectionClosedError):
        client.put_object(Bucket=bucket, Key="uploaded", Body=b"x" * MB)
    listed = boto3.client("s3", **link.store.storage_options).list_objects_v2(Bucket=bucket)
    assert [item["Key"] for item in listed["Contents"]] == ["object"]
    assert [(entry.method, entry.reset) for entry in link.log] == [("GET", True), ("PUT", True)]
    assert 0 < link.log[0].bytes_out < len(data)
    assert 0 < link.log[1].bytes_in < MB


def test_gets_are_served_from_a_copy_validated_against_moto(link: Link) -> None:
    path, data = _put(link, 2 * MB)
    moto_log = link.store.server.log

    def moto_gets() -> int:
        return moto_log.read_bytes().count(f"GET {path} ".encode())

    before = moto_gets()
    for _ in range(5):
        assert _get(link.endpoint, path)[2] == data
    assert moto_gets() - before == 1  # the first one; the others were copies
    new = os.urandom(len(data))
    bucket, key = path.strip("/").split("/", 1)
    boto3.client("s3", **link.store.storage_options).put_object(Bucket=bucket, Key=key, Body=new)
    assert _get(link.endpoint, path, {"Range": "bytes=0-99"})[2] == new[:100]
    assert _get(link.endpoint, path)[2] == new


def test_presets_and_a_proxy_of_its_own(s3_server: Any) -> None:
    assert DEFAULT_LINK.describe() == "30 ms, 50 MB/s/conn, 400 MB/s, 200 req/s"
    assert HARSH_LINK.describe() == "80 ms, 25 MB/s/conn, 200 MB/s, 50 req/s"
    with LinkProxy(s3_server.endpoint, replace(DEFAULT_LINK, ttfb_s=0.0)) as proxy:
        status, _, _ = _get(proxy.endpoint, "/")
        assert status == 200
        assert proxy.stats()["requests"] == 1
        assert proxy.stats()["cpu_s"] > 0
    with pytest.raises(ValueError, match="http://HOST:PORT"):
        LinkProxy("s3://nowhere")
