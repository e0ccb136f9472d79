"""The built-in format passes the format contract, for datasets written by us and by LitData."""

from pathlib import Path

import pytest

import litdata as ld
from litdata.plugins.formats.chunks.format import ChunksFormat
from litdata.testing import FormatContract

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "litdata-0.2.76"


class TestChunksFormat(FormatContract):
    format_class = ChunksFormat

    @pytest.fixture
    def expected(self):
        return [{"id": i, "name": f"sample {i}"} for i in range(57)]

    @pytest.fixture
    def dataset(self, tmp_path, expected):
        ld.write_dataset(expected, tmp_path / "ds", chunk_size=10)
        return tmp_path / "ds"


class TestChunksFormatOnMemoryStorage(TestChunksFormat):
    @pytest.fixture
    def dataset(self, tmp_path, expected):
        local = ld.write_dataset(expected, tmp_path / "ds", chunk_size=10, compression="zstd")
        url = f"memory://formats-{tmp_path.name}/ds"
        from litdata.engine.boundary.resolve import resolve

        remote = resolve(url)
        for path in local.iterdir():
            remote.storage.upload(str(path), remote.join(path.name))
        return url
