"""A server (or proxy) that ignores ``Range`` or cuts a ranged body short: its fault, named.

The link proxy in front of moto tells the lie; ``ds[i]`` of an uncached remote chunk reads its
items with ranged GETs. The error must name the URL and the server's answer, not blame
litdata's own storage plugin.
"""

from __future__ import annotations

import pytest
from hostile import forge
from support.link_proxy import OPEN_LINK

import litdata as ld
from litdata.core.errors import StorageError
from litdata.engine.boundary.resolve import resolve

pytestmark = pytest.mark.timeout(120)


@pytest.mark.fault("S3 server ignores Range / sends a short ranged body")
@pytest.mark.parametrize("lie", ["ignore_range", "short_ranges"])
def test_a_lying_range_answer_is_the_servers_fault(tmp_path, link, record, monkeypatch, lie):
    record.fault += f": {lie}"
    monkeypatch.setenv("LITDATA_STORAGE_ATTEMPTS", "2")
    local = forge.dataset(tmp_path / "src")
    url = link.url(link.new_bucket(), "ds")
    target = resolve(url, storage_options=link.store.storage_options)
    for item in local.iterdir():
        target.storage.upload(str(item), target.join(item.name))
    link.use(OPEN_LINK)
    data = ld.StreamingDataset(url, storage_options=link.storage_options)
    assert forge.is_right(data[10])
    link.use(OPEN_LINK.__class__(**{lie: True}))
    link.proxy.reset_log()
    record.start()
    try:
        item = data[160]
    except StorageError as error:
        record.failed()
        message = str(error)
        # The s3 plugin refuses the answer itself (and retries); the boundary's own check words it
        # for plugins that do not.
        told = {"ignore_range": "HTTP 200 and Content-Range None", "short_ranges": "ended early"}
        assert told[lie] in message or "ignored the Range header or cut the body short" in message
        assert "fix the plugin" not in message
        assert url in message
        happened = "StorageError naming the URL and the server's answer, not the plugin"
    else:
        assert lie == "ignore_range"  # the client cut the range from the whole body itself
        assert forge.is_right(item)
        assert item["id"] == 160
        happened = "the client cut the range from the whole object: the right sample"
    assert any(entry.range for entry in link.log), "no ranged request reached the proxy"
    record(happened)
