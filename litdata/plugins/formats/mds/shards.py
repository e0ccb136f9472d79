"""``MDSDecoder``: reads the samples of MosaicML MDS shards (once they are local files).

An MDS shard has nearly the chunk layout litdata already reads: ``[u32 N]``, ``N + 1`` u32
offsets, the shard's JSON config, then the samples (the offsets are absolute, so the config is
simply skipped). An uncompressed shard is memory-mapped in place like a native chunk. A
compressed one (``zstd``, ``gz``, ``bz2``, ``snappy``, ``br``: whichever codec is installed) is
decompressed into memory when opened, never past the raw size index.json records (a
decompression bomb is refused as it passes it); the stored file is never modified. A sample
is: one ``u32`` length per variable-size column, then every column's bytes in column order.
"""

from __future__ import annotations

import bz2
import gzip
import io
import struct
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from litdata.core.chunks.layout import read_offsets_in_range, validate_header
from litdata.core.dataset_file import read_regular
from litdata.core.decompression import STEP, fill, gather, too_large
from litdata.core.errors import (
    ChunkCorruptError,
    ChunkMissingError,
    DatasetFormatError,
    LitdataError,
    SampleDecodeError,
)
from litdata.core.formats import ReadOptions
from litdata.core.index import ChunkEntry, DatasetIndex
from litdata.engine.native.chunk_file import ChunkFile
from litdata.plugins.compression.zstd import decompress_zstd
from litdata.plugins.formats.mds.columns import ColumnDecoder, column_decoder

__all__ = ["MDSDecoder", "RangedMDSDecoder", "ShardFile", "decompressor"]

#: MDS codec name -> (module, what to install).
_CODECS: dict[str, tuple[str, str]] = {
    "gz": ("gzip", ""),
    "bz2": ("bz2", ""),
    "zstd": ("zstandard", "zstandard"),
    "snappy": ("snappy", "python-snappy"),
    "br": ("brotli", "brotli"),
}

#: The payload bits of a byte of a varint (snappy's length header); a higher value goes on.
_VARINT_BITS = 0x7F

#: ``(shard bytes, its raw size from index.json) -> plain bytes``, never more than that size.
Decompress = Callable[[bytes, int], "bytes | bytearray"]


def _gz(data: bytes, max_size: int) -> bytearray:
    reader = gzip.GzipFile(fileobj=io.BytesIO(data))
    return fill(reader.readinto, max_size, codec="gzip", compressed=len(data))


def _bz2(data: bytes, max_size: int) -> bytearray:
    reader = bz2.BZ2File(io.BytesIO(data))
    return fill(reader.readinto, max_size, codec="bz2", compressed=len(data))


def _snappy(data: bytes, max_size: int) -> bytes:
    """Snappy's raw format starts with its plain length (a varint): checked before decoding."""
    import snappy  # type: ignore[import-untyped]

    declared = 0
    for shift, byte in zip(range(0, 35, 7), data[:5], strict=False):
        declared |= (byte & _VARINT_BITS) << shift
        if byte <= _VARINT_BITS:  # no continuation bit: the last byte
            break
    else:
        raise ValueError("the snappy data does not start with a valid length")
    if declared > max_size:
        raise too_large("snappy", max_size, declared)
    plain: bytes = snappy.decompress(data)
    return plain


def _brotli_pieces(data: bytes) -> Iterator[bytes]:
    import brotli  # type: ignore[import-untyped]

    decompressor = brotli.Decompressor()
    yield decompressor.process(data, output_buffer_limit=STEP)
    while not decompressor.can_accept_more_data():  # more output is waiting
        yield decompressor.process(b"", output_buffer_limit=STEP)
    if not decompressor.is_finished():
        raise ValueError("the brotli stream is truncated")


def _brotli(data: bytes, max_size: int) -> bytearray:
    return gather(_brotli_pieces(data), max_size, codec="brotli")


_DECOMPRESS: dict[str, Decompress] = {
    "gz": _gz,
    "bz2": _bz2,
    "zstd": decompress_zstd,
    "snappy": _snappy,
    "br": _brotli,
}


def decompressor(compression: str, where: str) -> Decompress:
    """The bounded decompression of shards written with ``compression`` (``"zstd:7"``...).

    Raises:
        DatasetFormatError: Mosaic has no such codec, or the module it needs is missing (or,
            for brotli, too old to bound its output).
    """
    name = compression.partition(":")[0]
    codec = _CODECS.get(name)
    if codec is None:
        raise DatasetFormatError(
            f"{where} is compressed with {compression!r}, which is not an MDS codec litdata "
            f"reads ({', '.join(sorted(_CODECS))})."
        )
    module, package = codec
    try:
        loaded = __import__(module)
    except ImportError:
        raise DatasetFormatError(
            f"{where} is compressed with {name!r}; `pip install {package}` to read it."
        ) from None
    if name == "br" and not hasattr(loaded.Decompressor, "can_accept_more_data"):
        raise DatasetFormatError(
            f"{where} is compressed with 'br', and brotli {loaded.__version__} cannot bound "
            f"what it decompresses; `pip install 'brotli>=1.2'` to read it safely."
        )
    return _DECOMPRESS[name]


