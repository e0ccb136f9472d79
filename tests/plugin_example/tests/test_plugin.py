"""The example plugin's own tests: one plugin of each kind, each passing litdata's contract."""

import json
import uuid
from fractions import Fraction

import pytest
from litdata_plugin_example.blocks import BlockShuffle
from litdata_plugin_example.bz2 import Bz2Compressor
from litdata_plugin_example.dict_storage import DictStorage
from litdata_plugin_example.fraction import FractionSerializer
from litdata_plugin_example.jsonl import JsonlFormat
from litdata_plugin_example.lines import LinesLoader
from litdata_plugin_example.sha256ctr import Sha256CtrEncryption
from litdata_plugin_example.threads import ThreadExecutor

from litdata.testing import (
    CompressorContract,
    EncryptorContract,
    ExecutorContract,
    FormatContract,
    ItemLoaderContract,
    SerializerContract,
    ShuffleContract,
    StorageContract,
)


class TestFractionSerializer(SerializerContract):
    serializer_class = FractionSerializer
    samples = [Fraction(1, 3), Fraction(-7, 2), Fraction(0), Fraction(10**30, 3)]
    bad_inputs = [0.5, "1/3", None]


class TestBz2Compressor(CompressorContract):
    compressor_class = Bz2Compressor
    levels = [1, 5, 9]
    bad_levels = [0, 10]


class TestDictStorage(StorageContract):
    @pytest.fixture
    def storage(self):
        return DictStorage()

    @pytest.fixture
    def base_url(self):
        return f"dict://bucket-{uuid.uuid4().hex[:8]}/prefix"


class TestBlockShuffle(ShuffleContract):
    shuffle_class = BlockShuffle
    options = {"size": 3}


class TestJsonlFormat(FormatContract):
    format_class = JsonlFormat

    @pytest.fixture
    def expected(self):
        return [{"id": i, "text": f"line {i}"} for i in range(23)]

    @pytest.fixture
    def dataset(self, tmp_path, expected):
        folder = tmp_path / "lines"
        folder.mkdir()
        for part, start in enumerate(range(0, len(expected), 10)):
            lines = [json.dumps(sample) for sample in expected[start : start + 10]]
            (folder / f"part-{part:02d}.jsonl").write_text("\n".join(lines))
        return folder


class TestSha256CtrEncryption(EncryptorContract):
    @pytest.fixture(params=["sample", "chunk"])
    def encryptor(self, request):
        return Sha256CtrEncryption("correct horse", level=request.param)

    @pytest.fixture
    def wrong_key(self, encryptor):
        return Sha256CtrEncryption("battery staple", level=encryptor.level, salt=encryptor.salt)


class TestThreadExecutor(ExecutorContract):
    @pytest.fixture
    def executor(self):
        return ThreadExecutor()


class TestLinesLoader(ItemLoaderContract):
    loader_class = LinesLoader
    samples = [f"line {i}" for i in range(9)]


def test_a_dataset_of_lines_reads_back_with_the_loader_it_records(tmp_path):
    import litdata as ld

    ld.write_dataset(["a", "b", "c"], tmp_path / "ds", chunk_size=2, item_loader=LinesLoader())
    index = json.loads((tmp_path / "ds" / "index.json").read_text())
    assert index["plugins"]["item_loaders"] == {"LinesLoader": "litdata-plugin-example 0.1.0"}
    reader = ld.DatasetReader(tmp_path / "ds")  # the loader comes from its entry point
    assert [reader[i] for i in range(3)] == ["a", "b", "c"]
