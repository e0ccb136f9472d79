"""``RangedItems``: single items of remote chunks read with ranged requests (``ds[i]``).

Random access to a remote dataset should not download a 64 MB chunk to return one sample. When
the storage backend reads byte ranges and the decoder can locate an item (uncompressed chunks,
not encrypted per chunk), an item of a chunk that is not cached costs two small requests the
first time a chunk is touched (its offset table, then the item) and one after (the table is
kept). The item's bytes are checked for consistency (offsets within the chunk, leaf sizes that
add up, the requested length); the chunk's checksum covers whole chunks, which streaming and
cached reads verify. ``LITDATA_RANGED_READS=0`` downloads whole chunks instead.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from litdata.core.chunks.layout import header_size
from litdata.core.index import DatasetIndex
from litdata.core.protocols import ItemDecoder, RangedDecoder
from litdata.core.storage.location import Location

__all__ = ["RangedItems"]

_HEADERS_KEPT = 256


class RangedItems:
    """Reads single items of one dataset's remote chunks by byte ranges.

    Args:
        location: The dataset's (remote, ranged) location.
        index: Its index.
        decoder: Its item decoder (a ``RangedDecoder``).
    """

    def __init__(self, location: Location, index: DatasetIndex, decoder: RangedDecoder) -> None:
        self.location = location
        self.index = index
        self.decoder = decoder
        self._headers: OrderedDict[int, bytes] = OrderedDict()

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

    def _header(self, chunk_index: int, start: int, end: int) -> bytes:
        header = self._headers.get(chunk_index)
        if header is None:
            entry = self.index.chunks[chunk_index]
            url = self.location.join(entry.filename)
            header = self.location.storage.read_range(url, 0, header_size(entry.chunk_size))
            self._headers[chunk_index] = header
            if len(self._headers) > _HEADERS_KEPT:
                self._headers.popitem(last=False)
        return header[start:end]

    def read(self, chunk_index: int, position: int) -> Any:
        """Item ``position`` of chunk ``chunk_index``."""
        entry = self.index.chunks[chunk_index]
        start, end = self.decoder.item_span(
            entry, position, lambda first, last: self._header(chunk_index, first, last)
        )
        url = self.location.join(entry.filename)
        data = self.location.storage.read_range(url, start, end)
        return self.decoder.decode_item(memoryview(data), f"Chunk {url}, item {position}")
