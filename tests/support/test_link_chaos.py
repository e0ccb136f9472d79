"""The link proxy's chaos mode: each fault it injects is seen by a plain HTTP client, on moto
and on SeaweedFS, is logged, and comes from the seed.
"""

from __future__ import annotations

import http.client
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

import boto3
import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from support.link_chaos import READ, Chaos, Countdown, operation
from support.link_proxy import LinkProxy
from support.servers import (
    ObjectStore,
    both_s3_servers,  # noqa: F401  # s3_server: moto, SeaweedFS
)

SIZE = 4 * READ


@pytest.fixture
def proxy(s3_server: ObjectStore) -> Iterator[LinkProxy]:
    """An open link proxy (no limits) in front of the test's S3 server, no chaos yet."""
    with LinkProxy(s3_server.endpoint) as started:
        yield started


@pytest.fixture
def stored(s3_server: ObjectStore) -> tuple[str, bytes]:
    """``/bucket/key`` of a fresh object of ``SIZE`` random bytes, and its bytes."""
    bucket = s3_server.new_bucket()
    data = os.urandom(SIZE)
    boto3.client("s3", **s3_server.storage_options).put_object(
        Bucket=bucket, Key="object", Body=data
    )
    return f"/{bucket}/object", data


@contextmanager
def _request(
    proxy: LinkProxy, path: str, headers: dict[str, str] | None = None, method: str = "GET"
) -> Iterator[http.client.HTTPResponse]:
    """A signed request through ``proxy``: its response, body unread, on its own connection."""
    request = AWSRequest(method=method, url=proxy.endpoint + path, headers=headers or {})
    S3SigV4Auth(Credentials("testing", "testing"), "s3", "us-east-1").add_auth(request)
    connection = http.client.HTTPConnection(proxy.endpoint.removeprefix("http://"), timeout=5)
    try:
        connection.request(method, path, headers=dict(request.headers.items()))
        yield connection.getresponse()
    finally:
        connection.close()


