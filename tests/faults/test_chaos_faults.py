"""The client under each fault of the chaos proxy, on moto and on SeaweedFS.

Each test puts a ``LinkProxy`` with a ``Chaos`` in front of the session's S3 server, writes or
reads a real dataset through it, and checks what the client did (from the proxy's log) and
what it returned: every sample once and right, or a clear error naming the URL.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import boto3
import numpy as np
import pytest
from support.link_chaos import Chaos, Countdown
from support.link_proxy import LinkProxy
from support.servers import (
    ObjectStore,
    both_s3_servers,  # noqa: F401  # s3_server: moto, SeaweedFS
)

import litdata as ld
from litdata.core.errors import ChunkCorruptError, StorageError
from litdata.engine.boundary.resolve import resolve

SAMPLES = 120
BLOB = 40_000  # 120 samples of 40 kB: one 4.8 MB chunk, read as ranged parts
SMALL = 12_000  # 120 samples of 12 kB: one 1.4 MB chunk, read with one GET


def _sample(i: int, size: int) -> dict:
    return {"id": i, "blob": np.full(size, i % 251, dtype=np.uint8)}


def _accounting(samples: list[dict]) -> tuple[list[int], int]:
    ids = [int(s["id"]) for s in samples]
    wrong = sum(int(not (np.asarray(s["blob"]) == s["id"] % 251).all()) for s in samples)
    return ids, wrong


@pytest.fixture
def proxy(s3_server: ObjectStore) -> Iterator[LinkProxy]:
    """An open link proxy in front of the test's S3 server (chaos set by the test)."""
    with LinkProxy(s3_server.endpoint) as started:
        yield started


@pytest.fixture(params=["0", "1"], ids=["buffered", "direct"])
def cache_write(request, monkeypatch) -> str:
    """How fetched chunks are cached: written the usual way, or from memory with ``O_DIRECT``."""
    monkeypatch.setenv("LITDATA_DIRECT_CACHE", request.param)
    return request.param


def _dataset(tmp_path, store: ObjectStore, size: int, chunk_bytes: str = "64MB") -> tuple[str, str]:
    """A dataset of ``SAMPLES`` samples put on ``store`` directly; its URL, its first chunk."""
    samples = (_sample(i, size) for i in range(SAMPLES))
    local = ld.write_dataset(samples, tmp_path / "src", chunk_bytes=chunk_bytes)
    url = store.url(store.new_bucket(), "ds")
    target = resolve(url, storage_options=store.storage_options)
    for path in local.iterdir():
        target.storage.upload(str(path), target.join(path.name))
    return url, min(p.name for p in local.iterdir() if p.suffix == ".bin")


def _read(url: str, proxy: LinkProxy, store: ObjectStore, tmp_path, workers: int = 0) -> list:
    options = {**store.storage_options, "endpoint_url": proxy.endpoint}
    ds = ld.StreamingDataset(url, storage_options=options, cache_dir=str(tmp_path / "cache"))
    if workers == 0:
        return list(ds)
    loader = ld.StreamingDataLoader(ds, batch_size=4, num_workers=workers)
    return [
        {"id": i, "blob": blob.numpy()}
        for batch in loader
        for i, blob in zip(batch["id"].tolist(), batch["blob"], strict=True)
    ]


def _whole(samples: list[dict]) -> None:
    ids, wrong = _accounting(samples)
    assert sorted(ids) == list(range(SAMPLES))
    assert wrong == 0


def _chunk_gets(proxy: LinkProxy, name: str) -> list:
    return [e for e in proxy.log if e.method == "GET" and e.path.split("?")[0].endswith(name)]


@pytest.mark.parametrize("fault", ["reset", "short"])
def test_a_cut_body_is_resumed_where_it_stopped(tmp_path, s3_server, proxy, fault):
    url, name = _dataset(tmp_path, s3_server, SMALL)
    proxy.chaos = Chaos(countdowns=(Countdown("GET", 2, fault, read=4),))  # 1: index.json
    _whole(_read(url, proxy, s3_server, tmp_path))
    gets = _chunk_gets(proxy, name)
    assert [g.fault for g in gets] == [fault, None]
    # the rest: to the end (the length the first answer gave), not again from 0
    resumed = re.fullmatch(r"bytes=(\d+)-(\d*)", gets[1].range or "")
    assert resumed is not None
    assert int(resumed.group(1)) > 0
    assert int(resumed.group(1)) <= gets[0].bytes_out


