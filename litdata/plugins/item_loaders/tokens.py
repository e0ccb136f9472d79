"""The token-stream item encoding (LitData's ``TokensLoader``).

On write, each sample is one 1-D array of tokens, stored raw by an element serializer (no
size header); a chunk closes by token count. On read, a chunk of ``dim`` tokens holds
``dim // block_size`` items, each ``block_size`` consecutive tokens (leftover tokens at a
chunk's end are dropped), decoded by the serializer the index names.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from litdata.core.chunks.layout import header_size
from litdata.core.errors import DatasetFormatError, SampleError
from litdata.core.formats import ReadOptions, SerializerChoice
from litdata.core.guards import check_count
from litdata.core.index import ChunkColumns, ChunkEntry, DatasetIndex
from litdata.core.protocols import ElementSerializer
from litdata.engine.native.chunk_file import ChunkFile
from litdata.engine.native.encrypted import decrypting, reader_encryptor

__all__ = ["TokensDecoder", "TokensEncoder", "TokensLoader"]


def _tokens_leaf(sample: Any) -> Any:
    wrapped = getattr(sample, "array", None)  # a media wrapper holding an array
    return wrapped if wrapped is not None and not isinstance(sample, np.ndarray) else sample


class TokensEncoder:
    """Encodes 1-D token arrays (numpy arrays or torch tensors) of one dtype.

    Args:
        serializers: Where to find an element serializer for the arrays.
    """

    def __init__(self, serializers: SerializerChoice) -> None:
        self._serializers = serializers
        self._format: str | None = None
        self._serialize: Any = None
        self.providers: dict[str, str] = {}

    @property
    def data_format(self) -> tuple[str, ...]:
        """One name: the element serializer's, with the dtype (``no_header_numpy:5``)."""
        return (self._format,) if self._format else ()

    @property
    def data_spec(self) -> str | None:
        """Token datasets have a single leaf and no structure."""
        return None

    def encode(self, sample: Any) -> tuple[list[bytes], int, int]:
        """The raw tokens (one part), their size in bytes and their count.

        Raises:
            SampleError: The sample is not a 1-D array, or its dtype changed.
        """
        leaf = _tokens_leaf(sample)
        ndim = getattr(leaf, "ndim", None)
        torch_module = sys.modules.get("torch")
        is_array = isinstance(leaf, np.ndarray) or (
            torch_module is not None and isinstance(leaf, torch_module.Tensor)
        )
        if not is_array or ndim != 1:
            raise SampleError(
                f"TokensLoader samples must be 1-D token arrays (numpy or torch), got "
                f"{type(leaf).__qualname__} with ndim={ndim}."
            )
        if self._serialize is None:
            found = self._serializers.infer(leaf, ability=ElementSerializer)
            if found is None:
                raise SampleError(
                    f"TokensLoader stores tokens without a header, and no installed serializer "
                    f"writes a {leaf.dtype} array that way."
                )
            name, serializer = found
            self._serialize = serializer.serialize
            provider = self._serializers.provider(name)
            if provider:
                self.providers[name] = provider
        data, name = self._serialize(leaf)
        if self._format is None:
            self._format = name
        elif name != self._format:
            raise SampleError(
                f"Token arrays must all have the dtype of the first one ({self._format}); this "
                f"one serializes as {name}."
            )
        return [data], len(data), len(leaf)


