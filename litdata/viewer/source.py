"""``Source``: one dataset opened for viewing, read under a lock, every read's cost counted."""

from __future__ import annotations

import dataclasses
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from litdata.cli.inspect import summary
from litdata.core.location import Location
from litdata.core.protocols import Encryptor
from litdata.engine.boundary.resolve import resolve
from litdata.engine.opening import Dataset, open_dataset
from litdata.engine.reader import DatasetReader
from litdata.viewer.cells import cell, leaf, leaves
from litdata.viewer.cost import Cost, CountingStore
from litdata.viewer.images import THUMB_SIDE, picture

__all__ = ["MAX_CHUNKS_SHOWN", "MAX_PAGE", "Source"]

T = TypeVar("T")

#: Samples one request may read.
MAX_PAGE = 100
#: Chunks the chunk map lists (the rest are counted).
MAX_CHUNKS_SHOWN = 5000
#: A remote chunk this small is fetched whole when a page needs several of its items (one
#: request rather than one per item); a larger one is read item by item, in ranges.
WHOLE_CHUNK_BYTES = 16 << 20
#: ... when the page needs at least this many of its items.
WHOLE_CHUNK_ITEMS = 8
#: Bytes of thumbnails kept per dataset (the page fetches them right after the rows).
THUMB_CACHE_BYTES = 32 << 20


