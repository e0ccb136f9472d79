"""The contracts of dataset formats and item encodings: what reads a dataset's chunks.

A format adapter (``FormatAdapter``, a plugin of the ``litdata.formats`` group) presents a
dataset stored in some format as chunks of items; an item loader (``ItemLoader``, a plugin of
``litdata.item_loaders``) is how the items of litdata's own chunks are laid out: it encodes
samples for a writer and decodes them for a reader. What a reader brings to decoding is a
``ReadOptions``. Plain ``typing.Protocol``s, as in :mod:`litdata.core.protocols`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from litdata.core.protocols import Encryptor, Serializer

if TYPE_CHECKING:
    from litdata.core.index import ChunkColumns, ChunkEntry, DatasetIndex
    from litdata.core.location import Location

__all__ = [
    "ChunkChecker",
    "ChunkHandle",
    "CountingDecoder",
    "ForeignFormat",
    "FormatAdapter",
    "ItemDecoder",
    "ItemEncoder",
    "ItemLoader",
    "RangedDecoder",
    "ReadOptions",
    "SerializerChoice",
    "WindowDecoder",
]


class SerializerChoice(Protocol):
    """The serializers a writer or reader works with: one for a leaf, one for a stored name."""

    def infer(self, leaf: Any, ability: type | None = None) -> tuple[str, Serializer] | None:
        """The serializer that claims ``leaf`` (with ``ability``, if given), and its name."""
        ...

    def for_format(self, data_format: str) -> Serializer:
        """A serializer set up to decode leaves recorded as ``data_format``."""
        ...

    def origin(self, name: str) -> str:
        """Who provides the serializer of ``name``, for messages."""
        ...

    def provider(self, name: str) -> str | None:
        """The distribution providing ``name`` when it is not litdata's own."""
        ...


@dataclass(frozen=True)
class ReadOptions:
    """The reader's side of decoding, handed to a format adapter's ``decoder``.

    Attributes:
        serializers: The serializers to decode leaves with (the user's first).
        item_loader: The item loader the reader asked for, if any.
        encryption: The key to decrypt an encrypted dataset with, if any.
        where: The dataset's location, for messages.
    """

    serializers: SerializerChoice
    item_loader: ItemLoader | None = None
    encryption: Encryptor | None = None
    where: str = "the dataset"


class ChunkHandle(Protocol):
    """One chunk file opened for reading items (a memory map, an open file...)."""

    def prefetch(self) -> None:
        """Ask for the chunk's bytes ahead of reading (a hint; may do nothing)."""
        ...

    def release(self) -> None:
        """Drop what this process holds of the chunk; items handed out stay valid."""
        ...

    def close(self) -> None:
        """Release the chunk for good."""
        ...


class ItemDecoder(Protocol):
    """Reads the items of a dataset's chunk files (once they are local files)."""

    def items_in_chunk(self, entry: ChunkEntry) -> int:
        """How many items a chunk yields."""
        ...

    def open(self, path: str, entry: ChunkEntry) -> ChunkHandle:
        """Open the local chunk file ``path`` (checking it against ``entry``)."""
        ...

    def read(self, chunk: Any, position: int) -> Any:
        """The item at ``position`` of a chunk that ``open`` returned."""
        ...


@runtime_checkable
class WindowDecoder(Protocol):
    """A decoder of records with a frame axis, which can read a window of frames of a record."""

    def frame_counts(self, entry: ChunkEntry) -> list[int]:
        """The frame count of each record of a chunk, from its index entry."""
        ...

    def window(
        self, chunk: Any, position: int, start: int, frames: int, fields: Sequence[str] | None
    ) -> dict[str, Any]:
        """Frames ``[start, start + frames)`` of the chosen fields (all when ``None``)."""
        ...


@runtime_checkable
class CountingDecoder(Protocol):
    """A decoder that counts the items of every chunk at once, from the index's arrays.

    What ``items_in_chunk`` gives each chunk, as one int64 array (the same checks, vectorised;
    the first chunk that fails is refused as ``items_in_chunk`` refuses it). Opening a dataset
    of millions of chunks then makes no Python object per chunk.
    """

    def item_counts(self, chunks: ChunkColumns) -> Any:
        """The items of each chunk (an int64 array, possibly ``chunks.sizes`` itself)."""
        ...


