"""A server that keeps answering, one byte a second: cut off by ``LITDATA_CHUNK_TIMEOUT``.

The storage timeouts never cut a transfer that moves, so without an overall bound the reader
would wait for hours. The link proxy in front of moto sends every answer at 1 byte/s; the
index fetch, ``ds[i]`` and a streaming epoch must each fail with a ``StorageError`` naming the
URL within the bound (3 s here), plus slack for a loaded machine.
"""

from __future__ import annotations

import time

import pytest
from hostile import forge
from support.link_proxy import OPEN_LINK, LinkSettings

import litdata as ld
from litdata.core.errors import StorageError
from litdata.engine.boundary.resolve import resolve

pytestmark = pytest.mark.timeout(120)

BOUND = 3
SLACK = 15.0
DRIP = LinkSettings(drip_s=1.0)


@pytest.fixture
def remote(tmp_path, link, monkeypatch):
    """The forge's dataset on moto, behind the link; its URL."""
    monkeypatch.setenv("LITDATA_CHUNK_TIMEOUT", str(BOUND))
    local = forge.dataset(tmp_path / "src")
    url = link.url(link.new_bucket(), "ds")
    target = resolve(url, storage_options=link.store.storage_options)
    for item in local.iterdir():
        target.storage.upload(str(item), target.join(item.name))
    link.use(OPEN_LINK)
    return url


@pytest.mark.fault("server drips 1 byte/s")
@pytest.mark.parametrize("wait", ["index fetch", "ds[i]", "epoch"])
def test_a_dripping_server_is_cut_off(remote, link, tmp_path, record, wait):
    record.fault += f": {wait}"
    options = {"storage_options": link.storage_options, "cache_dir": str(tmp_path / "cache")}
    data = None if wait == "index fetch" else ld.StreamingDataset(remote, **options)
    link.use(DRIP)
    record.start()
    started = time.monotonic()
    with pytest.raises(StorageError, match="LITDATA_CHUNK_TIMEOUT") as error:
        if data is None:
            ld.StreamingDataset(remote, **options)
        elif wait == "ds[i]":
            data[120]
        else:
            list(ld.StreamingDataLoader(data, batch_size=10, collate_fn=list))
    took = time.monotonic() - started
    record.failed()
    assert remote in str(error.value)
    assert took < BOUND + SLACK, took
    assert any(entry.bytes_out for entry in link.log), "the drip never reached the reader"
    record("StorageError naming the URL and LITDATA_CHUNK_TIMEOUT, within the bound")
