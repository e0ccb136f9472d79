"""S3 bodies read by the blocking client: connections kept, and a forked child's own client.

Through the link (which keeps connections open, as S3 does), reads one after another must go
over one kept-alive connection (a body read through gives its connection back), and a forked
child reads with a client of its own while the parent's connection stays answered.
"""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

from support.links import Link

from litdata.plugins.storage.s3 import S3Storage

DATA = os.urandom(3 << 20)


def _stored(link: Link, tmp_path: Path) -> tuple[S3Storage, str]:
    url = link.url(link.new_bucket(), "ds/a.bin")
    source = tmp_path / "a.bin"
    source.write_bytes(DATA)
    S3Storage(link.store.storage_options).upload(str(source), url)
    return S3Storage(link.storage_options), url


def test_reads_one_after_another_keep_one_connection(link, tmp_path):
    storage, url = _stored(link, tmp_path)
    assert bytes(storage.read_range(url, 0, 10)) == DATA[:10]
    before = link.proxy.stats()["connections"]
    assert bytes(storage.read_range(url, 5, 2 << 20)) == DATA[5 : 2 << 20]
    pieces: list[tuple[int, bytes]] = []
    storage.read_range_into(url, 7, len(DATA), lambda at, data: pieces.append((at, bytes(data))))
    assert b"".join(piece for _, piece in pieces) == DATA[7:]
    assert pieces[0][0] == 7
    storage.download(url, str(tmp_path / "copy.bin"))
    assert (tmp_path / "copy.bin").read_bytes() == DATA
    assert link.proxy.stats()["connections"] == before


def _child(storage: S3Storage, url: str) -> None:
    assert bytes(storage.read_range(url, 100, 200)) == DATA[100:200]


def test_a_forked_child_reads_with_its_own_client(link, tmp_path):
    storage, url = _stored(link, tmp_path)
    assert bytes(storage.read_range(url, 0, 10)) == DATA[:10]
    child = multiprocessing.get_context("fork").Process(target=_child, args=(storage, url))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    before = len(link.log)
    assert bytes(storage.read_range(url, 10, 20)) == DATA[10:20]
    assert len(link.log) == before + 1  # answered the first time, not retried


def test_the_read_client_sends_what_s3fs_adds_to_every_request(link, tmp_path):
    _, url = _stored(link, tmp_path)
    options = {
        **link.storage_options,
        "requester_pays": True,
        "s3_additional_kwargs": {"ExpectedBucketOwner": "123456789012"},
    }
    storage = S3Storage(options)
    assert bytes(storage.read_range(url, 3, 30)) == DATA[3:30]
    storage.download(url, str(tmp_path / "copy.bin"))
    assert (tmp_path / "copy.bin").read_bytes() == DATA
    gets = [entry for entry in link.log if entry.method == "GET"]
    assert len(gets) >= 2
    for entry in gets:
        assert entry.headers.get("x-amz-request-payer") == "requester"
        assert entry.headers.get("x-amz-expected-bucket-owner") == "123456789012"
