"""``FormatContract``: what every dataset format adapter, built-in or not, must do.

Provide a ``dataset`` fixture (the path or URL of a dataset in the format, written by the
fixture) and an ``expected`` fixture (its samples, in index order), and name the class::

    class TestJsonlFormat(FormatContract):
        format_class = JsonlFormat

        @pytest.fixture
        def expected(self):
            return [{"id": i} for i in range(50)]

        @pytest.fixture
        def dataset(self, tmp_path, expected):
            ...  # write `expected` as .jsonl files under tmp_path
            return tmp_path
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, ClassVar

import pytest

from litdata.core.errors import DatasetNotFoundError
from litdata.core.formats import ChunkChecker, ForeignFormat, FormatAdapter
from litdata.core.protocols import protocol_members
from litdata.core.registry import hooks
from litdata.engine.boundary.resolve import resolve
from litdata.engine.reader import DatasetReader
from litdata.testing.compare import assert_samples_equal

__all__ = ["FormatContract"]


def _key(sample: Any) -> str:
    return repr(sample)


class FormatContract:
    """What every format adapter must do. Provide ``dataset`` and ``expected`` fixtures."""

    format_class: ClassVar[type]

    @pytest.fixture
    def dataset(self) -> str:
        """A dataset in the format (override)."""
        raise NotImplementedError("provide a `dataset` fixture")

    @pytest.fixture
    def expected(self) -> list[Any]:
        """The dataset's samples, in index order (override)."""
        raise NotImplementedError("provide an `expected` fixture")

    def test_satisfies_the_protocol(self) -> None:
        for member in protocol_members(FormatAdapter):
            assert hasattr(self.format_class, member), f"the format lacks {member}"

    def test_is_detected(self, dataset: Any) -> None:
        assert hooks.detect_format(resolve(dataset)) == getattr(self.format_class, "name", None)

    def test_indexes_every_item(self, dataset: Any, expected: list[Any]) -> None:
        index = self.format_class().read_index(resolve(dataset))
        assert index.chunks, "a dataset has at least one chunk"
        reader = DatasetReader(dataset)
        assert len(reader) == len(expected)

    def test_reads_every_item(self, dataset: Any, expected: list[Any]) -> None:
        reader = DatasetReader(dataset)
        for position, sample in enumerate(expected):
            assert_samples_equal(reader[position], sample, f"item {position}")
        assert_samples_equal(reader[-1], expected[-1])

    @pytest.mark.parametrize("num_workers", [0, 2])
    def test_streams_every_item_once(
        self, dataset: Any, expected: list[Any], num_workers: int
    ) -> None:
        from litdata.streaming.dataloader import StreamingDataLoader
        from litdata.streaming.dataset import StreamingDataset

        stream = StreamingDataset(dataset, shuffle=True)
        loader = StreamingDataLoader(stream, batch_size=4, num_workers=num_workers, collate_fn=list)
        seen = [sample for batch in loader for sample in batch]
        assert sorted(map(_key, seen)) == sorted(map(_key, expected))

    def test_its_optional_abilities_hold(self, dataset: Any) -> None:
        """``written_by`` names a tool; ``check_chunk`` passes the dataset's own chunks."""
        adapter: FormatAdapter = self.format_class()
        if isinstance(adapter, ForeignFormat):
            assert isinstance(adapter.written_by, str), "written_by must be a str"
            assert adapter.written_by, "written_by must name the tool that writes the format"
        location = resolve(dataset)
        if not isinstance(adapter, ChunkChecker) or location.local_path is None:
            return
        index = self.format_class().read_index(location)
        if index.config.compression:
            return  # the check takes plain bytes, which only the cache makes of these
        for entry in index.chunks:
            path = Path(location.local_path, entry.filename)
            adapter.check_chunk(memoryview(path.read_bytes()), entry, index, str(path))

    def test_pickles(self, dataset: Any) -> None:
        adapter = pickle.loads(pickle.dumps(self.format_class()))
        assert adapter.read_index(resolve(dataset)).num_items > 0

    def test_an_empty_folder_is_no_dataset(self, tmp_path: Path) -> None:
        (tmp_path / "empty").mkdir()
        with pytest.raises(DatasetNotFoundError):
            self.format_class().read_index(resolve(tmp_path / "empty"))
