"""Every hookspec is exercised here through a real plugin distribution (entry-point group
``litdata``), found and loaded by pluggy exactly as ``pip install`` would make it."""

import numpy as np
import pytest

import litdata as ld
from litdata.core.errors import PluginLoadError
from litdata.core.registry import hooks, registries
from litdata.core.registry.manager import get_plugin_manager, hook_origin, reset_plugin_manager
from litdata.testing import fake_distribution

pytestmark = pytest.mark.usefixtures("fresh_plugins")

RECORDER = """
import litdata

EVENTS = []

@litdata.hookimpl
def litdata_chunk_written(path, chunk):
    EVENTS.append(("written", chunk["filename"], chunk["chunk_size"]))

@litdata.hookimpl
def litdata_chunk_downloaded(url, path, nbytes):
    EVENTS.append(("downloaded", url.rsplit("/", 1)[-1], nbytes))

@litdata.hookimpl
def litdata_chunk_evicted(path, nbytes):
    EVENTS.append(("evicted", path, nbytes))

@litdata.hookimpl
def litdata_resolve_storage(url):
    return "file" if url.startswith("mirror://") else None

@litdata.hookimpl
def litdata_detect_format(path):
    return "chunks" if path.endswith("special") else None
"""


@pytest.fixture
def recorder(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path / "dist"))
    fake_distribution(
        tmp_path / "dist",
        "litdata-plugin-recorder",
        {"litdata": {"recorder": "recorder"}},
        {"recorder": RECORDER},
    )
    reset_plugin_manager()
    module = get_plugin_manager().get_plugin("recorder")
    assert module is not None, "the entry point was not loaded"
    return module


def test_hook_litdata_chunk_written(recorder, tmp_path):
    ld.write_dataset(({"x": i} for i in range(5)), tmp_path / "ds", chunk_size=2)
    assert [e for e in recorder.EVENTS if e[0] == "written"] == [
        ("written", "chunk-0-0.bin", 2),
        ("written", "chunk-0-1.bin", 2),
        ("written", "chunk-0-2.bin", 1),
    ]


def test_hook_litdata_chunk_downloaded(recorder, tmp_path):
    ld.write_dataset(
        ({"x": np.zeros(100)} for _ in range(4)), tmp_path / "ds", chunk_size=2, compression="zstd"
    )
    reader = ld.DatasetReader(tmp_path / "ds")
    reader[0], reader[3]
    names = [e[1] for e in recorder.EVENTS if e[0] == "downloaded"]
    assert names == ["chunk-0-0.zstd.bin", "chunk-0-1.zstd.bin"]


def test_hook_litdata_chunk_evicted(recorder):
    hooks.chunk_evicted("/cache/chunk-0-0.bin", 123)
    assert ("evicted", "/cache/chunk-0-0.bin", 123) in recorder.EVENTS


def test_hook_litdata_resolve_storage(recorder, tmp_path):
    assert hooks.resolve_storage("mirror://anything") == "file"  # the plugin decided
    assert hooks.resolve_storage("s3://bucket/x") == "s3"  # the built-in default decided
    assert hooks.resolve_storage(str(tmp_path)) == "file"


def test_hook_litdata_detect_format(recorder, tmp_path):
    (tmp_path / "special").mkdir()
    assert hooks.detect_format(str(tmp_path / "special")) == "chunks"  # the plugin decided
    assert hooks.detect_format(str(tmp_path)) is None
    ld.write_dataset([1, 2], tmp_path / "ds", chunk_size=2)
    assert hooks.detect_format(str(tmp_path / "ds")) == "chunks"  # the built-in default decided


def test_blocked_and_disabled_plugins_are_not_loaded(recorder, monkeypatch):
    monkeypatch.setenv("LITDATA_BLOCK_PLUGINS", "recorder")
    reset_plugin_manager()
    assert get_plugin_manager().get_plugin("recorder") is None
    monkeypatch.delenv("LITDATA_BLOCK_PLUGINS")
    monkeypatch.setenv("LITDATA_DISABLE_PLUGIN_AUTOLOAD", "1")
    reset_plugin_manager()
    assert get_plugin_manager().get_plugin("recorder") is None
    assert hooks.resolve_storage("/data") == "file"  # built-in defaults still apply


def test_unknown_storage_scheme_is_a_clear_error(tmp_path):
    with pytest.raises(KeyError, match="No storage backend named 'nosuch'"):
        ld.DatasetReader("nosuch://bucket/data")
    assert "file" in registries.storage.names()


def test_hook_plugin_origin_names_its_distribution(recorder):
    assert hook_origin("recorder") == "litdata-plugin-recorder 0.1.0"
    assert hook_origin("builtin").startswith("litdata ")


def test_hook_plugin_that_fails_to_import_names_itself_and_the_way_out(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path / "dist"))
    fake_distribution(
        tmp_path / "dist",
        "litdata-plugin-broken",
        {"litdata": {"broken": "broken_hooks"}},
        {"broken_hooks": "import a_module_that_is_not_installed\n"},
    )
    reset_plugin_manager()
    with pytest.raises(PluginLoadError) as error:
        get_plugin_manager()
    message = str(error.value)
    assert "'broken'" in message
    assert "litdata-plugin-broken 0.1.0" in message
    assert "a_module_that_is_not_installed" in message
    assert "LITDATA_BLOCK_PLUGINS=broken" in message
    monkeypatch.setenv("LITDATA_BLOCK_PLUGINS", "broken")
    reset_plugin_manager()
    assert get_plugin_manager().get_plugin("broken") is None