@pytest.mark.parametrize("fault", ["reset", "short"])
@pytest.mark.usefixtures("cache_write")
def test_a_cut_part_is_resumed_pinned_to_its_etag(tmp_path, s3_server, proxy, fault):
    url, name = _dataset(tmp_path, s3_server, BLOB)
    proxy.chaos = Chaos(countdowns=(Countdown("GET", 3, fault, read=2),))
    _whole(_read(url, proxy, s3_server, tmp_path))
    gets = _chunk_gets(proxy, name)
    cut = next(g for g in gets if g.fault == fault)
    first, last = map(int, re.findall(r"\d+", cut.range or ""))
    resumed = [g for g in gets if g.range and g.range.endswith(f"-{last}") and g is not cut]
    assert len(resumed) == 1
    assert first < int(re.findall(r"\d+", resumed[0].range or "")[0]) <= last


@pytest.mark.parametrize("fault", ["error", "bad_range", "no_range", "whole", "500", "503"])
def test_a_lying_or_failed_answer_to_a_part_is_refused_and_retried(
    tmp_path, s3_server, proxy, fault, request
):
    if fault == "whole" and "seaweedfs" in request.node.callspec.id:
        pytest.skip("SeaweedFS checks the Range header's signature: the proxy cannot drop it")
    url, name = _dataset(tmp_path, s3_server, BLOB)
    proxy.chaos = Chaos(countdowns=(Countdown("GET", 3, fault),))
    _whole(_read(url, proxy, s3_server, tmp_path))
    gets = _chunk_gets(proxy, name)
    bad = next(g for g in gets if g.fault == fault)
    assert sum(g.range == bad.range for g in gets) == 2  # asked again, once


@pytest.mark.parametrize(("size", "k"), [(SMALL, 2), (BLOB, 3)], ids=["whole", "part"])
@pytest.mark.usefixtures("cache_write")
def test_a_bit_flipped_in_transit_is_caught_and_read_again(
    tmp_path, s3_server, proxy, caplog, size, k
):
    url, name = _dataset(tmp_path, s3_server, size)
    proxy.chaos = Chaos(countdowns=(Countdown("GET", k, "flip"),), seed=5)
    _whole(_read(url, proxy, s3_server, tmp_path))
    assert [g.fault for g in _chunk_gets(proxy, name)].count("flip") == 1
    assert f"{name} failed its check; downloading it again" in caplog.text


def _same_bytes_new_etag(store: ObjectStore) -> object:
    """Replace an object by its own bytes as a one-part multipart upload: a new ETag."""
    client = boto3.client("s3", **store.storage_options)

    def replace(target: str) -> None:
        bucket, key = target.strip("/").split("/", 1)
        data = client.get_object(Bucket=bucket, Key=key)["Body"].read()
        upload = client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        etag = client.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=1, Body=data)[
            "ETag"
        ]
        client.complete_multipart_upload(
            Bucket=bucket,
            Key=key,
            UploadId=upload,
            MultipartUpload={"Parts": [{"ETag": etag, "PartNumber": 1}]},
        )

    return replace


@pytest.mark.usefixtures("cache_write")
def test_an_object_replaced_mid_read_is_read_again_whole(tmp_path, s3_server, proxy, caplog):
    url, name = _dataset(tmp_path, s3_server, BLOB)
    proxy.chaos = Chaos(
        countdowns=(Countdown("GET", 4, "replace"),), replace=_same_bytes_new_etag(s3_server)
    )
    _whole(_read(url, proxy, s3_server, tmp_path))
    gets = _chunk_gets(proxy, name)
    assert [g.fault for g in gets].count("replace") == 1
    # the new version is refused (412 to the pinned ETag, or a second ETag seen), and the
    # chunk read again whole, from its first part, once
    assert sum((g.range or "").startswith("bytes=0-") for g in gets) == 2
    assert f"{name} failed its check; downloading it again" in caplog.text


