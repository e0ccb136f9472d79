"""``ItemsSource``: a dataset without chunks (a folder of raw files) shown by the viewer."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any, cast

from litdata.core.location import Location
from litdata.engine.boundary.resolve import resolve
from litdata.engine.reader import DatasetReader
from litdata.viewer.cost import Cost, CountingStore
from litdata.viewer.source import Source

__all__ = ["ItemsSource"]


class _Items:
    """Random access to any sized, indexable dataset, as the source reads a reader."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[index]

    def close(self) -> None:
        """Nothing to close: the dataset fetches each item on its own."""


class ItemsSource(Source):
    """A source over a dataset of items without chunks: ``StreamingRawDataset``'s files.

    It has no chunk map and no keys; its overview says what the dataset is.
    """

    @classmethod
    def raw(
        cls,
        root: str | os.PathLike[str] | Location,
        *,
        storage_options: Mapping[str, Any] | None = None,
        cache_dir: str | None = None,
    ) -> ItemsSource:
        """The files under ``root`` (local or remote), one item each, every read counted."""
        from litdata.plugins.formats.raw.dataset import StreamingRawDataset

        where = resolve(root, storage_options=storage_options)
        store = CountingStore(where.storage)
        counted = dataclasses.replace(where, storage=store)
        dataset = StreamingRawDataset(cast(Any, counted), cache_dir=cache_dir)
        return cls(where.url, cast(DatasetReader, _Items(dataset)), store, store.total())

    def _dataset(self) -> Any:
        return cast(Any, self.reader).dataset

    def overview(self) -> dict[str, Any]:
        """The dataset's kind and size (it has no index)."""
        return {
            "name": self.name,
            "items": len(self),
            "chunks": 0,
            "keyed": False,
            "summary": [
                ["location", self.name],
                ["format", f"files, read as they are ({type(self._dataset()).__name__})"],
                ["items", f"{len(self):,}"],
            ],
        }

    def chunk_map(self) -> dict[str, Any]:
        """No chunks."""
        return {"chunks": [], "total": 0, "shown": 0}

    def _fetch_whole_chunks(self, reader: DatasetReader, indices: Sequence[int]) -> None:
        """No chunks to fetch: each item is its own file."""

    def find_key(self, key: str, cost: Cost) -> int:
        """Raises KeyError: files have no keys sidecar."""
        raise KeyError(f"{self.name} is a folder of files; it has no keys")