class TokensDecoder:
    """Reads fixed windows of ``block_size`` tokens.

    Args:
        index: The dataset's index (one element format, ``dim`` on every chunk).
        block_size: Tokens per item.
        options: The reader's serializers and key.
    """

    def __init__(self, index: DatasetIndex, block_size: int, options: ReadOptions) -> None:
        formats = index.config.data_format
        if len(formats) != 1:
            raise DatasetFormatError(
                f"TokensLoader reads datasets of 1-D token arrays, but {options.where} stores "
                f"{list(formats)}. Open it without item_loader, or with the one that wrote it."
            )
        serializer = options.serializers.for_format(formats[0])
        if not isinstance(serializer, ElementSerializer):
            raise DatasetFormatError(
                f"TokensLoader cuts windows out of headerless token arrays, but {options.where} "
                f"stores {formats[0]!r}, which is not one. Open it without item_loader."
            )
        chunks = index.chunks
        if (
            bool(np.any(chunks.dims < 0))
            if isinstance(chunks, ChunkColumns)
            else any(chunk.dim is None for chunk in chunks)
        ):
            raise DatasetFormatError(
                f"TokensLoader needs the token count ('dim') of every chunk, but the index of "
                f"{options.where} lacks it: the dataset was not written with "
                f"item_loader=TokensLoader()."
            )
        encryptor = reader_encryptor(index.config.encryption, options.encryption, options.where)
        if encryptor is not None and encryptor.level != "chunk":
            raise DatasetFormatError(
                f"{options.where} encrypts each token array on its own, so windows cannot be "
                f"cut across them; token datasets must be encrypted per chunk."
            )
        self._decrypt = decrypting(encryptor, options.where) if encryptor is not None else None
        self._deserialize = serializer.deserialize
        self.block_size = block_size
        self._where = options.where
        self._element_size = serializer.element_size()
        self._item_bytes = self._element_size * block_size

    def items_in_chunk(self, entry: ChunkEntry) -> int:
        """Whole windows in a chunk: ``dim // block_size``.

        Raises:
            DatasetFormatError: The chunk's ``dim`` tokens (and its header) would not fit in
                its ``chunk_bytes``.
        """
        where, field = f"The index of {self._where}", f"the dim of {entry.filename}"
        room = entry.chunk_bytes - header_size(entry.chunk_size)
        dim = check_count(entry.dim, where=where, field=field, most=room // self._element_size)
        return dim // self.block_size

    def item_counts(self, chunks: ChunkColumns) -> Any:
        """``items_in_chunk`` of every chunk, from the arrays."""
        room = chunks.nbytes - 4 * (chunks.sizes + 2)  # what header_size() takes
        bad = np.flatnonzero(chunks.dims > room // self._element_size)
        if len(bad):
            self.items_in_chunk(chunks[int(bad[0])])  # raises, naming the chunk
        return chunks.dims // self.block_size

    def open(self, path: str, entry: ChunkEntry) -> ChunkFile:
        """Map the chunk file (or decrypt an encrypted one into memory)."""
        return ChunkFile.open(path, entry, self._decrypt)

    def item_span(
        self, entry: ChunkEntry, position: int, header: Callable[[int, int], bytes]
    ) -> tuple[int, int]:
        """Where window ``position`` lies in the chunk file (no offsets needed)."""
        if self._decrypt is not None:
            raise TypeError("an encrypted chunk cannot be read in ranges")
        start = header_size(entry.chunk_size) + self._item_bytes * position
        return start, start + self._item_bytes

    def decode_item(self, data: memoryview, where: str) -> Any:
        """Decode one window's bytes."""
        return self._deserialize(data)

    def read(self, chunk: ChunkFile, position: int) -> Any:
        """Window ``position`` of ``chunk``, as the serializer decodes it (owning its memory)."""
        start = header_size(chunk.entry.chunk_size) + self._item_bytes * position
        return self._deserialize(chunk.view[start : start + self._item_bytes])


class TokensLoader:
    """1-D token arrays, read back as windows of ``block_size`` tokens (for LLM pre-training).

    Args:
        block_size: Tokens per item when reading; not needed when writing.
    """

    name: ClassVar[str] = "TokensLoader"
    sample_items: ClassVar[bool] = False

    def __init__(self, block_size: int | None = None) -> None:
        if block_size is not None and (
            not isinstance(block_size, int) or isinstance(block_size, bool) or block_size <= 0
        ):
            raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
        self.block_size = block_size

    def encoder(self, serializers: SerializerChoice) -> TokensEncoder:
        """A token encoder."""
        return TokensEncoder(serializers)

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> TokensDecoder:
        """A window decoder for ``index``.

        Raises:
            ValueError: ``block_size`` was not given.
        """
        if self.block_size is None:
            raise DatasetFormatError(
                f"{options.where} was written with TokensLoader, and reading it needs the "
                f"window size: open it with item_loader=TokensLoader(block_size=...)."
            )
        return TokensDecoder(index, self.block_size, options)

    def state_dict(self) -> dict[str, Any]:
        """The window size."""
        return {"block_size": self.block_size}

    def __repr__(self) -> str:
        return f"TokensLoader(block_size={self.block_size})"
