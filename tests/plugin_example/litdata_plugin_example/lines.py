"""``LinesLoader``: samples that are lines of text, each stored as its UTF-8 bytes."""

from __future__ import annotations

from typing import Any, ClassVar

from litdata.core.formats import ItemEncoder, ReadOptions, SerializerChoice
from litdata.core.index import ChunkEntry, DatasetIndex
from litdata.engine.native.chunk_file import ChunkFile


class _LinesEncoder:
    """Each sample, a ``str``, as its UTF-8 bytes (no per-leaf header: one leaf)."""

    providers: dict[str, str] = {}  # the protocol's attribute

    @property
    def data_format(self) -> tuple[str, ...]:
        """One leaf, stored as text."""
        return ("str",)

    @property
    def data_spec(self) -> str | None:
        """No structure: a sample is one line."""
        return None

    def encode(self, sample: Any) -> tuple[list[bytes], int, int | None]:
        """The line's bytes."""
        if not isinstance(sample, str) or "\n" in sample:
            raise TypeError(f"LinesLoader writes lines of text, got {sample!r}")
        data = sample.encode()
        return [data], len(data), None


class _LinesDecoder:
    """Reads the lines back."""

    def items_in_chunk(self, entry: ChunkEntry) -> int:
        """One item per line written."""
        return entry.chunk_size

    def open(self, path: str, entry: ChunkEntry) -> ChunkFile:
        """Map the chunk file."""
        return ChunkFile(path, entry)

    def read(self, chunk: ChunkFile, position: int) -> str:
        """Line ``position``."""
        return bytes(chunk.item(position)).decode()


class LinesLoader:
    """Lines of text, one per sample."""

    name: ClassVar[str] = "LinesLoader"
    sample_items: ClassVar[bool] = True

    def encoder(self, serializers: SerializerChoice) -> ItemEncoder:
        """A lines encoder (serializers are not needed)."""
        del serializers
        return _LinesEncoder()

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> _LinesDecoder:
        """A lines decoder."""
        del index, options
        return _LinesDecoder()

    def state_dict(self) -> dict[str, Any]:
        """No parameters."""
        return {}
