"""A broken plugin of each kind, found through entry points, fails with an error naming it.

Each broken plugin is installed as a real distribution (``litdata-plugin-broken``) on
``sys.path``; the errors must name the plugin and its distribution, never be a bare
``TypeError`` from deep inside litdata, and never produce wrong data.
"""

import importlib
import uuid
from fractions import Fraction

import pytest

import litdata as ld
from litdata.core.errors import (
    ChunkCorruptError,
    DuplicatePluginError,
    LitdataWarning,
    PluginValidationError,
    SampleDecodeError,
)
from litdata.core.registry import kinds
from litdata.testing import fake_distribution, rediscover

pytestmark = pytest.mark.usefixtures("fresh_plugins")

ORIGIN = "litdata-plugin-broken 0.1.0"


@pytest.fixture
def install(tmp_path, monkeypatch):
    """Install one module of broken plugins under the given entry points."""

    def installer(source, entry_points):
        module = f"broken_{uuid.uuid4().hex[:8]}"
        monkeypatch.syspath_prepend(str(tmp_path / "site"))
        groups = {
            group: {
                name: f"{module}:{target}" if target else module for name, target in entries.items()
            }
            for group, entries in entry_points.items()
        }
        fake_distribution(tmp_path / "site", "litdata-plugin-broken", groups, {module: source})
        rediscover()
        return importlib.import_module(module)

    return installer


SERIALIZERS = """
class NoDeserialize:
    name = "nodeser"
    types = ("decimal.Decimal",)
    def can_serialize(self, item): return True
    def serialize(self, item): return b"x", None
    def setup(self, data_format): pass

class BadReturn:
    name = "badret"
    types = ("fractions.Fraction",)
    def can_serialize(self, item): return True
    def serialize(self, item): return 42
    def deserialize(self, data): return None
    def setup(self, data_format): pass

class RaisesOnRead:
    name = "raises"
    types = ("uuid.UUID",)
    def can_serialize(self, item): return True
    def serialize(self, item): return item.bytes, None
    def deserialize(self, data): raise RuntimeError("cannot read this")
    def setup(self, data_format): pass

class Takeover:
    name = "upper"
    types = ("builtins.str",)
    def can_serialize(self, item): return isinstance(item, str)
    def serialize(self, item): return item.upper().encode(), None
    def deserialize(self, data): return bytes(data).decode()
    def setup(self, data_format): pass
"""


def test_a_serializer_missing_a_method_is_named(install, tmp_path):
    install(SERIALIZERS, {"litdata.serializers": {"nodeser": "NoDeserialize"}})
    with pytest.warns(LitdataWarning, match=rf"'nodeser'.*{ORIGIN}.*lacks deserialize"):
        ld.write_dataset([{"x": 1}], tmp_path / "ds", chunk_size=1)
    with pytest.raises(PluginValidationError, match=rf"'nodeser'.*{ORIGIN}"):
        kinds.serializers.load("nodeser")


def test_a_serializer_returning_garbage_is_named(install, tmp_path):
    install(SERIALIZERS, {"litdata.serializers": {"badret": "BadReturn"}})
    with pytest.raises(PluginValidationError, match=rf"'badret' serializer \({ORIGIN}\)"):
        ld.write_dataset([{"x": Fraction(1, 2)}], tmp_path / "ds", chunk_size=1)
    assert not (tmp_path / "ds" / "index.json").exists()


def test_a_serializer_failing_to_decode_is_named_with_the_file_and_item(install, tmp_path):
    install(SERIALIZERS, {"litdata.serializers": {"raises": "RaisesOnRead"}})
    ld.write_dataset([{"n": 1, "id": uuid.uuid4()}], tmp_path / "ds", chunk_size=1)
    named = rf"chunk-0-0.bin, item 0: the 'raises' serializer \({ORIGIN}\) failed.*cannot read"
    with pytest.raises(SampleDecodeError, match=named):
        ld.DatasetReader(tmp_path / "ds")[0]


