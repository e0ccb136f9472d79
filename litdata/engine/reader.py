"""``DatasetReader``: random access to the items of a dataset, local or remote."""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from litdata.core import config
from litdata.core.errors import DatasetFormatError
from litdata.core.formats import (
    ChunkHandle,
    CountingDecoder,
    ItemDecoder,
    ItemLoader,
    ReadOptions,
    WindowDecoder,
)
from litdata.core.guards import is_count
from litdata.core.index import ChunkColumns, DatasetIndex
from litdata.core.location import Location
from litdata.core.protocols import Encryptor, Serializer
from litdata.core.registry import hooks
from litdata.engine.boundary.resolve import resolve
from litdata.engine.cache.chunk_cache import ChunkCache
from litdata.engine.cache.prefetch import Prefetcher
from litdata.engine.items.serializer_set import SerializerSet
from litdata.engine.native.keys import KeyIndex
from litdata.engine.opening import Dataset, open_dataset
from litdata.engine.ranged import PartsGone, RangedItems

__all__ = ["DatasetReader", "PartsGone", "position_of"]


def position_of(index: int, count: int) -> int:
    """The position ``index`` names among ``count`` items (a negative one counts from the end).

    Raises:
        IndexError: It is out of range.
    """
    position = index + count if index < 0 else index
    if not 0 <= position < count:
        raise IndexError(f"Index {index} is out of range for {count} items.")
    return position


