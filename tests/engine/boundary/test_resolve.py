"""Every path argument is a location: a URL is never a local folder by accident."""

import os

import pytest

import litdata as ld
from litdata.core.errors import UnknownPluginError
from litdata.core.location import is_url, scheme_of
from litdata.engine.boundary.resolve import resolve


@pytest.mark.parametrize(
    "call",
    [
        lambda: ld.optimize(int, [1, 2], "nosuch://bucket/x", chunk_size=1, verbose=False),
        lambda: ld.write_dataset([1, 2], "nosuch://bucket/x", chunk_size=1),
        lambda: ld.map(print, [1, 2], "nosuch://bucket/x", verbose=False),
        lambda: ld.StreamingDataset("nosuch://bucket/x"),
        lambda: ld.merge_datasets(["nosuch://a/x", "nosuch://a/y"], "nosuch://a/z"),
    ],
    ids=["optimize", "write_dataset", "map", "StreamingDataset", "merge_datasets"],
)
def test_an_unknown_scheme_is_an_error_and_nothing_is_created(tmp_path, monkeypatch, call):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnknownPluginError, match=r"No storage backend serves nosuch:// URLs"):
        call()
    assert os.listdir(tmp_path) == []  # no folder named "nosuch:"


def test_the_error_lists_the_installed_schemes():
    with pytest.raises(KeyError) as caught:
        resolve("mem://bucket/x")
    message = str(caught.value)
    assert "file://" in message
    assert "memory://" in message
    assert "Nothing was read or written" in message


@pytest.mark.parametrize(
    ("location", "scheme"),
    [
        ("s3://bucket/key", "s3"),
        ("GS://bucket", "gs"),
        ("/data/train", None),
        ("relative/dir", None),
        ("C:\\data", None),
        ("mem:foo", None),
        ("file:///data", "file"),
    ],
)
def test_what_is_a_url(location, scheme):
    assert scheme_of(location) == scheme
    assert is_url(location) is (scheme is not None)


def test_local_paths_resolve_in_place(tmp_path):
    location = resolve(tmp_path / "x")
    assert location.backend == "file"
    assert location.local_path == str(tmp_path / "x")
    assert resolve(f"file://{tmp_path}/x").local_path == str(tmp_path / "x")
