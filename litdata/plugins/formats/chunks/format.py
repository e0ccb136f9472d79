"""``chunks``: litdata's native format (LitData's ``index.json`` + chunk files)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from litdata.core.chunks.blocks import BlockTable
from litdata.core.chunks.layout import validate_header
from litdata.core.errors import DatasetNotFoundError
from litdata.core.formats import ItemDecoder, ReadOptions
from litdata.core.index import INDEX_FILENAME, ChunkEntry, DatasetIndex, index_from_bytes
from litdata.core.location import Location
from litdata.engine.items.loaders import loader_for
from litdata.engine.native.compact_index import compact_index
from litdata.engine.native.completion import complete_on_open

__all__ = ["ChunksFormat"]


class ChunksFormat:
    """Datasets written by ``optimize`` (ours or LitData's), local or remote."""

    name: ClassVar[str] = "chunks"

    def read_index(self, location: Location) -> DatasetIndex:
        """Read ``<location>/index.json``, or merge the per-writer indexes when it is missing.

        The merge is LitData's on open, made safe (``litdata.engine.native.completion``): published
        once under the output lock, or kept in memory for a read-only or remote dataset.

        Raises:
            DatasetNotFoundError: Neither it nor a per-writer index exists, or the run that
                wrote them did not finish.
            OutputLockedError: A writer still writes the dataset.
            DatasetFormatError: It is not a valid index.
        """
        try:
            data = location.read(INDEX_FILENAME)
        except FileNotFoundError:
            merged = complete_on_open(location)
            if merged is None:
                raise DatasetNotFoundError(
                    f"No dataset at {location.url}: {INDEX_FILENAME} does not exist, nor does "
                    f"a per-writer index (<rank>.index.json). Did optimize() finish?"
                ) from None
            return merged
        return index_from_bytes(data, location.join(INDEX_FILENAME))

    def read_cached_index(self, location: Location, home: Path, mode: int) -> DatasetIndex:
        """The index through its compact form (mapped, or built once into ``home``).

        See :mod:`litdata.engine.native.compact_index`; without ``index.json``, as ``read_index``.
        """
        try:
            return compact_index(location, home, mode)
        except FileNotFoundError:
            return self.read_index(location)

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> ItemDecoder:
        """The decoder of the item loader the index records (checked against the reader's)."""
        return loader_for(index, options.item_loader, options.where).decoder(index, options)

    def check_chunk(
        self, data: memoryview, entry: ChunkEntry, index: DatasetIndex, where: str
    ) -> None:
        """Check the chunk's block checksums and its header (not under chunk encryption).

        Raises:
            ChunkCorruptError: A block fails its checksum (what a ranged read would meet), or
                the header disagrees with the entry or the file's size.
            DatasetFormatError: The block table is malformed.
        """
        table = BlockTable.of(entry, where) if not index.config.compression else None
        if table is not None:
            table.verify(data, 0, where)
        encryption = index.config.encryption
        if not (encryption and encryption.get("level") == "chunk"):
            validate_header(data, num_items=entry.chunk_size, file_size=len(data), name=where)