class DatasetReader:
    """Random access to the items of a dataset: ``reader[i]``.

    Local chunks are memory-mapped in place; compressed and remote ones are fetched into the
    cache first. Every chunk's bytes are checked against the index's checksum before its first
    item is returned. The dataset itself is never modified.

    Args:
        root: The dataset's directory or URL (holding ``index.json``, or another format).
        serializers: Extra serializers by name (your own, or overrides).
        allow_pickle: Let pickled leaves import code; defaults to ``LITDATA_ALLOW_PICKLE``.
        cache_dir: The cache root for chunks that cannot be read in place.
        item_loader: The item loader the dataset was written with (``TokensLoader(block_size)``
            for token datasets); inferred from the index when omitted.
        max_open_chunks: How many chunks stay open at once.
        dataset: The dataset, when the caller has already found it (``open_dataset``).
        encryption: The key of an encrypted dataset.
        storage_options: Options for the storage backend (credentials, endpoint...).
        session_options: Session options for backends that take them (S3).
        max_cache_size: The cache budget in bytes for this dataset's fetched chunks.
        verify: Check in-place chunks against their checksums (default on; fetched chunks are
            always checked); ``LITDATA_VERIFY=0`` turns it off by default. A chunk file that
            passed is hashed again only once it changes (``LITDATA_VERIFY=always``: every
            time it is opened).
        cache_mode: Permission bits of cached files (``LITDATA_CACHE_MODE``, else ``0o600``).
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | Location,
        *,
        serializers: Mapping[str, Serializer] | None = None,
        allow_pickle: bool | None = None,
        cache_dir: str | None = None,
        item_loader: ItemLoader | None = None,
        max_open_chunks: int = 64,
        dataset: Dataset | None = None,
        encryption: Encryptor | None = None,
        storage_options: Mapping[str, Any] | None = None,
        session_options: Mapping[str, Any] | None = None,
        max_cache_size: int | None = None,
        verify: bool | None = None,
        cache_mode: int | None = None,
    ) -> None:
        if dataset is None:
            where = resolve(root, storage_options=storage_options, session_options=session_options)
            dataset = open_dataset(where, cache_dir=cache_dir, cache_mode=cache_mode)
        self.dataset = dataset
        self.location: Location = dataset.location
        self.index: DatasetIndex = dataset.index
        self.item_loader = item_loader
        self._serializers = dict(serializers or {})
        self._allow_pickle = config.allow_pickle_default() if allow_pickle is None else allow_pickle
        self._encryption = encryption
        if verify is None:
            verify = config.verify_setting() != "off"
        self.cache = ChunkCache(
            self.location,
            self.index,
            cache_dir=cache_dir,
            max_cache_size=max_cache_size,
            verify=verify,
            cache_mode=cache_mode,
        )
        self._max_open = max_open_chunks
        self._decoder: ItemDecoder | None = None
        self._count_items()
        self._open: OrderedDict[int, ChunkHandle] = OrderedDict()
        self._prefetcher: Prefetcher | None = None
        self._ranged: RangedItems | None = None
        self._ranges_allowed = config.ranged_reads_setting() != "off"
        self._keys: KeyIndex | None = None
        #: Who reads (``"rank 0, worker 1"``), named in messages about slow chunks.
        self.reader_name = "this process"

    def _count_items(self) -> None:
        """Count each chunk's items, and where each chunk starts.

        From the index's arrays when it has them (and the decoder counts that way), else
        chunk by chunk.
        """
        chunks = self.index.chunks
        decoder = self.decoder if len(chunks) else None  # an empty dataset needs none
        if decoder is None:
            counts = np.zeros(0, dtype=np.int64)
            starts = _starts_of(counts)
        elif isinstance(chunks, ChunkColumns) and isinstance(decoder, CountingDecoder):
            counts = decoder.item_counts(chunks)
            if not (
                isinstance(counts, np.ndarray)
                and counts.dtype == np.int64
                and counts.shape == (len(chunks),)
                and (not len(counts) or int(counts.min()) >= 0)
            ):
                raise self._bad_count(list(np.asarray(counts).ravel().tolist()))
            starts = chunks.starts if counts is chunks.sizes else _starts_of(counts)
        else:
            sizes = [decoder.items_in_chunk(chunk) for chunk in chunks]
            if not all(map(is_count, sizes)):
                raise self._bad_count(sizes)
            counts = np.asarray(sizes, dtype=np.int64)
            starts = _starts_of(counts)
        #: The number of items in each chunk (an int64 array).
        self.chunk_sizes: npt.NDArray[np.int64] = counts
        #: The first item of each chunk, and the number of items (``len(chunks) + 1`` values).
        self.chunk_starts: npt.NDArray[np.int64] = starts
        self._ends = starts[1:]
        self._length = int(starts[-1])

    def _bad_count(self, counts: Sequence[Any]) -> DatasetFormatError:
        position, count = next(
            ((i, n) for i, n in enumerate(counts) if not is_count(n)), (-1, counts)
        )
        return DatasetFormatError(
            f"The {self.dataset.format.name!r} format says chunk {position} "
            f"({self._chunk_url(position) if position >= 0 else '?'}) of {self.root} holds "
            f"{count!r} items, "
            f"not a count. The dataset's index is malformed; re-create the dataset."
        )

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_open=OrderedDict(), _decoder=None, _prefetcher=None, _ranged=None, _keys=None)
        if isinstance(self.index.chunks, ChunkColumns):  # counted again from the mapped arrays
            for name in ("chunk_sizes", "chunk_starts", "_ends"):
                del state[name]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if "chunk_sizes" not in state:
            self._count_items()

    def __len__(self) -> int:
        return self._length

    @property
    def root(self) -> str:
        """The dataset's location (a URL or an absolute path)."""
        return self.location.url

    @property
    def decoder(self) -> ItemDecoder:
        """The item decoder (rebuilt after unpickling, in the new process)."""
        if self._decoder is None:
            providers = self.index.plugins.get("serializers", {})
            serializers = SerializerSet(
                self._serializers, allow_pickle=self._allow_pickle, providers=providers
            )
            options = ReadOptions(serializers, self.item_loader, self._encryption, self.root)
            self._decoder = self.dataset.format.decoder(self.index, options)
        return self._decoder

    def prefetch(self, order: Sequence[int] | npt.NDArray[np.int64], depth: int) -> None:
        """Fetch and check chunks in background threads, in ``order``, ``depth`` ahead."""
        if self._prefetcher is None:
            remote = not self.cache.in_place
            self._prefetcher = Prefetcher(
                self.cache.hold,
                depth,
                self._describe,
                size=lambda chunk: self.index.chunks[chunk].chunk_bytes,
                ahead=self.cache.lookahead if remote else None,
            )
        self._prefetcher.plan(order)

    def _describe(self, chunk_index: int) -> str:
        return f"chunk {chunk_index} ({self._chunk_url(chunk_index)}) for {self.reader_name}"

    def chunk(self, chunk_index: int) -> ChunkHandle:
        """The open chunk ``chunk_index``, fetching and opening it (and closing the oldest)."""
        found = self._open.get(chunk_index)
        if found is not None:
            return found
        if self._prefetcher is not None:
            self._prefetcher.take(chunk_index)
        path = self.cache.hold(chunk_index)
        try:
            opened = self.decoder.open(path, self.index.chunks[chunk_index])
        except BaseException:
            self.cache.release(chunk_index)
            raise
        if len(self._open) >= self._max_open:
            oldest, handle = self._open.popitem(last=False)
            self._close(oldest, handle)
        self._open[chunk_index] = opened
        size = int(self.chunk_sizes[chunk_index])
        hooks.chunk_opened(self._chunk_url(chunk_index), chunk_index, size)
        return opened

    def _chunk_url(self, chunk_index: int) -> str:
        return self.location.join(self.index.chunks[chunk_index].filename)

    def done_with(self, chunk_index: int) -> None:
        """Close chunk ``chunk_index`` (a streaming worker read all it needs of it)."""
        handle = self._open.pop(chunk_index, None)
        if handle is not None:
            handle.release()
            self._close(chunk_index, handle)

    def _close(self, chunk_index: int, handle: ChunkHandle) -> None:
        handle.close()
        self.cache.release(chunk_index)
        hooks.chunk_closed(self._chunk_url(chunk_index), chunk_index)

    def read(self, chunk_index: int, position: int) -> Any:
        """Decode the item at ``position`` of chunk ``chunk_index``.

        An item of a remote chunk that is neither open nor cached is read with ranged
        requests, verified (see :mod:`litdata.engine.ranged`), rather than by downloading the
        chunk.
        """
        found = self._open.get(chunk_index)
        if found is None:
            ranged = self._ranged_items()
            if (
                ranged is not None
                and ranged.reads(chunk_index)
                and not self.cache.cached(chunk_index)
            ):
                return ranged.read(chunk_index, position)
            found = self.chunk(chunk_index)
        return (self._decoder or self.decoder).read(found, position)

    def arriving(self, chunk_index: int) -> Callable[[Any, int], Any] | None:
        """Reads items of chunk ``chunk_index`` while it downloads, or ``None`` if it cannot.

        The function returned takes ``(None, position)``, like the decoder's ``read`` takes
        an open chunk and a position.

        A remote chunk being fetched in parts by this process's prefetch, with block
        checksums, serves its items from the parts that arrived and passed them: the first
        items of a chunk need not wait for its last byte. The function returned raises
        :class:`~litdata.engine.ranged.PartsGone` once the download ended (the chunk is then
        read as usual, with :meth:`chunk`).
        """
        prefetcher = self._prefetcher
        if chunk_index in self._open or prefetcher is None or not prefetcher.fetching(chunk_index):
            return None
        ranged = self._ranged_items()
        if ranged is None:
            return None
        download = self.cache.arriving(chunk_index, lambda: prefetcher.fetching(chunk_index))
        if download is None or download.table is None:
            return None
        source = download.read
        return lambda _, position: ranged.read(chunk_index, position, source)

    def _ranged_items(self) -> RangedItems | None:
        if self._ranged is None and self._ranges_allowed:
            decoder = self.decoder
            if RangedItems.suits(self.location, self.index, decoder):
                self._ranged = RangedItems(self.location, self.index, decoder)  # type: ignore[arg-type]
            else:
                self._ranges_allowed = False
        return self._ranged

    def _windows(self) -> WindowDecoder:
        decoder = self.decoder
        if not isinstance(decoder, WindowDecoder):
            raise TypeError(
                f"Windows of frames are read from datasets written with TemporalArrayLoader; "
                f"{self.root} was written with {self.index.config.item_loader}. Read whole "
                f"samples with dataset[i]."
            )
        return decoder

    def read_window(
        self,
        chunk_index: int,
        position: int,
        start: int,
        frames: int,
        fields: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """Frames ``[start, start + frames)`` of record ``position`` of a chunk.

        Raises:
            TypeError: The dataset's records have no frame axis (not TemporalArrayLoader).
            KeyError: A field is not in the records.
            IndexError: The window does not fit in the record.
        """
        decoder = self._windows()
        found = self._open.get(chunk_index)
        if found is None:
            found = self.chunk(chunk_index)
        return decoder.window(found, position, start, frames, fields)

    def frame_counts(self, chunk_index: int) -> list[int]:
        """The frame count of each record of chunk ``chunk_index`` (from the index only)."""
        return self._windows().frame_counts(self.index.chunks[chunk_index])

    def chunk_start(self, chunk_index: int) -> int:
        """The global index of the first item of chunk ``chunk_index``."""
        return int(self.chunk_starts[chunk_index])

    def __getitem__(self, index: int) -> Any:
        index = position_of(index, self._length)
        chunk = int(np.searchsorted(self._ends, index, side="right"))
        return self.read(chunk, index - int(self.chunk_starts[chunk]))

    def find_key(self, key: Any) -> int:
        """The index of the sample whose key is ``key`` (the ``keys/`` sidecar, read lazily).

        Raises:
            KeyError: The dataset has no keys sidecar, or no sample has that key.
            TypeError: ``key`` is not an int or a str.
        """
        if self._keys is None:
            if self.index.keys is None:
                raise KeyError(
                    f"Keyed access requires a keys/ index next to the dataset, and {self.root} "
                    f"has none. Write it with optimize(..., key_fn=...) or "
                    f"build_keys_index({self.root!r}, key_fn)."
                )
            self._keys = KeyIndex.open(self.location, self.index.keys, self.cache.directory)
        found = self._keys.find(key)
        if found >= self._length:  # a sidecar newer than this index (an interrupted append)
            raise KeyError(key)
        return found

    def close(self) -> None:
        """Stop prefetching and close every chunk."""
        if self._prefetcher is not None:
            self._prefetcher.cancel(self.cache.release)
            self._prefetcher = None
        while self._open:
            chunk_index, handle = self._open.popitem()
            self._close(chunk_index, handle)


def _starts_of(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``[0, counts[0], counts[0] + counts[1], ...]``: where each chunk's items begin."""
    starts = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return starts