def test_a_serializer_claiming_a_builtin_type_is_refused_naming_both(install, tmp_path):
    module = install(SERIALIZERS, {"litdata.serializers": {"upper": "Takeover"}})
    owners = "str|image|video|audio|nifti|mesh|pdf|tifffile"  # built-ins claiming str paths
    both = rf"'upper' \({ORIGIN}\) and '({owners})' \(litdata .*\) both declare .*builtins.str"
    with pytest.raises(DuplicatePluginError, match=both):
        ld.write_dataset([{"text": "abc"}], tmp_path / "ds", chunk_size=1)
    # Named for one dataset, it is used there (and only there).
    upper = {"upper": module.Takeover()}
    ld.write_dataset([{"t": "abc"}], tmp_path / "up", chunk_size=1, serializers=upper)
    assert ld.DatasetReader(tmp_path / "up", serializers=upper)[0] == {"t": "ABC"}


COMPRESSORS = """
class NoDecompress:
    name = "nodecomp"
    def __init__(self, level=None): pass
    def compress(self, data): return bytes(data)

class Liar:
    name = "liar"
    def __init__(self, level=None): pass
    def compress(self, data): return "not bytes"
    def decompress(self, data, max_size): return bytes(data)

class Truncates:
    name = "truncates"
    def __init__(self, level=None): pass
    def compress(self, data): return bytes(data)
    def decompress(self, data, max_size): return bytes(data)[:-3]
"""


def test_a_compressor_missing_a_method_is_named(install, tmp_path):
    install(COMPRESSORS, {"litdata.compression": {"nodecomp": "NoDecompress"}})
    with pytest.raises(PluginValidationError, match=rf"'nodecomp'.*{ORIGIN}.*lacks decompress"):
        ld.write_dataset([1], tmp_path / "ds", chunk_size=1, compression="nodecomp")


def test_a_compressor_returning_garbage_is_named(install, tmp_path):
    install(COMPRESSORS, {"litdata.compression": {"liar": "Liar", "truncates": "Truncates"}})
    with pytest.raises(
        PluginValidationError, match=rf"compressor 'liar' \({ORIGIN}\) returned str"
    ):
        ld.write_dataset([1], tmp_path / "a", chunk_size=1, compression="liar")
    ld.write_dataset([1, 2], tmp_path / "b", chunk_size=1, compression="truncates")
    with pytest.raises(ChunkCorruptError, match=r"'truncates' compressor"):
        ld.DatasetReader(tmp_path / "b")[0]


STORAGE = """
class NoDelete:
    name = "nodelete"
    def download(self, url, local_path): pass
    def upload(self, local_path, url): pass
    def exists(self, url): return False
    def list(self, url): return []

class BadListing:
    name = "badlist"
    def download(self, url, local_path): raise FileNotFoundError(url)
    def upload(self, local_path, url): pass
    def exists(self, url): return False
    def list(self, url): return "index.json,chunk-0-0.bin"
    def delete(self, url): pass
"""


def test_a_storage_backend_missing_a_method_is_named(install):
    install(STORAGE, {"litdata.storage": {"nodelete": "NoDelete"}})
    with pytest.raises(PluginValidationError, match=rf"'nodelete'.*{ORIGIN}.*lacks delete"):
        ld.StreamingDataset("nodelete://bucket/ds")


def test_a_storage_backend_returning_a_bad_listing_is_named(install, tmp_path):
    install(STORAGE, {"litdata.storage": {"badlist": "BadListing"}})
    with pytest.raises(
        PluginValidationError, match=rf"storage backend 'badlist' \({ORIGIN}\).*from list"
    ):
        ld.optimize(int, [1, 2], "badlist://bucket/ds", chunk_size=1, verbose=False)


