"""The core's storage wrapper raises what retrying cannot fix at once.

(Transient failures, retried then reported as ``StorageError`` naming the URL, are tested
against real servers that are stopped: tests/plugins/test_remote_storage.py.)
"""

import logging
from concurrent.futures import ThreadPoolExecutor

import pytest

from litdata.engine.boundary.resolve import resolve


@pytest.mark.parametrize("method", ["download", "read_range"])
def test_a_missing_object_is_raised_at_once(tmp_path, caplog, method):
    storage = resolve("memory://core-storage/ds").storage
    url = "memory://core-storage/ds/nothing"
    call = {
        "download": lambda: storage.download(url, str(tmp_path / "out")),
        "read_range": lambda: storage.read_range(url, 0, 1),
    }[method]
    with caplog.at_level(logging.WARNING), pytest.raises(FileNotFoundError, match=url):
        call()
    assert "retrying" not in caplog.text


def test_probing_downloads_in_threads_keep_each_object_apart(s3_server, tmp_path):
    # Opening a dataset probes its files through one wrapper; a merge of many writers'
    # indexes reads them in threads meanwhile. Each download must keep its own bytes.
    url = s3_server.url(s3_server.new_bucket(), "ds")
    location = resolve(url, storage_options=s3_server.storage_options)
    names = [f"{rank}.index.json" for rank in range(12)]
    for rank, name in enumerate(names):
        (tmp_path / name).write_bytes(b"%d" % rank * 5000)
        location.storage.upload(str(tmp_path / name), location.join(name))
    with location.storage.probing(), ThreadPoolExecutor(12) as pool:
        read = list(pool.map(location.read, names))
    assert read == [b"%d" % rank * 5000 for rank in range(12)]
