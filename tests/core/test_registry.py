import subprocess
import sys
import uuid

import pytest

from litdata.core.errors import (
    DuplicatePluginError,
    PluginLoadError,
    PluginValidationError,
    UnknownPluginError,
)
from litdata.core.protocols import Compressor
from litdata.core.registry import kinds
from litdata.core.registry.registry import Registry
from litdata.testing import fake_distribution

pytestmark = pytest.mark.usefixtures("fresh_plugins")

CODEC = """
class Shout:
    name = "shout"
    def __init__(self, level=None):
        pass
    def compress(self, data):
        return bytes(data).upper()
    def decompress(self, data):
        return bytes(data).lower()
"""


def _codec_distribution(
    tmp_path,
    monkeypatch,
    name="litdata-plugin-shout",
    module="shout_codec",
    source=CODEC,
    key="shout",
):
    module = f"{module}_{uuid.uuid4().hex[:8]}"  # a fresh module: sys.modules caches imports
    monkeypatch.syspath_prepend(str(tmp_path))
    fake_distribution(
        tmp_path, name, {"litdata.compression": {key: f"{module}:Shout"}}, {module: source}
    )
    kinds.compression.refresh()


def test_builtins_are_listed_without_importing_them():
    code = (
        "import sys; from litdata.core.registry import kinds; "
        "names = kinds.serializers.names(); "
        "assert 'numpy' in names and 'pickle' in names, names; "
        "assert 'litdata.plugins.serializers.arrays' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_entry_point_plugin_is_discovered_and_loaded(tmp_path, monkeypatch):
    _codec_distribution(tmp_path, monkeypatch)
    assert "shout" in kinds.compression.names()
    info = kinds.compression.info("shout")
    assert (info.distribution, info.version, info.builtin) == (
        "litdata-plugin-shout",
        "0.1.0",
        False,
    )
    codec = kinds.compression.create("shout")
    assert codec.decompress(codec.compress(b"abc")) == b"abc"


def test_unknown_name_lists_known_suggests_and_says_what_to_install():
    with pytest.raises(UnknownPluginError) as caught:
        kinds.compression.load("zstdd")
    message = str(caught.value)
    assert "lz4, zstd" in message
    assert "Did you mean 'zstd'?" in message
    assert "install the distribution" in message
    error = kinds.compression.unknown("bz2", provider="litdata-plugin-example")
    assert "pip install litdata-plugin-example" in str(error)
    assert isinstance(error, KeyError)


def test_a_recorded_provider_names_the_distribution_to_install():
    with pytest.raises(UnknownPluginError) as caught:
        kinds.compression.create("bz2", 5, provider="litdata-plugin-example 0.3.1")
    message = str(caught.value)
    assert "It is provided by litdata-plugin-example 0.3.1" in message
    assert "pip install litdata-plugin-example" in message
    assert "pip install litdata-plugin-example 0.3.1" not in message


def test_provider_is_recorded_only_for_third_party_plugins(tmp_path, monkeypatch):
    _codec_distribution(tmp_path, monkeypatch)
    assert kinds.compression.provider("shout") == "litdata-plugin-shout 0.1.0"
    assert kinds.compression.provider("zstd") is None
    with kinds.compression.isolated():
        kinds.compression.register("shout", kinds.compression.load("shout"), replace=True)
        assert kinds.compression.provider("shout") is None


def test_plugin_breaking_its_protocol_is_rejected_with_its_origin(tmp_path, monkeypatch):
    broken = (
        "class Shout:\n    name = 'shout'\n    def compress(self, data):\n        return data\n"
    )
    _codec_distribution(tmp_path, monkeypatch, source=broken)
    with pytest.raises(PluginValidationError) as caught:
        kinds.compression.load("shout")
    message = str(caught.value)
    assert "litdata-plugin-shout 0.1.0" in message
    assert "shout_codec_" in message
    assert "lacks decompress" in message


def test_plugin_whose_name_differs_from_its_key_is_rejected(tmp_path, monkeypatch):
    _codec_distribution(tmp_path, monkeypatch, key="yell")
    with pytest.raises(PluginValidationError, match="declares name='shout'"):
        kinds.compression.load("yell")


def test_plugin_that_fails_to_import_names_its_distribution(tmp_path, monkeypatch):
    _codec_distribution(tmp_path, monkeypatch, source="import not_a_module_anywhere\n")
    with pytest.raises(PluginLoadError, match="litdata-plugin-shout 0.1.0.*not_a_module_anywhere"):
        kinds.compression.load("shout")


def test_two_distributions_claiming_one_name_is_an_error_naming_both(tmp_path, monkeypatch):
    _codec_distribution(tmp_path / "a", monkeypatch, name="litdata-plugin-one", module="one")
    _codec_distribution(tmp_path / "b", monkeypatch, name="litdata-plugin-two", module="two")
    with pytest.raises(DuplicatePluginError) as caught:
        kinds.compression.load("shout")
    assert "litdata-plugin-one" in str(caught.value)
    assert "litdata-plugin-two" in str(caught.value)


def test_a_stale_copy_of_a_distribution_later_on_sys_path_is_ignored(tmp_path, monkeypatch):
    stale = "import not_a_module_anywhere\n"
    _codec_distribution(tmp_path / "old", monkeypatch, name="Litdata.Plugin_Shout", source=stale)
    _codec_distribution(tmp_path / "new", monkeypatch)  # prepended: first on sys.path
    info = kinds.compression.info("shout")
    assert (info.distribution, info.version) == ("litdata-plugin-shout", "0.1.0")
    codec = kinds.compression.create("shout")
    assert codec.decompress(codec.compress(b"abc")) == b"abc"


def test_a_directory_twice_on_sys_path_declares_its_plugins_once(tmp_path, monkeypatch):
    _codec_distribution(tmp_path, monkeypatch)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert sys.path.count(str(tmp_path)) == 2
    kinds.compression.refresh()
    assert kinds.compression.info("shout").distribution == "litdata-plugin-shout"


def test_explicit_registration_wins_and_can_be_isolated():
    class Loud:
        name = "zstd"

        def __init__(self, level=None):
            pass

        def compress(self, data):
            return bytes(data)

        def decompress(self, data):
            return bytes(data)

    with kinds.compression.isolated():
        with pytest.raises(DuplicatePluginError):
            kinds.compression.register("zstd", Loud)
            kinds.compression.register("zstd", Loud)
        assert kinds.compression.load("zstd") is Loud
        assert kinds.compression.info("zstd").origin == "registered in-process"
    assert kinds.compression.load("zstd") is not Loud


def test_registration_is_validated():
    registry: Registry[Compressor] = Registry("compression", "compressor", Compressor)  # type: ignore[type-abstract]
    with pytest.raises(PluginValidationError, match="must be a class"):
        registry.register("x", object())  # type: ignore[arg-type]


def test_every_kind_has_an_entry_point_group():
    assert {r.group for r in kinds.ALL.values()} == {
        "litdata.storage",
        "litdata.serializers",
        "litdata.compression",
        "litdata.encryption",
        "litdata.shuffle",
        "litdata.formats",
        "litdata.executors",
        "litdata.item_loaders",
    }
