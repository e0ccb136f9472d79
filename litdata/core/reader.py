"""``DatasetReader``: random access to the items of a local dataset."""

from __future__ import annotations

import os
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Mapping
from itertools import accumulate
from pathlib import Path
from typing import Any

from litdata.core import config
from litdata.core.cache import ChunkCache
from litdata.core.chunks.file import ChunkFile
from litdata.core.index import DatasetIndex
from litdata.core.items.loaders import ItemDecoder, ItemLoader, loader_for
from litdata.core.items.serializer_set import SerializerSet
from litdata.core.protocols import Serializer
from litdata.core.source import open_local_dataset

__all__ = ["DatasetReader"]


class DatasetReader:
    """Random access to the items of a local dataset: ``reader[i]``.

    Chunks are memory-mapped in place; compressed chunks are decompressed into the cache
    first. The dataset directory is never modified.

    Args:
        root: The dataset directory (holding ``index.json``).
        serializers: Extra serializers by name (your own, or overrides).
        allow_pickle: Let pickled leaves import code; defaults to ``LITDATA_ALLOW_PICKLE``.
        cache_dir: The cache root for decompressed chunks.
        item_loader: The item loader the dataset was written with (``TokensLoader(block_size)``
            for token datasets); inferred from the index when omitted.
        max_open_chunks: How many chunks stay memory-mapped at once.
        index: The dataset's index, when the caller has already read it.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        serializers: Mapping[str, Serializer] | None = None,
        allow_pickle: bool | None = None,
        cache_dir: str | None = None,
        item_loader: ItemLoader | None = None,
        max_open_chunks: int = 64,
        index: DatasetIndex | None = None,
    ) -> None:
        if index is None:
            self.root, self.index = open_local_dataset(root)
        else:
            self.root, self.index = Path(root), index
        self.item_loader = loader_for(self.index, item_loader, str(self.root))
        self._serializers = dict(serializers or {})
        self._allow_pickle = config.allow_pickle_default() if allow_pickle is None else allow_pickle
        self.cache = ChunkCache(self.root, self.index, cache_dir)
        self._max_open = max_open_chunks
        self._decoder: ItemDecoder | None = None
        #: The number of items in each chunk.
        self.chunk_sizes = [self.decoder.items_in_chunk(chunk) for chunk in self.index.chunks]
        self._ends = list(accumulate(self.chunk_sizes))
        self._starts = [end - size for end, size in zip(self._ends, self.chunk_sizes, strict=True)]
        self._length = self._ends[-1] if self._ends else 0
        self._open: OrderedDict[int, ChunkFile] = OrderedDict()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_open"] = OrderedDict()
        state["_decoder"] = None
        return state

    def __len__(self) -> int:
        return self._length

    @property
    def decoder(self) -> ItemDecoder:
        """The item decoder (rebuilt after unpickling, in the new process)."""
        if self._decoder is None:
            providers = self.index.plugins.get("serializers", {})
            serializers = SerializerSet(
                self._serializers, allow_pickle=self._allow_pickle, providers=providers
            )
            self._decoder = self.item_loader.decoder(self.index, serializers)
        return self._decoder

    def locate(self, index: int) -> tuple[int, int]:
        """The ``(chunk index, position in chunk)`` of item ``index``."""
        chunk = bisect_right(self._ends, index)
        return chunk, index - self._starts[chunk]

    def chunk(self, chunk_index: int) -> ChunkFile:
        """The open chunk ``chunk_index``, mapping it (and closing the oldest) if needed."""
        found = self._open.get(chunk_index)
        if found is not None:
            return found
        opened = ChunkFile(self.cache.local_path(chunk_index), self.index.chunks[chunk_index])
        if len(self._open) >= self._max_open:
            _, oldest = self._open.popitem(last=False)
            oldest.close()
        self._open[chunk_index] = opened
        return opened

    def read(self, chunk_index: int, position: int) -> Any:
        """Decode the item at ``position`` of chunk ``chunk_index``."""
        return self.decoder.read(self.chunk(chunk_index), position)

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(f"Index {index} is out of range for {self._length} items.")
        chunk = bisect_right(self._ends, index)
        found = self._open.get(chunk) or self.chunk(chunk)
        decoder = self._decoder or self.decoder
        return decoder.read(found, index - self._starts[chunk])

    def close(self) -> None:
        """Release every memory map."""
        while self._open:
            _, chunk = self._open.popitem()
            chunk.close()
