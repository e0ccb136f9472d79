"""Reading items from local chunks: memory-mapped, validated, decoded on demand."""

from __future__ import annotations

import mmap
import os
import struct
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Mapping
from itertools import accumulate
from pathlib import Path
from typing import Any

from litdata.core import config
from litdata.core.cache import ChunkCache
from litdata.core.errors import DatasetFormatError
from litdata.core.index import ChunkEntry, DatasetIndex
from litdata.core.items import PYTREE, PyTreeDecoder
from litdata.core.layout import validate_header
from litdata.core.protocols import Serializer
from litdata.core.serialization import SerializerSet
from litdata.core.source import open_local_dataset

__all__ = ["ChunkFile", "DatasetReader"]

_OFFSETS = struct.Struct("<II")


class ChunkFile:
    """One local chunk file, memory-mapped read-only, its header checked against the index.

    Args:
        path: The local, uncompressed chunk file.
        entry: The chunk's index entry.
    """

    __slots__ = ("_map", "entry", "path", "view")

    def __init__(self, path: str | os.PathLike[str], entry: ChunkEntry) -> None:
        self.path = Path(path)
        self.entry = entry
        try:
            with open(self.path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        except FileNotFoundError:
            raise FileNotFoundError(
                f"Chunk {self.path} listed in index.json is missing. The dataset is incomplete; "
                f"re-create or re-copy it."
            ) from None
        self.view = memoryview(self._map) if self._map is not None else memoryview(b"")
        validate_header(self.view, num_items=entry.chunk_size, file_size=size, name=str(self.path))

    def item(self, position: int) -> memoryview:
        """The bytes of the item at ``position`` inside this chunk (zero-copy)."""
        start, end = _OFFSETS.unpack_from(self.view, 4 + 4 * position)
        return self.view[start:end]

    def close(self) -> None:
        """Release the memory map, or leave it to the garbage collector while views remain."""
        try:
            self.view.release()
            if self._map is not None:
                self._map.close()
        except BufferError:  # a caller still holds a zero-copy view of an item
            pass


class DatasetReader:
    """Random access to the items of a local dataset: ``reader[i]``.

    Chunks are memory-mapped in place; compressed chunks are decompressed into the cache
    first. The dataset directory is never modified.

    Args:
        root: The dataset directory (holding ``index.json``).
        serializers: Extra serializers by name (your own, or overrides).
        allow_pickle: Let pickled leaves import code; defaults to ``LITDATA_ALLOW_PICKLE``.
        cache_dir: The cache root for decompressed chunks.
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
        max_open_chunks: int = 64,
        index: DatasetIndex | None = None,
    ) -> None:
        if index is None:
            self.root, self.index = open_local_dataset(root)
        else:
            self.root, self.index = Path(root), index
        loader = self.index.config.item_loader
        if loader not in (None, PYTREE):
            raise DatasetFormatError(
                f"{self.root} was written with item_loader={loader!r}; open it with the "
                f"matching item loader (e.g. item_loader=TokensLoader(block_size=...))."
            )
        self._serializers = dict(serializers or {})
        self._allow_pickle = config.allow_pickle_default() if allow_pickle is None else allow_pickle
        self.cache = ChunkCache(self.root, self.index, cache_dir)
        self._max_open = max_open_chunks
        sizes = [chunk.chunk_size for chunk in self.index.chunks]
        self._ends = list(accumulate(sizes))
        self._starts = [end - size for end, size in zip(self._ends, sizes, strict=True)]
        self._length = self._ends[-1] if self._ends else 0
        self._open: OrderedDict[int, ChunkFile] = OrderedDict()
        self._decoder: PyTreeDecoder | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_open"] = OrderedDict()
        state["_decoder"] = None
        return state

    def __len__(self) -> int:
        return self._length

    @property
    def decoder(self) -> PyTreeDecoder:
        """The item decoder (built on first use, so opening a dataset stays cheap)."""
        if self._decoder is None:
            providers = self.index.plugins.get("serializers", {})
            serializers = SerializerSet(
                self._serializers, allow_pickle=self._allow_pickle, providers=providers
            )
            config_ = self.index.config
            self._decoder = PyTreeDecoder(config_.data_format, config_.data_spec, serializers)
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
        return self.decoder.decode(self.chunk(chunk_index).item(position))

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(f"Index {index} is out of range for {self._length} items.")
        chunk = bisect_right(self._ends, index)
        found = self._open.get(chunk) or self.chunk(chunk)
        decoder = self._decoder or self.decoder
        return decoder.decode(found.item(index - self._starts[chunk]))

    def close(self) -> None:
        """Release every memory map."""
        while self._open:
            _, chunk = self._open.popitem()
            chunk.close()