class Source:
    """A dataset the viewer shows.

    Reads go through one lock (a reader is not thread-safe), so the cost a request reports is
    what the storage counted while it held the lock.

    Args:
        name: The dataset's name on the page (its location).
        reader: The reader, over a location whose storage is a :class:`CountingStore`.
        store: That storage.
        opened: What opening the dataset cost.
    """

    def __init__(
        self, name: str, reader: DatasetReader, store: CountingStore, opened: Cost
    ) -> None:
        self.name = name
        self.reader = reader
        self.store = store
        self.opened = opened
        self._lock = threading.Lock()
        self._thumbs: OrderedDict[tuple[int, str], tuple[bytes, str]] = OrderedDict()
        self._thumb_bytes = 0

    @classmethod
    def open(
        cls,
        root: str | os.PathLike[str],
        *,
        encryption: Encryptor | None = None,
        storage_options: Mapping[str, Any] | None = None,
        cache_dir: str | None = None,
        **reader_options: Any,
    ) -> Source:
        """Open the dataset at ``root`` (any format, local or remote) for viewing."""
        where = resolve(root, storage_options=storage_options)
        store = CountingStore(where.storage)
        counted = dataclasses.replace(where, storage=store)
        dataset = open_dataset(counted, cache_dir=cache_dir)
        reader = DatasetReader(
            counted, dataset=dataset, encryption=encryption, cache_dir=cache_dir, **reader_options
        )
        return cls(where.url, reader, store, store.total())

    @classmethod
    def of_reader(cls, reader: DatasetReader, **reader_options: Any) -> Source:
        """A source over the dataset another reader (a ``StreamingDataset``'s) reads."""
        store = CountingStore(reader.location.storage)
        location: Location = dataclasses.replace(reader.location, storage=store)
        dataset = Dataset(location, reader.index, reader.dataset.format)
        mine = DatasetReader(location, dataset=dataset, **reader_options)
        return cls(location.url, mine, store, Cost(in_place=store.in_place))

    def __len__(self) -> int:
        return len(self.reader)

    @contextmanager
    def reading(self, cost: Cost) -> Iterator[DatasetReader]:
        """Hold the reader; what the storage counts meanwhile is added to ``cost``."""
        with self._lock:
            before = self.store.total()
            try:
                yield self.reader
            finally:
                after = self.store.total()
                cost.add(Cost(after.requests - before.requests, after.bytes - before.bytes))

    def locked(self, cost: Cost, work: Callable[[DatasetReader], T]) -> T:
        """``work(reader)`` while holding the reader."""
        with self.reading(cost) as reader:
            return work(reader)

    # -- what the overview shows -----------------------------------------------------------
    def overview(self) -> dict[str, Any]:
        """What ``litdata inspect`` says, the sample structure and whether keys exist."""
        index = self.reader.index
        return {
            "name": self.name,
            "items": len(self.reader),
            "chunks": len(index.chunks),
            "keyed": index.keys is not None,
            "summary": [list(row) for row in summary(self.reader.dataset)],
        }

    def chunk_map(self) -> dict[str, Any]:
        """One entry per chunk (the first :data:`MAX_CHUNKS_SHOWN`): bytes, items, cached."""
        reader = self.reader
        chunks = reader.index.chunks
        shown = min(len(chunks), MAX_CHUNKS_SHOWN)
        entries = []
        for position in range(shown):
            entry = chunks[position]
            entries.append(
                {
                    "name": entry.filename,
                    "bytes": int(entry.chunk_bytes),
                    "items": int(reader.chunk_sizes[position]),
                    "start": int(reader.chunk_starts[position]),
                    "cached": bool(reader.cache.cached(position)),
                }
            )
        return {"chunks": entries, "total": len(chunks), "shown": shown}

    # -- samples -------------------------------------------------------------------------
    def rows(self, indices: Sequence[int], cost: Cost) -> list[dict[str, Any]]:
        """The rows of samples ``indices``: each one's cells, or the error that stopped it."""
        with self.reading(cost) as reader:
            self._fetch_whole_chunks(reader, indices)
            return [self._row(reader, index) for index in indices]

    def _fetch_whole_chunks(self, reader: DatasetReader, indices: Sequence[int]) -> None:
        if reader.cache.in_place or not indices:
            return
        chunks = np.searchsorted(reader.chunk_starts[1:], np.asarray(indices), side="right")
        found, counts = np.unique(chunks, return_counts=True)
        for chunk, count in zip(found.tolist(), counts.tolist(), strict=True):
            small = reader.index.chunks[chunk].chunk_bytes <= WHOLE_CHUNK_BYTES
            if small and count >= WHOLE_CHUNK_ITEMS:
                try:
                    reader.chunk(chunk)
                except Exception:  # noqa: S112  # each sample then reports its own error
                    continue

    def _row(self, reader: DatasetReader, index: int) -> dict[str, Any]:
        try:
            sample = reader[index]
        except Exception as error:  # a sample that fails to decode is an error cell
            return {"index": index, "error": f"sample {index}: {type(error).__name__}: {error}"}
        cells: dict[str, Any] = {}
        for name, value in leaves(sample):
            try:
                described = cell(value)
                if described["kind"] == "image":
                    self._keep_thumb(index, name, value)
            except Exception as error:  # one bad field is one error cell
                described = {"kind": "error", "error": f"{type(error).__name__}: {error}"}
            cells[name] = described
        return {"index": index, "cells": cells}

    def _keep_thumb(self, index: int, name: str, value: Any) -> None:
        data = picture(value, THUMB_SIDE)
        self._thumbs[(index, name)] = data
        self._thumb_bytes += len(data[0])
        while self._thumb_bytes > THUMB_CACHE_BYTES:
            _, (dropped, _) = self._thumbs.popitem(last=False)
            self._thumb_bytes -= len(dropped)

    def thumb(self, index: int, name: str, cost: Cost) -> tuple[bytes, str]:
        """Sample ``index``'s field ``name`` as a thumbnail (kept from its page, or drawn)."""
        with self._lock:
            kept = self._thumbs.get((index, name))
        if kept is not None:
            return kept
        value = self.value(index, name, cost)
        return picture(value, THUMB_SIDE)

    def value(self, index: int, name: str, cost: Cost) -> Any:
        """Sample ``index``'s field ``name``.

        Raises:
            IndexError: No such sample.
            KeyError: It has no such field.
        """
        if not 0 <= index < len(self.reader):
            raise IndexError(f"no sample {index}: the dataset has {len(self.reader):,}")
        sample = self.locked(cost, lambda reader: reader[index])
        return leaf(sample, name)

    def find_key(self, key: str, cost: Cost) -> int:
        """The index of the sample keyed ``key`` (a string, or an integer written in digits).

        Raises:
            KeyError: The dataset has no keys, or none is ``key``.
        """

        def find(reader: DatasetReader) -> int:
            try:
                return reader.find_key(key)
            except KeyError:
                if key.lstrip("-").isdigit():
                    return reader.find_key(int(key))
                raise

        return self.locked(cost, find)
