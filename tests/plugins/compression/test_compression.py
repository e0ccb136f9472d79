import pytest
from support.helpers import chunk_files

import litdata as ld
from litdata.core.errors import PluginValidationError
from litdata.plugins import resolve
from litdata.plugins.compression.lz4 import LZ4Compressor
from litdata.plugins.compression.zstd import ZstdCompressor
from litdata.testing import CompressorContract


class TestZstd(CompressorContract):
    compressor_class = ZstdCompressor
    levels = [1, 4, 22]
    bad_levels = [0, 23]


class TestLZ4(CompressorContract):
    compressor_class = LZ4Compressor
    levels = [0, 9, 16]
    bad_levels = [-1, 17]


def test_specs_with_levels():
    assert resolve("compression", "zstd:9").level == 9
    assert resolve("compression", "zstd").level == 4
    with pytest.raises(ValueError, match="must be an integer"):
        resolve("compression", "zstd:high")


def test_chunk_names_carry_the_spec_verbatim_as_litdata(tmp_path):
    ld.write_dataset(range(4), tmp_path, chunk_size=2, compression="zstd:7")
    assert chunk_files(tmp_path) == ["chunk-0-0.zstd:7.bin", "chunk-0-1.zstd:7.bin"]
    assert [ld.DatasetReader(tmp_path)[i] for i in range(4)] == [0, 1, 2, 3]


class _OneArgument:
    """A compressor written for the old ``decompress(data)``."""

    name = "old-style"

    def compress(self, data):
        return bytes(data)

    def decompress(self, data):
        return bytes(data)


def test_a_compressor_without_max_size_is_named_with_the_fix(tmp_path):
    from litdata.plugins import register, unregister

    register("compression", "old-style", _OneArgument)
    try:
        ld.write_dataset(range(4), tmp_path, chunk_size=2, compression="old-style")
        with pytest.raises(PluginValidationError, match=r"decompress\(data, max_size\)"):
            ld.DatasetReader(tmp_path)[0]
    finally:
        unregister("compression", "old-style")
