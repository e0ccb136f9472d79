"""The core's storage wrapper raises what retrying cannot fix at once.

(Transient failures, retried then reported as ``StorageError`` naming the URL, are tested
against real servers that are stopped: tests/plugins/test_remote_storage.py.)
"""

import logging

import pytest

from litdata.engine.resolve import resolve


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
