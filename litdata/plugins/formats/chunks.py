"""``chunks``: litdata's native format (LitData's ``index.json`` + chunk files)."""

from __future__ import annotations

from typing import ClassVar

from litdata.core.chunks.layout import validate_header
from litdata.core.errors import DatasetNotFoundError
from litdata.core.index import INDEX_FILENAME, ChunkEntry, DatasetIndex, index_from_bytes
from litdata.core.items.loaders import loader_for
from litdata.core.protocols import ItemDecoder
from litdata.core.reading import ReadOptions
from litdata.core.storage.location import Location

__all__ = ["ChunksFormat"]


class ChunksFormat:
    """Datasets written by ``optimize`` (ours or LitData's), local or remote."""

    name: ClassVar[str] = "chunks"

    def read_index(self, location: Location) -> DatasetIndex:
        """Read ``<location>/index.json``.

        Raises:
            DatasetNotFoundError: It does not exist.
            DatasetFormatError: It is not a valid index.
        """
        try:
            data = location.read(INDEX_FILENAME)
        except FileNotFoundError:
            raise DatasetNotFoundError(
                f"No dataset at {location.url}: {INDEX_FILENAME} does not exist. Did optimize() "
                f"finish? If per-worker indexes are there, litdata.complete_dataset() merges them."
            ) from None
        return index_from_bytes(data, location.join(INDEX_FILENAME))

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> ItemDecoder:
        """The decoder of the item loader the index records (checked against the reader's)."""
        return loader_for(index, options.item_loader, options.where).decoder(index, options)

    def check_chunk(
        self, data: memoryview, entry: ChunkEntry, index: DatasetIndex, where: str
    ) -> None:
        """Check the chunk's header: its item count and offsets (not under chunk encryption).

        Raises:
            ChunkCorruptError: The header disagrees with the entry or the file's size.
        """
        encryption = index.config.encryption
        if not (encryption and encryption.get("level") == "chunk"):
            validate_header(data, num_items=entry.chunk_size, file_size=len(data), name=where)