class ShardFile(ChunkFile):
    """One MDS shard (mapped, or in memory once decompressed), its header checked.

    Args:
        path: The local shard file.
        entry: Its chunk entry.
        data: The shard's plain bytes when they live only in memory (decompressed).

    Raises:
        ChunkCorruptError: The shard is truncated, or its header disagrees with the index.
    """

    __slots__ = ()

    def __init__(self, path: str, entry: ChunkEntry, data: bytes | bytearray | None = None) -> None:
        self.path = Path(path)
        self.entry = entry
        self._map = None
        self.view = memoryview(data) if data is not None else self._mapped()
        size = len(self.view)
        validate_header(
            self.view, num_items=entry.chunk_size, file_size=size, name=str(path), exact=False
        )


class MDSDecoder:
    """Decodes the samples of an MDS dataset into ``{column: value}`` dicts.

    Args:
        index: The dataset's index, as ``MDSFormat.read_index`` builds it.
        options: The reader's options (its ``pickle`` serializer decodes ``pkl`` columns).
    """

    def __init__(self, index: DatasetIndex, options: ReadOptions) -> None:
        extra = index.config.extra
        where = options.where
        if options.item_loader is not None:
            raise DatasetFormatError(
                f"{where} is a MosaicML MDS dataset: it is read without an item_loader "
                f"(got {options.item_loader!r})."
            )
        self._names: tuple[str, ...] = tuple(extra["column_names"])
        sizes: Sequence[int | None] = extra["column_sizes"]
        self._sizes: tuple[int | None, ...] = tuple(sizes)
        self._variable = sum(size is None for size in self._sizes)
        # The reader's pickle serializer: the restricted unpickler unless allow_pickle=True.
        unpickle = options.serializers.for_format("pickle").deserialize
        self._columns: tuple[ColumnDecoder, ...] = tuple(
            column_decoder(encoding, name, where, unpickle)
            for encoding, name in zip(index.config.data_format, self._names, strict=True)
        )
        self._where = where

    def items_in_chunk(self, entry: ChunkEntry) -> int:
        """The shard's sample count."""
        return entry.chunk_size

    def open(self, path: str, entry: ChunkEntry) -> ShardFile:
        """Map an uncompressed shard, or decompress a compressed one into memory.

        Raises:
            FileNotFoundError: The shard is missing.
            ChunkCorruptError: It is truncated or does not decompress (the cache has
                checked its hashes).
        """
        compression = entry.extra.get("compression")
        if not compression:
            return ShardFile(path, entry)
        try:
            stored = read_regular(path)
        except FileNotFoundError:
            raise ChunkMissingError(f"Shard {path} listed in index.json is missing.") from None
        expected = entry.extra.get("raw_bytes")
        if not isinstance(expected, int) or expected < 0:
            raise ChunkCorruptError(
                f"Shard {path}: index.json records no valid raw_data size for it "
                f"({expected!r}), so it cannot be decompressed within a bound. Re-create the "
                f"dataset with MDSWriter."
            )
        try:
            plain = decompressor(compression, path)(stored, expected)
        except DatasetFormatError:
            raise
        except Exception as error:
            raise ChunkCorruptError(
                f"Shard {path} does not decompress with {compression!r} within the "
                f"{expected:,} bytes index.json records ({error}); it is truncated, corrupt or "
                f"a decompression bomb. Re-download or re-create the dataset."
            ) from None
        if len(plain) != expected:
            raise ChunkCorruptError(
                f"Shard {path} decompresses to {len(plain):,} bytes, but index.json records "
                f"{expected:,}. Re-download or re-create the dataset."
            )
        return ShardFile(path, entry, plain)

    def read(self, chunk: ChunkFile, position: int) -> dict[str, Any]:
        """The sample at ``position`` of a shard ``open`` returned.

        Raises:
            ChunkCorruptError: The sample's bytes are inconsistent.
            SampleDecodeError: A column's value does not decode; the message names the shard,
                the sample and the column.
        """
        return self._decode(chunk.item(position), f"Shard {chunk.path}, sample {position}")

    def _decode(self, data: memoryview, where: str) -> dict[str, Any]:
        prefix = 4 * self._variable
        if len(data) < prefix:
            raise ChunkCorruptError(f"{where}: {len(data)} bytes cannot hold its column sizes.")
        given = iter(struct.unpack_from(f"<{self._variable}I", data))
        sizes = [next(given) if size is None else size for size in self._sizes]
        if prefix + sum(sizes) != len(data):
            raise ChunkCorruptError(
                f"{where}: its columns take {prefix + sum(sizes)} bytes, but it has "
                f"{len(data)}. The shard is corrupt."
            )
        sample: dict[str, Any] = {}
        start = prefix
        for name, size, decode in zip(self._names, sizes, self._columns, strict=True):
            try:
                sample[name] = decode(data[start : start + size])
            except LitdataError:  # already says what to do (an unsafe pickle)
                raise
            except Exception as error:
                raise SampleDecodeError(
                    f"{where}: column {name!r} does not decode: {type(error).__name__}: {error}"
                ) from error
            start += size
        return sample


class RangedMDSDecoder(MDSDecoder):
    """An ``MDSDecoder`` for uncompressed shards: single samples are read by byte ranges."""

    def item_span(
        self, entry: ChunkEntry, position: int, header: Callable[[int, int], bytes]
    ) -> tuple[int, int]:
        """Where sample ``position`` lies in the shard, from its offsets.

        Raises:
            ChunkCorruptError: The offsets fall outside the shard.
        """
        return read_offsets_in_range(
            header,
            position,
            num_items=entry.chunk_size,
            file_size=entry.chunk_bytes,
            where=f"Shard {entry.filename}, sample {position}",
        )

    def decode_item(self, data: memoryview, where: str) -> dict[str, Any]:
        """Decode one sample's bytes."""
        return self._decode(data, where)
