"""``optimize`` to S3 through a realistic link: large chunks go as parallel multipart uploads.

The link (``support.link_proxy``) caps each connection, so a chunk sent as one PUT would take a
connection's time; its log shows which requests carried the chunk and when they overlapped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import boto3
import numpy as np
import pytest
from support.link_proxy import LinkSettings, Logged
from support.links import Link

import litdata as ld
from litdata.engine.boundary.resolve import resolve
from litdata.engine.upload import Uploader
from litdata.plugins.storage._multipart import PART, part_size
from litdata.plugins.storage.s3 import S3Storage

SAMPLE = 16 << 10


def sixteen_kb(i: int) -> dict[str, Any]:
    return {"id": i, "data": np.full(SAMPLE, i % 251, dtype=np.uint8).tobytes()}


def _optimize(output: str, samples: int, options: dict[str, Any] | None = None) -> None:
    ld.optimize(
        sixteen_kb,
        range(samples),
        output,
        chunk_bytes="64MB",
        num_workers=1,
        storage_options=options or {},
        verbose=False,
    )


def _objects(link: Link, bucket: str, prefix: str) -> dict[str, bytes]:
    client = boto3.client("s3", **link.store.storage_options)
    start = f"{prefix}/" if prefix else ""
    listed = client.list_objects_v2(Bucket=bucket, Prefix=start).get("Contents", [])
    return {
        item["Key"].removeprefix(start): client.get_object(Bucket=bucket, Key=item["Key"])[
            "Body"
        ].read()
        for item in listed
    }


def _dangling(link: Link, bucket: str) -> list[Any]:
    client = boto3.client("s3", **link.store.storage_options)
    return list(client.list_multipart_uploads(Bucket=bucket).get("Uploads", []))


def _most_at_once(entries: list[Logged]) -> int:
    edges = sorted([(e.started, 1) for e in entries] + [(e.answered, -1) for e in entries])
    running = most = 0
    for _, step in edges:
        running += step
        most = max(most, running)
    return most


def _local(tmp_path: Path, samples: int) -> dict[str, bytes]:
    _optimize(str(tmp_path / "local"), samples)
    return {path.name: path.read_bytes() for path in (tmp_path / "local").iterdir()}


def _same_dataset(got: dict[str, bytes], want: dict[str, bytes]) -> None:
    """The same files, chunks byte for byte; the index the same but for its time stamp."""
    assert sorted(got) == sorted(want)
    for name, data in want.items():
        if name == "index.json":
            assert {**json.loads(got[name]), "updated_at": 0} == {
                **json.loads(data),
                "updated_at": 0,
            }
        elif name.endswith(".bin"):
            assert got[name] == data, name


def test_a_64mb_chunk_goes_as_parallel_parts_and_matches_a_local_optimize(
    link: Link, tmp_path: Path
) -> None:
    samples = 4500  # one 64 MB chunk (8 parts), then one of about 9 MB (one PUT)
    bucket = link.new_bucket()
    _optimize(link.url(bucket, "ds"), samples, link.storage_options)
    _same_dataset(_objects(link, bucket, "ds"), _local(tmp_path, samples))
    parts = [e for e in link.log if e.method == "PUT" and "partNumber=" in e.path]
    assert len(parts) == 8
    assert all(e.status == 200 and e.bytes_in <= PART for e in parts)
    assert _most_at_once(parts) >= 4
    assert sum(e.method == "POST" and e.path.endswith("?uploads") for e in link.log) == 1
    assert _dangling(link, bucket) == []


def test_small_files_go_as_one_put(link: Link, tmp_path: Path) -> None:
    path = tmp_path / "small.bin"
    path.write_bytes(b"x" * (2 * PART - 1))
    bucket = link.new_bucket()
    S3Storage(link.storage_options).upload(str(path), link.url(bucket, "small.bin"))
    assert [(e.method, "?" in e.path) for e in link.log if e.method != "HEAD"] == [("PUT", False)]
    assert _objects(link, bucket, "") == {"small.bin": path.read_bytes()}
    assert part_size(80_000 << 20) == -(-(80_000 << 20) // 10_000)


def test_throttled_and_reset_parts_are_sent_again_and_nothing_is_lost(
    link: Link, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LITDATA_STORAGE_ATTEMPTS", "8")
    samples = 4500
    bucket = link.new_bucket()
    link.use(LinkSettings(0.01, 0.0, 200e6, 400e6, 20.0, 3.0, reset_probability=0.15))
    _optimize(link.url(bucket, "ds"), samples, link.storage_options)
    stats = link.proxy.stats()
    assert stats["slowdowns"] > 0 or stats["resets"] > 0, stats
    _same_dataset(_objects(link, bucket, "ds"), _local(tmp_path, samples))
    assert _dangling(link, bucket) == []


def test_an_upload_that_keeps_failing_is_aborted_and_leaves_no_object(
    link: Link, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LITDATA_STORAGE_ATTEMPTS", "2")
    path = tmp_path / "chunk.bin"
    path.write_bytes(np.random.default_rng(0).bytes(4 * PART))
    bucket = link.new_bucket()
    link.use(LinkSettings(reset_probability=1.0, reset_methods=frozenset({"PUT"})))
    storage = S3Storage(link.storage_options)
    with pytest.raises(ConnectionError):
        storage.upload(str(path), link.url(bucket, "chunk.bin"))
    assert _objects(link, bucket, "") == {}
    assert _dangling(link, bucket) == []
    methods = [e.method for e in link.log]
    assert methods.count("PUT") >= 4  # every part was tried (and retried)
    assert methods[-1] == "DELETE"  # AbortMultipartUpload


def test_uploads_of_a_process_stay_within_its_share_of_the_node_budget(
    link: Link, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LITDATA_CONNECTIONS", "8")
    monkeypatch.delenv("LITDATA_UPLOAD_CONNECTIONS", raising=False)
    bucket = link.new_bucket()
    location = resolve(link.url(bucket, "out"), storage_options=link.storage_options)
    uploader = Uploader(location, threads=2, node_share=4)  # 4 workers: 2 connections each
    assert os.environ["LITDATA_UPLOAD_CONNECTIONS"] == "2"
    for n in range(2):
        path = tmp_path / f"file-{n}.bin"
        path.write_bytes(bytes([n]) * (4 * PART))
        uploader.upload(path)
    uploader.wait()
    assert "LITDATA_UPLOAD_CONNECTIONS" not in os.environ
    parts = [e for e in link.log if e.method == "PUT" and "partNumber=" in e.path]
    assert len(parts) == 8
    assert _most_at_once(parts) <= 2
    assert sorted(_objects(link, bucket, "out")) == ["file-0.bin", "file-1.bin"]
