"""In-place chunks are hashed once per file version, not on every open."""

from __future__ import annotations

import os
import time

import pytest

import litdata as ld
from litdata.core.chunks import checksum
from litdata.engine.cache import verified


@pytest.fixture
def hashes(monkeypatch):
    """The chunk files hashed from now on."""
    seen: list[str] = []
    original = checksum.verify_checksum

    def counting(data, entry, where):
        seen.append(os.path.basename(where))
        original(data, entry, where)

    monkeypatch.setattr(checksum, "verify_checksum", counting)
    return seen


def _read_all(path):
    reader = ld.DatasetReader(path)
    return [reader[i] for i in range(len(reader))]


@pytest.fixture
def settled(tmp_path):
    path = ld.write_dataset(range(100), tmp_path / "ds", chunk_size=25)
    time.sleep(verified.SETTLED_SECONDS + 0.1)
    return path


def test_a_passed_chunk_is_not_hashed_again_until_it_changes(settled, hashes):
    assert _read_all(settled) == list(range(100))
    assert sorted(hashes) == [f"chunk-0-{i}.bin" for i in range(4)]
    hashes.clear()
    assert _read_all(settled) == list(range(100))  # a new reader: a new process would too
    assert hashes == []
    os.utime(settled / "chunk-0-2.bin")  # touched: its times moved, so it is hashed again
    assert _read_all(settled) == list(range(100))
    assert hashes == ["chunk-0-2.bin"]


def test_always_hashes_every_open(settled, hashes, monkeypatch):
    _read_all(settled)
    monkeypatch.setenv("LITDATA_VERIFY", "always")
    hashes.clear()
    _read_all(settled)
    assert len(hashes) == 4


def test_a_fresh_file_is_not_trusted_by_its_times(tmp_path, hashes):
    # Written just now: a change within the same clock tick would keep its times.
    path = ld.write_dataset(range(10), tmp_path / "ds", chunk_size=5)
    _read_all(path)
    _read_all(path)
    assert len(hashes) == 4


def test_the_dataset_folder_is_never_written(settled):
    before = sorted(os.listdir(settled))
    _read_all(settled)
    assert sorted(os.listdir(settled)) == before