SHUFFLES = """
class Repeats:
    name = "repeats"
    whole_chunks = False
    def chunk_order(self, num_chunks, seed, epoch): return list(range(num_chunks))
    def worker_chunk_order(self, chunks, seed, epoch, worker): return chunks
    def item_order(self, chunk, num_items, seed, epoch): return [0] * num_items

class NoItemOrder:
    name = "noitems"
    whole_chunks = False
    def chunk_order(self, num_chunks, seed, epoch): return list(range(num_chunks))
    def worker_chunk_order(self, chunks, seed, epoch, worker): return chunks
"""


def test_a_shuffle_that_repeats_items_is_refused_naming_it(install, tmp_path):
    install(SHUFFLES, {"litdata.shuffle": {"repeats": "Repeats", "noitems": "NoItemOrder"}})
    ld.write_dataset(range(20), tmp_path / "ds", chunk_size=5)
    ds = ld.StreamingDataset(tmp_path / "ds", shuffle="repeats")
    with pytest.raises(PluginValidationError, match=rf"'repeats' \({ORIGIN}\) returned \[0, 0"):
        list(ds)
    with pytest.raises(PluginValidationError, match=rf"'noitems'.*{ORIGIN}.*lacks item_order"):
        ld.StreamingDataset(tmp_path / "ds", shuffle="noitems")


FORMATS = """
class NotAnIndex:
    name = "notindex"
    def read_index(self, location): return {"chunks": []}
    def decoder(self, index, options): return None

import litdata

@litdata.hookimpl
def litdata_detect_format(location, index):
    return "notindex" if location.url.endswith("weird") else None
"""


def test_a_format_returning_something_else_than_an_index_is_named(install, tmp_path):
    install(FORMATS, {"litdata.formats": {"notindex": "NotAnIndex"}, "litdata": {"broken": ""}})
    (tmp_path / "weird").mkdir()
    with pytest.raises(
        PluginValidationError, match=rf"format 'notindex' \({ORIGIN}\) returned dict"
    ):
        ld.StreamingDataset(tmp_path / "weird")


ENCRYPTORS = """
class Plain:
    name = "plain"
    level = "chunk"
    def encrypt(self, data): return memoryview(bytes(data))
    def decrypt(self, data): return bytes(data)
    def to_config(self): return {}

class NoDecrypt:
    name = "nodecrypt"
    level = "sample"
    def encrypt(self, data): return bytes(data)
    def to_config(self): return {}
"""


def test_an_encryptor_returning_garbage_or_missing_a_method_is_named(install, tmp_path):
    install(ENCRYPTORS, {"litdata.encryption": {"plain": "Plain", "nodecrypt": "NoDecrypt"}})
    key = kinds.encryption.create("plain")
    with pytest.raises(
        PluginValidationError,
        match=rf"encryption algorithm 'plain' \({ORIGIN}\) returned memoryview from encrypt",
    ):
        ld.write_dataset([1], tmp_path / "ds", chunk_size=1, encryption=key)
    with pytest.raises(PluginValidationError, match=rf"'nodecrypt'.*{ORIGIN}.*lacks decrypt"):
        kinds.encryption.create("nodecrypt")


EXECUTORS = """
class Lazy:
    name = "lazy"
    def run(self, job, source, num_workers, on_event): return None

class NoRun:
    name = "norun"
"""


def test_an_executor_returning_nothing_or_missing_run_is_named(install, tmp_path):
    install(EXECUTORS, {"litdata.executors": {"lazy": "Lazy", "norun": "NoRun"}})
    with pytest.raises(PluginValidationError, match=rf"executor 'lazy' \({ORIGIN}\) returned None"):
        ld.optimize(int, [1, 2], str(tmp_path / "ds"), chunk_size=1, executor="lazy", verbose=False)
    assert not (tmp_path / "ds" / "index.json").exists()
    with pytest.raises(PluginValidationError, match=rf"'norun'.*{ORIGIN}.*lacks run"):
        ld.optimize(
            int, [1, 2], str(tmp_path / "ds2"), chunk_size=1, executor="norun", verbose=False
        )
