"""Cached chunks of a credentialed bucket are the user's: folders 0700, files 0600 by default."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hostile import forge
from support.servers import both_s3_servers  # noqa: F401  # s3_server: moto, SeaweedFS

import litdata as ld
from litdata.engine.boundary.resolve import resolve


def _modes(cache: Path) -> tuple[set[int], set[int]]:
    """The permission bits of the folders and of the files under ``cache`` (itself excluded)."""
    folders, files = set(), set()
    for directory, subfolders, names in os.walk(cache):
        folders.update(stat.S_IMODE(os.stat(Path(directory, d)).st_mode) for d in subfolders)
        files.update(stat.S_IMODE(os.stat(Path(directory, n)).st_mode) for n in names)
    return folders, files


@pytest.fixture
def remote(tmp_path, s3_server):
    local = forge.dataset(tmp_path / "src")
    url = s3_server.url(s3_server.new_bucket(), "ds")
    target = resolve(url, storage_options=s3_server.storage_options)
    for path in local.iterdir():
        target.storage.upload(str(path), target.join(path.name))
    return url, s3_server.storage_options


def _stream(url, options, cache, **kwargs):
    data = ld.StreamingDataset(url, cache_dir=str(cache), storage_options=options, **kwargs)
    assert sorted(item["id"] for item in data) == list(range(forge.COUNT))


def test_a_remote_cache_is_private_by_default(tmp_path, remote, monkeypatch):
    monkeypatch.delenv("LITDATA_CACHE_MODE", raising=False)
    os.umask(0o022)  # the usual umask, under which files would be 0644
    cache = tmp_path / "cache"
    _stream(*remote, cache)
    folders, files = _modes(cache)
    assert (folders, files) == ({0o700}, {0o600})


def test_a_compressed_local_cache_is_private(tmp_path):
    folder = forge.dataset(tmp_path / "ds", compression="zstd")
    cache = tmp_path / "cache"
    data = ld.StreamingDataset(str(folder), cache_dir=str(cache))
    assert len(list(data)) == forge.COUNT
    folders, files = _modes(cache)
    assert (folders, files) == ({0o700}, {0o600})


def test_cache_mode_shares_the_cache_with_a_group(tmp_path, remote):
    cache = tmp_path / "cache"
    _stream(*remote, cache, cache_mode=0o640)
    folders, files = _modes(cache)
    assert (folders, files) == ({0o750}, {0o640})


def test_the_environment_sets_the_mode(tmp_path, remote, monkeypatch):
    monkeypatch.setenv("LITDATA_CACHE_MODE", "0660")
    cache = tmp_path / "cache"
    _stream(*remote, cache)
    folders, files = _modes(cache)
    assert (folders, files) == ({0o770}, {0o660})


@pytest.mark.parametrize("mode", ["0400", "777x", "01777"])
def test_a_mode_that_locks_the_owner_out_is_refused(tmp_path, remote, monkeypatch, mode):
    monkeypatch.setenv("LITDATA_CACHE_MODE", mode)
    with pytest.raises(ValueError, match="LITDATA_CACHE_MODE"):
        _stream(*remote, tmp_path / "cache")
