"""``Cache``: LitData's low-level writer and reader in one, addressed by item index.

Code written against LitData's ``litdata.streaming.cache.Cache`` fills a cache item by item
(``cache[i] = sample``), closes it (``done()``), merges the writers' indexes (``merge()``) and reads
items back (``cache[i]``). Here the writing is a :class:`~litdata.engine.native.writer.ChunkWriter`
and the reading a :class:`~litdata.engine.reader.DatasetReader`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from litdata.core.errors import DatasetNotFoundError
from litdata.core.formats import ItemLoader
from litdata.core.index import INDEX_FILENAME
from litdata.core.protocols import Encryptor, Serializer
from litdata.engine.native.rank_indexes import merge_rank_indexes
from litdata.engine.native.writer import ChunkWriter
from litdata.engine.reader import DatasetReader

__all__ = ["Cache"]


def _writer_rank() -> int:
    """This process's writer rank: its DataLoader worker among all ranks' workers."""
    import torch.utils.data

    info = torch.utils.data.get_worker_info()
    workers, worker = (info.num_workers, info.id) if info is not None else (1, 0)
    return int(os.environ.get("RANK", "0")) * workers + worker


class Cache:
    """Write items by index into ``input_dir``, then read them back by index.

    Args:
        input_dir: The dataset's local folder (a LitData ``Dir`` with a ``path`` too).
        chunk_size: Items per chunk when writing (one of this and ``chunk_bytes``).
        chunk_bytes: Bytes per chunk when writing.
        compression: A compressor spec, e.g. ``"zstd"``.
        item_loader: The item encoding.
        serializers: Extra serializers by name.
        encryption: Encrypt each sample or chunk with this key.
        writer_chunk_index: The number of the writer's first chunk.
        **options: LitData's other arguments: ``storage_options`` and ``session_options``
            reach the reader; the rest (``max_cache_size``, ``max_pre_download``...) tune
            LitData's own reader and change nothing here.

    Items are written in index order, from 0: one added ahead of the next expected index
    waits until the items before it arrive (or until :meth:`done`, which writes the rest in
    index order).
    """

    def __init__(
        self,
        input_dir: Any,
        *,
        chunk_size: int | None = None,
        chunk_bytes: int | str | None = None,
        compression: str | None = None,
        item_loader: ItemLoader | None = None,
        serializers: Mapping[str, Serializer] | None = None,
        encryption: Encryptor | None = None,
        writer_chunk_index: int | None = None,
        **options: Any,
    ) -> None:
        path = getattr(input_dir, "path", None) or getattr(input_dir, "url", None) or input_dir
        self.cache_dir = os.fspath(path)
        self._writing: dict[str, Any] = {
            "chunk_size": chunk_size,
            "chunk_bytes": chunk_bytes,
            "compression": compression,
            "item_loader": item_loader,
            "serializers": serializers,
            "encryption": encryption,
            "chunk_index": writer_chunk_index or 0,
        }
        self._reading: dict[str, Any] = {"serializers": serializers, "item_loader": item_loader}
        self._reading.update(
            (key, options[key]) for key in ("storage_options", "session_options") if key in options
        )
        if encryption is not None:
            self._reading["encryption"] = encryption
        self._writer: ChunkWriter | None = None
        self._waiting: dict[int, Any] = {}
        self._next = 0
        self._reader: DatasetReader | None = None

    @property
    def rank(self) -> int:
        """The writer's rank (its DataLoader worker among every rank's workers)."""
        return _writer_rank()

    @property
    def filled(self) -> bool:
        """Whether the dataset is complete (its ``index.json`` is there)."""
        return Path(self.cache_dir, INDEX_FILENAME).exists()

    def __setitem__(self, index: int, data: Any) -> None:
        self._add_item(index, data)

    def _add_item(self, index: int, data: Any) -> None:
        if self._writer is None:
            options = {key: value for key, value in self._writing.items() if value is not None}
            self._writer = ChunkWriter(self.cache_dir, rank=self.rank, mode="overwrite", **options)
        self._waiting[index] = data
        while self._next in self._waiting:
            self._writer.add(self._waiting.pop(self._next))
            self._next += 1

    def done(self) -> list[str]:
        """Write the items still waiting (in index order) and this writer's index.

        Returns:
            The chunk files this writer wrote.
        """
        if self._writer is None:
            return []
        for index in sorted(self._waiting):
            self._writer.add(self._waiting.pop(index))
        self._writer.close()
        return [os.path.join(self.cache_dir, chunk.filename) for chunk in self._writer.chunks]

    def merge(self, num_workers: int = 1, node_rank: int | None = None) -> None:
        """Publish ``index.json`` from the writers' indexes.

        ``num_workers`` and ``node_rank`` are LitData's: every writer's index in the folder
        is merged here.
        """
        del num_workers, node_rank
        merge_rank_indexes(self.cache_dir)

    def _read(self) -> DatasetReader:
        if self._reader is None:
            if not self.filled:
                raise DatasetNotFoundError(
                    f"{self.cache_dir} has no {INDEX_FILENAME} yet: call done() and merge() "
                    f"after writing, before reading."
                )
            self._reader = DatasetReader(self.cache_dir, **self._reading)
        return self._reader

    def __getitem__(self, index: Any) -> Any:
        """The item at ``index`` (an int, or LitData's ``ChunkedIndex``)."""
        return self._read()[int(getattr(index, "index", index))]

    def __len__(self) -> int:
        return len(self._read())

    def get_chunk_intervals(self) -> list[tuple[int, int, int, int]]:
        """Each chunk's ``(start, start, end, end)`` item interval, as LitData's ``Interval``."""
        intervals, start = [], 0
        for size in self._read().chunk_sizes:
            intervals.append((start, start, start + size, start + size))
            start += size
        return intervals
