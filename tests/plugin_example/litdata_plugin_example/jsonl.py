"""``jsonl``: a folder of ``.jsonl`` files streamed as a dataset, without converting it.

Each file is a chunk (in name order), each line an item: a JSON object. The hook
implementations in :mod:`litdata_plugin_example.hooks` recognise such folders.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from litdata.core.errors import DatasetNotFoundError
from litdata.core.formats import ReadOptions
from litdata.core.index import ChunkEntry, DatasetConfig, DatasetIndex
from litdata.core.location import Location

SUFFIX = ".jsonl"


class JsonlChunk:
    """One ``.jsonl`` file, its lines loaded."""

    def __init__(self, path: str) -> None:
        with open(path, "rb") as handle:
            self.lines = handle.read().splitlines()

    def prefetch(self) -> None:
        """Already in memory."""

    def release(self) -> None:
        """Nothing is mapped."""

    def close(self) -> None:
        """Drop the lines."""
        self.lines = []


class JsonlDecoder:
    """Decodes lines as JSON objects."""

    def items_in_chunk(self, entry: ChunkEntry) -> int:
        """One item per line."""
        return entry.chunk_size

    def open(self, path: str, entry: ChunkEntry) -> JsonlChunk:
        """Load the file's lines."""
        chunk = JsonlChunk(path)
        if len(chunk.lines) != entry.chunk_size:
            raise ValueError(
                f"{path} has {len(chunk.lines)} lines, the index says {entry.chunk_size}"
            )
        return chunk

    def read(self, chunk: JsonlChunk, position: int) -> Any:
        """The line at ``position``, parsed."""
        return json.loads(chunk.lines[position])


class JsonlFormat:
    """A folder of ``.jsonl`` files."""

    name: ClassVar[str] = "jsonl"

    def read_index(self, location: Location) -> DatasetIndex:
        """One chunk per file, counting its lines."""
        names = sorted(
            name for name in location.storage.list(location.url) if name.endswith(SUFFIX)
        )
        if not names:
            raise DatasetNotFoundError(f"No {SUFFIX} files at {location.url}.")
        chunks = []
        for name in names:
            data = location.read(name)
            chunks.append(ChunkEntry(name, len(data.splitlines()), len(data)))
        config = DatasetConfig(data_format=("json",), data_spec=None, item_loader=None)
        return DatasetIndex(config, tuple(chunks))

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> JsonlDecoder:
        """Lines as JSON."""
        return JsonlDecoder()