def _get(
    proxy: LinkProxy, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    with _request(proxy, path, headers) as response:
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()


def _head(proxy: LinkProxy, path: str) -> int:
    with _request(proxy, path, method="HEAD") as response:
        return response.status


@pytest.mark.parametrize("fault", ["429", "500", "503"])
def test_a_status_fault_is_an_s3_error_answer(proxy, stored, fault):
    path, _ = stored
    proxy.chaos = Chaos({"GET": {fault: 1.0}})
    status, _, body = _get(proxy, path)
    assert status == int(fault)
    assert b"<Error><Code>" in body
    assert [entry.fault for entry in proxy.log] == [fault]


def test_a_reset_cuts_the_body_with_a_reset(proxy, stored):
    path, _ = stored
    proxy.chaos = Chaos({"GET": {"reset": 1.0}})
    with (
        _request(proxy, path) as response,
        pytest.raises((ConnectionResetError, http.client.IncompleteRead)),
    ):
        response.read()
    assert proxy.log[-1].reset
    assert proxy.log[-1].fault == "reset"


def test_a_short_body_ends_before_its_content_length(proxy, stored):
    path, data = stored
    proxy.chaos = Chaos({"GET": {"short": 1.0}})
    with _request(proxy, path) as response:
        assert int(response.getheader("Content-Length")) == len(data)
        with pytest.raises(http.client.IncompleteRead) as cut:
            response.read()
    assert cut.value.partial == data[: len(data) // 2]


def test_a_drip_sends_a_byte_at_a_time(proxy, stored):
    path, data = stored
    proxy.chaos = Chaos({"GET": {"drip": 1.0}}, drip_bytes_per_s=10.0)
    got = b""
    with _request(proxy, path) as response:
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            got += response.read(1)
    assert 3 <= len(got) <= 15  # 10 a second
    assert got == data[: len(got)]


def test_an_error_document_answers_200(proxy, stored):
    path, _ = stored
    proxy.chaos = Chaos({"GET": {"error": 1.0}})
    status, _, body = _get(proxy, path, {"Range": "bytes=0-99"})
    assert status == 200
    assert body.startswith(b"<?xml")
    assert b"<Code>InternalError</Code>" in body


def test_a_wrong_content_range(proxy, stored):
    path, data = stored
    proxy.chaos = Chaos({"GET": {"bad_range": 1.0}})
    status, headers, body = _get(proxy, path, {"Range": "bytes=100-199"})
    assert (status, body) == (206, data[100:200])
    assert headers["content-range"] == f"bytes {100 + READ}-{199 + READ}/{len(data)}"


def test_a_missing_content_range(proxy, stored):
    path, data = stored
    proxy.chaos = Chaos({"GET": {"no_range": 1.0}})
    status, headers, body = _get(proxy, path, {"Range": "bytes=100-199"})
    assert (status, body) == (206, data[100:200])
    assert "content-range" not in headers


def test_a_200_answers_a_ranged_get(proxy, stored, s3_server, request):
    if "seaweedfs" in request.node.callspec.id:
        pytest.skip("SeaweedFS checks the Range header's signature: the proxy cannot drop it")
    path, data = stored
    proxy.chaos = Chaos({"GET": {"whole": 1.0}})
    status, _, body = _get(proxy, path, {"Range": "bytes=100-199"})
    assert (status, body) == (200, data)


def test_an_object_replaced_between_two_ranged_reads(proxy, stored, s3_server):
    path, data = stored
    bucket, key = path.strip("/").split("/", 1)
    client = boto3.client("s3", **s3_server.storage_options)
    replaced = bytes(reversed(data))
    proxy.chaos = Chaos(
        countdowns=(Countdown("GET", 2, "replace"),),
        replace=lambda _: client.put_object(Bucket=bucket, Key=key, Body=replaced),
    )
    status, headers, first = _get(proxy, path, {"Range": "bytes=0-99"})
    assert (status, first) == (206, data[:100])
    pinned = {"Range": "bytes=100-199", "If-Match": headers["etag"]}
    status, _, _ = _get(proxy, path, pinned)
    assert status == 412  # the ETag moved on: a pinned read is refused
    status, _, second = _get(proxy, path, {"Range": "bytes=100-199"})
    assert (status, second) == (206, replaced[100:200])  # unpinned: the other version's bytes
    assert [entry.fault for entry in proxy.log] == [None, "replace", None]


def test_a_flipped_bit(proxy, stored):
    path, data = stored
    proxy.chaos = Chaos({"GET": {"flip": 1.0}}, seed=7)
    status, _, body = _get(proxy, path)
    assert (status, len(body)) == (200, len(data))
    differs = [i for i in range(len(data)) if body[i] != data[i]]
    assert len(differs) == 1
    assert bin(body[differs[0]] ^ data[differs[0]]).count("1") == 1


def test_countdowns_fail_the_kth_request_and_the_nth_read(proxy, stored):
    path, data = stored
    proxy.chaos = Chaos(
        countdowns=(Countdown("HEAD", 2, "503"), Countdown("GET", 1, "short", read=2))
    )
    assert [_head(proxy, path) for _ in range(3)] == [200, 503, 200]
    with _request(proxy, path) as response, pytest.raises(http.client.IncompleteRead) as cut:
        response.read()
    assert cut.value.partial == data[: 2 * READ]  # two reads whole, then the end
    assert _get(proxy, path)[2] == data  # only the first GET


def test_the_same_seed_injects_the_same_faults(proxy, stored):
    path, _ = stored

    def run() -> list[str | None]:
        proxy.reset_log()
        proxy.chaos = Chaos({"HEAD": {"500": 0.3, "503": 0.3}}, seed=11)
        for _ in range(20):
            _head(proxy, path)
        return [entry.fault for entry in proxy.log]

    first = run()
    assert {"500", "503", None} <= set(first)
    assert run() == first


def test_operations_and_unknown_faults():
    assert operation("GET", "/b/k") == "GET"
    assert operation("GET", "/b?list-type=2&prefix=x") == "LIST"
    assert operation("PUT", "/b/k?partNumber=1&uploadId=u") == "PART"
    assert operation("POST", "/b/k?uploads") == "CREATE"
    assert operation("POST", "/b/k?uploadId=u") == "COMPLETE"
    with pytest.raises(ValueError, match="unknown chaos faults"):
        Chaos({"GET": {"gremlins": 1.0}})
