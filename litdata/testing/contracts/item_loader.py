"""``ItemLoaderContract``: what every item loader, built-in or not, must do."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any, ClassVar

import litdata as ld
from litdata.testing.compare import assert_samples_equal

__all__ = ["ItemLoaderContract"]


class ItemLoaderContract:
    """What every item loader must do: write samples, read them back, say who it is.

    Attributes:
        loader_class: The class under test.
        write_options: Its constructor's arguments for writing.
        read_options: Its constructor's arguments for reading.
        samples: Samples to write.
        expected: The items a reader gets back (``samples`` when ``None``).
        chunk_size: Items (or tokens) per chunk when writing.
    """

    loader_class: ClassVar[Any]
    write_options: ClassVar[dict[str, Any]] = {}
    read_options: ClassVar[dict[str, Any]] = {}
    samples: ClassVar[list[Any]]
    expected: ClassVar[list[Any] | None] = None
    chunk_size: ClassVar[int] = 4

    def _write(self, folder: Path) -> Path:
        loader = self.loader_class(**self.write_options)
        written = ld.write_dataset(
            self.samples, folder, chunk_size=self.chunk_size, item_loader=loader
        )
        return Path(written)

    def test_declares_its_name_and_whether_items_are_samples(self) -> None:
        assert isinstance(getattr(self.loader_class, "name", None), str)
        assert isinstance(getattr(self.loader_class, "sample_items", None), bool)

    def test_reads_back_what_it_wrote(self, tmp_path: Path) -> None:
        folder = self._write(tmp_path / "ds")
        reader = ld.DatasetReader(folder, item_loader=self.loader_class(**self.read_options))
        expected = self.samples if self.expected is None else self.expected
        assert len(reader) == len(expected)
        for position, item in enumerate(expected):
            assert_samples_equal(reader[position], item)

    def test_the_index_records_its_name(self, tmp_path: Path) -> None:
        folder = self._write(tmp_path / "ds")
        config = json.loads((folder / "index.json").read_text())["config"]
        assert config["item_loader"] == self.loader_class.name

    def test_streams_every_item_once(self, tmp_path: Path) -> None:
        folder = self._write(tmp_path / "ds")
        loader = self.loader_class(**self.read_options)
        streamed = list(ld.StreamingDataset(str(folder), item_loader=loader))
        expected = self.samples if self.expected is None else self.expected
        assert len(streamed) == len(expected)

    def test_state_dict_is_plain_data(self) -> None:
        state = self.loader_class(**self.read_options).state_dict()
        assert json.loads(json.dumps(state)) == state

    def test_pickles(self) -> None:
        loader = pickle.loads(pickle.dumps(self.loader_class(**self.read_options)))
        assert loader.name == self.loader_class.name