@pytest.mark.usefixtures("cache_write")
def test_an_object_replaced_by_other_bytes_is_an_error_naming_it(tmp_path, s3_server, proxy):
    url, name = _dataset(tmp_path, s3_server, BLOB)
    client = boto3.client("s3", **s3_server.storage_options)

    def garble(target: str) -> None:
        bucket, key = target.strip("/").split("/", 1)
        data = client.get_object(Bucket=bucket, Key=key)["Body"].read()
        client.put_object(Bucket=bucket, Key=key, Body=bytes(reversed(data)))

    proxy.chaos = Chaos(countdowns=(Countdown("GET", 4, "replace"),), replace=garble)
    got: list = []
    with pytest.raises(ChunkCorruptError, match=name):
        options = {**s3_server.storage_options, "endpoint_url": proxy.endpoint}
        got.extend(ld.StreamingDataset(url, storage_options=options))
    _, wrong = _accounting(got)
    assert wrong == 0  # nothing of either version mixed in


def _unfinished(store: ObjectStore, bucket: str) -> list:
    client = boto3.client("s3", **store.storage_options)
    return client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])


@pytest.mark.parametrize(
    "countdowns",
    [
        (Countdown("PART", 2, "500"),),
        (Countdown("PART", 1, "reset"), Countdown("CREATE", 1, "503")),
        (Countdown("COMPLETE", 1, "503"),),
        (Countdown("COMPLETE", 1, "500"), Countdown("PART", 3, "429")),
    ],
    ids=["part-500", "part-reset", "complete-503", "complete-500"],
)
def test_an_upload_retries_its_failed_requests(tmp_path, s3_server, proxy, countdowns):
    bucket = s3_server.new_bucket()
    url = s3_server.url(bucket, "ds")
    options = {**s3_server.storage_options, "endpoint_url": proxy.endpoint}
    proxy.chaos = Chaos(countdowns=countdowns)
    big = 1_000_000  # 20 samples of 1 MB: one 20 MB chunk, a multipart upload
    ld.optimize(
        _big_sample,
        range(20),
        url,
        chunk_bytes="64MB",
        num_workers=1,
        storage_options=options,
        verbose=False,
    )
    assert {c.fault for c in countdowns} <= {e.fault for e in proxy.log}
    assert any(e.method == "PUT" and "partNumber=" in e.path for e in proxy.log)
    assert _unfinished(s3_server, bucket) == []
    proxy.chaos = None
    ds = ld.StreamingDataset(url, storage_options=options)
    ids = sorted(int(s["id"]) for s in ds)
    assert ids == list(range(20))
    assert all((s["blob"] == s["id"] % 251).all() and s["blob"].size == big for s in ds)


def _big_sample(i: int) -> dict:
    return _sample(i, 1_000_000)


def test_an_upload_that_keeps_failing_is_aborted(tmp_path, s3_server, proxy, monkeypatch):
    monkeypatch.setenv("LITDATA_STORAGE_ATTEMPTS", "2")
    bucket = s3_server.new_bucket()
    options = {**s3_server.storage_options, "endpoint_url": proxy.endpoint}
    proxy.chaos = Chaos({"PART": {"500": 1.0}})
    source = tmp_path / "big.bin"
    source.write_bytes(np.random.default_rng(0).bytes(17 << 20))
    url = s3_server.url(bucket, "big.bin")
    with pytest.raises(StorageError, match=r"big\.bin"):
        resolve(url, storage_options=options).storage.upload(str(source), url)
    assert any(e.method == "DELETE" and "uploadId=" in e.path for e in proxy.log)
    assert _unfinished(s3_server, bucket) == []


@pytest.mark.parametrize("workers", [0, 2])
def test_an_epoch_under_a_fault_mix_is_whole_and_right(tmp_path, s3_server, proxy, workers):
    url, _ = _dataset(tmp_path, s3_server, SMALL, chunk_bytes="50KB")  # 30 chunks
    proxy.chaos = Chaos.mix(0.05, operations=("GET", "HEAD", "LIST"), seed=3)
    start = time.monotonic()
    _whole(_read(url, proxy, s3_server, tmp_path, workers))
    assert time.monotonic() - start < 120
    assert proxy.stats()["faults"] >= 1
