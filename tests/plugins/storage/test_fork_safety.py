"""A forked child that drops the storage client it inherited leaves the parent's connections alone.

Through the link (which keeps connections open, as S3 does), the parent's next request on its
kept-alive connection must be answered the first time, not after a read timeout and a retry.
"""

from __future__ import annotations

import multiprocessing

from support.links import Link

from litdata.plugins.storage.s3 import S3Storage


def _child(storage: S3Storage, url: str) -> None:
    assert not storage.exists(url)  # a client of its own; the inherited one is dropped


def _listings(link: Link) -> list[str]:
    return [entry.path for entry in link.log if entry.method == "GET" and "list-type" in entry.path]


def test_a_forked_child_leaves_the_parents_kept_alive_connections_answered(link, monkeypatch):
    monkeypatch.setenv("LITDATA_STORAGE_TIMEOUT", "4")  # a lost answer costs a retry, not 30 s
    bucket = link.new_bucket()
    storage = S3Storage(link.storage_options)
    url = link.url(bucket, "ds/a.bin")
    assert not storage.exists(url)  # the parent's connection, kept alive by the link
    for _ in range(2):
        child = multiprocessing.get_context("fork").Process(target=_child, args=(storage, url))
        child.start()
        child.join(30)
        assert child.exitcode == 0
    before = len(_listings(link))
    assert storage.list(link.url(bucket, "ds")) == []
    sent = _listings(link)[before:]
    assert sent
    assert len(set(sent)) == len(sent), f"a listing was lost and sent again: {sent}"