@runtime_checkable
class RangedDecoder(Protocol):
    """A decoder that can read one item from byte ranges of a chunk, without the whole chunk.

    ``DatasetReader[i]`` uses it for remote chunks that are not cached: two small ranged reads
    (the chunk's offsets, then the item) instead of a whole download.
    """

    def item_span(
        self, entry: ChunkEntry, position: int, header: Callable[[int, int], bytes]
    ) -> tuple[int, int]:
        """The ``[start, end)`` bytes of item ``position`` in the chunk file.

        Args:
            entry: The chunk's index entry.
            position: The item.
            header: Reads bytes ``[start, end)`` of the chunk's header (cached by the reader).

        Raises:
            ChunkCorruptError: The offsets are inconsistent with the entry.
        """
        ...

    def decode_item(self, data: memoryview, where: str) -> Any:
        """Decode an item from its bytes (``where`` names it in errors)."""
        ...


class FormatAdapter(Protocol):
    """Presents a dataset stored in some format as chunks of items (native, MDS, Parquet...).

    The hook ``litdata_detect_format`` names the format of a location; the adapter then lists
    its chunks (files with item counts) as a ``DatasetIndex`` and decodes their items.
    """

    name: ClassVar[str]

    def read_index(self, location: Location) -> DatasetIndex:
        """Read or build the index of the dataset at ``location``.

        Raises:
            DatasetNotFoundError: There is no dataset of this format there.
        """
        ...

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> ItemDecoder:
        """A decoder for the chunks of ``index``, with the reader's options."""
        ...


@runtime_checkable
class ChunkChecker(Protocol):
    """A format that can check a chunk's plain bytes without decoding its items.

    ``litdata verify`` calls it once a chunk's size and checksum passed (and it decompressed);
    the chunks of a format without this ability are checked by decoding every item.
    """

    def check_chunk(
        self, data: memoryview, entry: ChunkEntry, index: DatasetIndex, where: str
    ) -> None:
        """Check the plain bytes of one chunk against its index entry.

        Raises:
            ChunkCorruptError: The bytes are not a sound chunk of that entry (the message
                says what is wrong).
        """
        ...


@runtime_checkable
class ForeignFormat(Protocol):
    """A format of datasets other tools write, read as they are (``litdata inspect`` says so).

    Such a format's chunk entries record their sizes as stored; an entry's
    ``extra["compression"]`` names the codec of a chunk the format's decoder decompresses itself.
    """

    #: Who writes datasets of this format (``"MosaicML Streaming's MDSWriter"``).
    written_by: ClassVar[str]


class ItemEncoder(Protocol):
    """Turns samples into item bytes for a writer."""

    providers: dict[str, str]

    @property
    def data_format(self) -> tuple[str, ...]:
        """The ``data_format`` names fixed by the first sample."""
        ...

    @property
    def data_spec(self) -> str | None:
        """The ``data_spec`` fixed by the first sample."""
        ...

    def encode(self, sample: Any) -> tuple[list[bytes], int, int | None]:
        """The item's bytes as parts to concatenate, their total size, and its ``dim``."""
        ...


class ItemLoader(Protocol):
    """An item encoding, as passed to ``optimize(item_loader=...)`` and to datasets.

    Its ``name`` is what ``index.json`` records as ``config.item_loader`` (LitData's class
    names); a dataset is read with the loader it was written with, created from the registry
    with no arguments when the reader names none.

    Attributes:
        sample_items: Whether each item is one sample as written, encoded on its own (so
            that keys and per-sample encryption apply), rather than windows cut across samples
            or records in a fixed layout.
    """

    name: ClassVar[str]
    sample_items: ClassVar[bool]

    def encoder(self, serializers: SerializerChoice) -> ItemEncoder:
        """An encoder for a writer."""
        ...

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> ItemDecoder:
        """A decoder for the dataset of ``index``."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """The parameters that must match when resuming."""
        ...
