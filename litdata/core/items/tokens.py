"""The token-stream item encoding (LitData's ``TokensLoader``).

On write, each sample is one 1-D array of tokens, stored raw (no size header); a chunk closes
by token count. On read, a chunk of ``dim`` tokens holds ``dim // block_size`` items, each
``block_size`` consecutive tokens (leftover tokens at a chunk's end are dropped).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from litdata.core.chunks.file import ChunkFile
from litdata.core.chunks.layout import header_size
from litdata.core.errors import DatasetFormatError, SampleError
from litdata.core.index import ChunkEntry, DatasetIndex
from litdata.core.items.dtypes import dtype_of_format
from litdata.core.items.serializer_set import SerializerSet

__all__ = ["TokensDecoder", "TokensEncoder"]

_TOKEN_FORMATS = ("no_header_tensor", "no_header_numpy")


def _tokens_leaf(sample: Any) -> Any:
    wrapped = getattr(sample, "array", None)  # a media wrapper holding an array
    return wrapped if wrapped is not None and not isinstance(sample, np.ndarray) else sample


class TokensEncoder:
    """Encodes 1-D token arrays (numpy arrays or torch tensors) of one dtype.

    Args:
        serializers: Where to find the ``no_header_*`` serializers.
    """

    def __init__(self, serializers: SerializerSet) -> None:
        self._serializers = serializers
        self._format: str | None = None
        self._serialize: Any = None
        self.providers: dict[str, str] = {}

    @property
    def data_format(self) -> tuple[str, ...]:
        """One name: ``no_header_tensor:<dtype>`` or ``no_header_numpy:<dtype>``."""
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
            found = self._serializers.infer(leaf)
            if found is None or found[0] not in _TOKEN_FORMATS:
                raise SampleError(f"No token serializer accepts a {leaf.dtype} array.")
            self._serialize = found[1].serialize
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
        index: The dataset's index (one ``no_header_*`` format, ``dim`` on every chunk).
        block_size: Tokens per item.
    """

    def __init__(self, index: DatasetIndex, block_size: int) -> None:
        formats = index.config.data_format
        if len(formats) != 1 or not formats[0].startswith(_TOKEN_FORMATS):
            raise DatasetFormatError(
                f"TokensLoader reads datasets of 1-D token arrays, but this one stores "
                f"{list(formats)}. Open it without item_loader, or with the one that wrote it."
            )
        if any(chunk.dim is None for chunk in index.chunks):
            raise DatasetFormatError(
                "TokensLoader needs the token count ('dim') of every chunk, but index.json "
                "lacks it: the dataset was not written with item_loader=TokensLoader()."
            )
        self._dtype: Any = dtype_of_format(formats[0])
        self._torch = formats[0].startswith("no_header_tensor")
        self.block_size = block_size
        self._item_bytes = self._dtype.itemsize * block_size

    def items_in_chunk(self, entry: ChunkEntry) -> int:
        """Whole windows in a chunk: ``dim // block_size``."""
        return (entry.dim or 0) // self.block_size

    def read(self, chunk: ChunkFile, position: int) -> Any:
        """Window ``position`` of ``chunk``, as a tensor or an array that owns its memory."""
        start = header_size(chunk.entry.chunk_size) + self._item_bytes * position
        raw = chunk.view[start : start + self._item_bytes]
        if self._torch:
            import torch

            return torch.frombuffer(bytearray(raw), dtype=self._dtype)
        return np.frombuffer(raw, dtype=self._dtype).copy()
