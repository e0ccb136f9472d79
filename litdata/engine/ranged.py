"""``RangedItems``: single items of remote chunks read with ranged requests (``ds[i]``).

Random access to a remote dataset should not download a 64 MB chunk to return one sample. When
the storage backend reads byte ranges and the decoder can locate an item (uncompressed chunks,
not encrypted per chunk), an item of a chunk that is not cached costs two small requests the
first time a chunk is touched (its offset table, then the item) and one after (the table is
kept).

Every byte read so is verified before it is used, as a downloaded chunk is:

- a chunk with block checksums (what our writer records; see :mod:`litdata.core.chunks.blocks`)
  is read in whole 64 KiB blocks, each checked against its digest, offsets table included;
- a chunk with a whole-file checksum but no block table (written by an older litdata) is not
  read in ranges: it is downloaded and checked whole on first use, then read from the cache;
- a chunk with no checksum at all (written by LitData) has nothing to verify against: its items
  are read in ranges, cross-checked against the offsets (within the chunk, leaf sizes adding
  up to the item's length), as a download of it would be.

The same reads serve items of a chunk while it downloads in parts (its first batch need not
wait for the whole chunk): :meth:`RangedItems.read` then takes its bytes from the parts that
arrived and passed their block checksums, and only for chunks that have them.

``LITDATA_RANGED_READS=0`` downloads whole chunks always; ``LITDATA_RANGED_READS=unverified``
also reads chunks of the second kind in ranges, unverified.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from litdata.core import config
from litdata.core.chunks.blocks import BlockTable
from litdata.core.chunks.layout import header_size
from litdata.core.formats import ItemDecoder, RangedDecoder
from litdata.core.index import DatasetIndex
from litdata.core.location import Location

__all__ = ["PartsGone", "RangedItems", "Source"]

_HEADERS_KEPT = 256

#: Verified bytes ``[start, end)`` of a chunk file from its download in flight, or ``None``.
Source = Callable[[int, int], bytes | None]


class PartsGone(Exception):
    """The download a read took its bytes from finished or failed: read the chunk's file."""


class RangedItems:
    """Reads single items of one dataset's remote chunks by byte ranges, verified.

    Args:
        location: The dataset's (remote, ranged) location.
        index: Its index.
        decoder: Its item decoder (a ``RangedDecoder``).
    """

    def __init__(self, location: Location, index: DatasetIndex, decoder: RangedDecoder) -> None:
        self.location = location
        self.index = index
        self.decoder = decoder
        self._unverified = config.ranged_reads_setting() == "unverified"
        #: Per chunk: the verified bytes from its start that hold its header (whole blocks).
        self._headers: OrderedDict[int, bytes] = OrderedDict()
        self._tables: dict[int, BlockTable | None] = {}

    @classmethod
    def suits(cls, location: Location, index: DatasetIndex, decoder: ItemDecoder) -> bool:
        """Whether items of this dataset can be read in ranges."""
        encryption = index.config.encryption or {}
        return (
            location.local_path is None
            and location.storage.ranged
            and not index.config.compression
            and encryption.get("level") != "chunk"
            and isinstance(decoder, RangedDecoder)
        )

    def _table(self, chunk_index: int) -> BlockTable | None:
        if chunk_index not in self._tables:
            where = f"The index of {self.location.url}"
            self._tables[chunk_index] = BlockTable.of(self.index.chunks[chunk_index], where)
        return self._tables[chunk_index]

    def reads(self, chunk_index: int) -> bool:
        """Whether items of chunk ``chunk_index`` are read in ranges (else: downloaded whole).

        Raises:
            DatasetFormatError: The chunk's block table is malformed.
        """
        if self._table(chunk_index) is not None:
            return True
        return self.index.chunks[chunk_index].checksum is None or self._unverified

    def _range(self, chunk_index: int, start: int, end: int, source: Source | None = None) -> bytes:
        """Bytes ``[start, end)`` of a chunk file, verified block by block when it can be.

        Raises:
            PartsGone: ``source`` no longer serves them.
        """
        url = self.location.join(self.index.chunks[chunk_index].filename)
        table = self._table(chunk_index)
        if source is not None:  # the download checked its parts' blocks
            if table is None:
                raise PartsGone(url)
            first, last = table.span(start, end)
            found = source(first, last)
            if found is None:
                raise PartsGone(url)
            return found[start - first : end - first]
        if table is None:
            return self.location.storage.read_range(url, start, end)
        first, last = table.span(start, end)
        data = self.location.storage.read_range(url, first, last)
        table.verify(data, first, url)
        return data[start - first : end - first]

    def _header(
        self, chunk_index: int, start: int, end: int, source: Source | None = None
    ) -> bytes:
        header = self._headers.get(chunk_index)
        if header is None:
            entry = self.index.chunks[chunk_index]
            size = min(header_size(entry.chunk_size), entry.chunk_bytes)
            table = self._table(chunk_index)
            if table is not None:  # whole blocks: a small chunk is then kept whole
                size = table.span(0, size)[1]
            header = self._range(chunk_index, 0, size, source)
            self._headers[chunk_index] = header
            if len(self._headers) > _HEADERS_KEPT:
                self._headers.popitem(last=False)
        return header[start:end]

    def read(self, chunk_index: int, position: int, source: Source | None = None) -> Any:
        """Item ``position`` of chunk ``chunk_index``.

        Args:
            chunk_index: The chunk.
            position: The item's position in it.
            source: Where its bytes come from (the chunk's download in flight); the store
                itself when omitted.

        Raises:
            ChunkCorruptError: Its bytes fail their block checksum, or disagree with the offsets.
            PartsGone: ``source`` no longer serves the bytes.
        """
        entry = self.index.chunks[chunk_index]
        start, end = self.decoder.item_span(
            entry, position, lambda first, last: self._header(chunk_index, first, last, source)
        )
        kept = self._headers.get(chunk_index, b"")
        # An item within the header's blocks (already read and verified) costs no request.
        inside = end <= len(kept)
        data = kept[start:end] if inside else self._range(chunk_index, start, end, source)
        url = self.location.join(entry.filename)
        return self.decoder.decode_item(memoryview(data), f"Chunk {url}, item {position}")
