"""``ChunkWriter``: samples in, chunk files and a per-writer index out. No threads, no processes."""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from litdata.core.chunks.blocks import BLOCK_KEY, block_checksums
from litdata.core.chunks.checksum import Buffer, checksum_of
from litdata.core.chunks.layout import chunk_header, header_size
from litdata.core.chunks.names import chunk_filename, parse_chunk_filename
from litdata.core.errors import (
    DatasetExistsError,
    DatasetFormatError,
    LitdataWarning,
)
from litdata.core.formats import ItemLoader
from litdata.core.index import (
    INDEX_FILENAME,
    ChunkEntry,
    DatasetConfig,
    DatasetIndex,
    write_index,
)
from litdata.core.location import Location
from litdata.core.protocols import Encryptor, Serializer
from litdata.core.publish import publish_bytes, publish_parts
from litdata.core.registry import hooks, kinds
from litdata.core.units import parse_size
from litdata.engine.boundary.options import provider_of, resolve_plugin
from litdata.engine.boundary.resolve import resolve
from litdata.engine.items.loaders import default_item_loader
from litdata.engine.items.serializer_set import SerializerSet
from litdata.engine.items.widening import agreed_config
from litdata.engine.native.encrypted import encryption_config
from litdata.engine.native.keys import KeyRecorder, check_key_fn, keys_filename
from litdata.engine.native.rank_indexes import rank_index_filename, rank_index_names
from litdata.engine.upload import Uploader

__all__ = ["ChunkWriter", "check_chunk_options", "write_samples"]

logger = logging.getLogger(__name__)


def check_chunk_options(
    chunk_size: int | None, chunk_bytes: int | str | None, compression: str | None = None
) -> int | None:
    """Validate a writer's chunk target and codec; return ``chunk_bytes`` in bytes.

    Raises:
        ValueError: Not exactly one target, or a bad value.
        UnknownPluginError: No compressor has that name.
    """
    if compression:
        resolve_plugin("compression", compression)
    if (chunk_size is None) == (chunk_bytes is None):
        raise ValueError(
            "Pass exactly one of chunk_size (items per chunk) or chunk_bytes (bytes per chunk, "
            "e.g. '64MB')."
        )
    if chunk_size is not None and (
        not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size <= 0
    ):
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    return None if chunk_bytes is None else parse_size(chunk_bytes, what="chunk_bytes")


class ChunkWriter:
    """Packs samples into chunk files in ``output_dir`` and lists them in ``<rank>.index.json``.

    Args:
        output_dir: A local directory (created if missing).
        chunk_size: Close a chunk when it holds this many items.
        chunk_bytes: Close a chunk before it would exceed this many bytes (int or ``"64MB"``).
        compression: A compressor spec (``"zstd"``, ``"zstd:7"``, ``"lz4"``) or ``None``.
        serializers: Extra serializers by name, probed before the installed ones.
        item_loader: The item encoding; ``PyTreeLoader()`` by default, ``TokensLoader()`` for
            token streams (``chunk_size`` then counts tokens).
        rank: The writer's rank, used in chunk and index file names.
        chunk_index: The number of this writer's first chunk (to continue a dataset).
        expected: The config of the dataset these chunks extend (append, resume): the first
            sample must produce the same, else ``DatasetFormatError``.
        previous_chunks: Chunks this writer wrote before (a resumed run); listed first.
        encryption: Encrypt each sample or each chunk (by the encryptor's ``level``).
        on_chunk: Called with each chunk file's path and entry once it is written (to upload
            it, for instance).
        key_fn: ``sample -> key`` (an int or a str): the writer records every sample's key in
            ``<rank>.keys.parquet`` for keyed lookup (``ds["id"]``).
        mode: ``None`` refuses to write a chunk file over one of a dataset already in
            ``output_dir`` (it has ``index.json`` or per-writer indexes), as ``optimize``
            refuses an existing dataset; ``"overwrite"`` writes over its files.

    Exactly one of ``chunk_size`` and ``chunk_bytes`` is required.

    Raises:
        DatasetExistsError: ``mode`` is ``None`` and this writer's first chunk file would
            replace a chunk of the dataset in ``output_dir`` (also raised by :meth:`add` for
            a later chunk).
    """

    def __init__(
        self,
        output_dir: str | os.PathLike[str],
        *,
        chunk_size: int | None = None,
        chunk_bytes: int | str | None = None,
        compression: str | None = None,
        serializers: Mapping[str, Serializer] | None = None,
        item_loader: ItemLoader | None = None,
        rank: int = 0,
        chunk_index: int = 0,
        expected: DatasetConfig | None = None,
        previous_chunks: Sequence[ChunkEntry] = (),
        encryption: Encryptor | None = None,
        on_chunk: Callable[[Path, ChunkEntry], None] | None = None,
        key_fn: Callable[[Any], Any] | None = None,
        mode: str | None = None,
    ) -> None:
        if mode not in (None, "overwrite"):
            raise ValueError(f"mode must be None or 'overwrite', got {mode!r}")
        self._chunk_bytes = check_chunk_options(chunk_size, chunk_bytes)
        self._keys = KeyRecorder(key_fn) if key_fn is not None else None
        self._encryption = resolve_plugin("encryption", encryption) if encryption else None
        self._encryption_config = encryption_config(encryption) if encryption else None
        self._on_chunk = on_chunk
        self._expected = expected
        self._chunk_size = chunk_size
        self._compression = compression
        self._compressor = resolve_plugin("compression", compression) if compression else None
        self._loader = item_loader or default_item_loader()
        check_key_fn(key_fn, self._loader)
        per_sample = encryption is not None and encryption.level == "sample"
        if per_sample and not self._loader.sample_items:
            raise ValueError(
                f"{self._loader.name} cuts items across samples, so its datasets are encrypted "
                f"per chunk: use level='chunk'."
            )
        self._item_encrypt = self._encryption.encrypt if self._encryption and per_sample else None
        self._encoder = self._loader.encoder(SerializerSet(serializers))
        self.output_dir = Path(output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self.rank = rank
        self._next_chunk = chunk_index
        self._parts: list[bytes] = []
        self._sizes: list[int] = []
        self._chunk_began = time.perf_counter()
        self._item_bytes = 0
        self._dim: int | None = None
        self.chunks: list[ChunkEntry] = list(previous_chunks)
        self.num_samples = 0
        self._guarded = mode is None and _holds_a_dataset(self.output_dir)
        self._refuse_overwrite(chunk_filename(rank, chunk_index, compression))

    @property
    def config(self) -> DatasetConfig:
        """The dataset config this writer records (with what it extends, once they agree)."""
        own = self._own_config()
        if self._expected is not None and self.num_samples:
            return agreed_config(self._expected, own) or own
        return own

    def _own_config(self) -> DatasetConfig:
        annotate = getattr(self._encoder, "config_extra", None)  # item loaders' own keys
        return DatasetConfig(
            chunk_bytes=self._chunk_bytes,
            chunk_size=self._chunk_size,
            compression=self._compression,
            data_format=self._encoder.data_format,
            data_spec=self._encoder.data_spec,
            encryption=self._encryption_config,
            item_loader=self._loader.name,
            extra=annotate() if annotate is not None else {},
        )

    def add(self, sample: Any) -> None:
        """Encode ``sample`` and append it, writing a chunk file when one is full.

        Raises:
            SampleError: The sample cannot be encoded (see ``PyTreeEncoder.encode``).
        """
        parts, size, dim = self._encoder.encode(sample)
        if self._item_encrypt is not None:
            parts = [self._item_encrypt(b"".join(parts))]
            size = len(parts[0])
        if self.num_samples == 0 and self._expected is not None:
            self._check_config(self._expected)
        count = len(self._sizes)
        if count and (
            header_size(count + 1) + self._item_bytes + size > self._chunk_bytes
            if self._chunk_bytes
            else dim is not None and (self._dim or 0) + dim > self._chunk_size  # type: ignore[operator]
        ):
            self._flush()
            count = 0
        if not self._sizes:
            self._chunk_began = time.perf_counter()
        self._parts.extend(parts)
        self._sizes.append(size)
        self._item_bytes += size
        if dim is not None:
            self._dim = (self._dim or 0) + dim
        self.num_samples += 1
        if self._keys is not None:
            self._keys.record(sample)
        if self._chunk_size is not None and (self._dim or len(self._sizes)) >= self._chunk_size:
            self._flush()
        elif (
            self._chunk_bytes is not None
            and count == 0
            and header_size(1) + size > self._chunk_bytes
        ):
            warnings.warn(
                f"An item was larger than the target chunk size: sample "
                f"{self.num_samples - 1} takes {size} bytes, more than "
                f"chunk_bytes={self._chunk_bytes}; it is written alone in its chunk. Raise "
                f"chunk_bytes if this happens often.",
                LitdataWarning,
                stacklevel=2,
            )
            self._flush()

    def _flush(self) -> None:
        if not self._sizes:
            return
        header = chunk_header(self._sizes)
        parts = [header, *self._parts]
        size = len(header) + self._item_bytes
        filename = chunk_filename(self.rank, self._next_chunk, self._compression)
        self._refuse_overwrite(filename)
        path = self.output_dir / filename
        if self._encryption is not None and self._encryption.level == "chunk":
            parts = [self._encryption.encrypt(b"".join(parts))]
            size = len(parts[0])
        annotate = getattr(self._encoder, "chunk_extra", None)  # item loaders' own keys
        extra = annotate(self._sizes) if annotate is not None else {}
        if self._compressor is None:
            ranged = self._encryption is None or self._encryption.level != "chunk"
            checksum, blocks = publish_parts(path, parts, size, _digests if ranged else _digest)
            if blocks is not None:  # items read in byte ranges are verified block by block
                extra[BLOCK_KEY] = blocks
        else:
            data = self._compressor.compress(b"".join(parts))
            publish_bytes(path, data)
            checksum = checksum_of(data)
        entry = ChunkEntry(
            filename=filename,
            chunk_size=len(self._sizes),
            chunk_bytes=size,
            dim=self._dim,
            checksum=checksum,
            extra=extra,
        )
        self.chunks.append(entry)
        self._next_chunk += 1
        self._parts = []
        self._sizes = []
        self._item_bytes = 0
        self._dim = None
        hooks.chunk_written(str(path), entry.to_json(), time.perf_counter() - self._chunk_began)
        if self._on_chunk is not None:
            self._on_chunk(path, entry)

    def _refuse_overwrite(self, filename: str) -> None:
        """Raise if writing ``filename`` would replace a chunk of the dataset in the folder."""
        if not self._guarded or not (self.output_dir / filename).exists():
            return
        taken = [
            parsed[1]
            for name in os.listdir(self.output_dir)
            if (parsed := parse_chunk_filename(name)) and parsed[0] == self.rank
        ]
        raise DatasetExistsError(
            f"{self.output_dir} holds a dataset whose chunk {filename} this writer would "
            f"replace, which would corrupt it. Pass mode='overwrite' to write over its files "
            f"(then merge_rank_indexes publishes the new index), chunk_index={max(taken) + 1} "
            f"to add chunks after rank {self.rank}'s, or write to another folder."
        )

    @property
    def buffered(self) -> int:
        """Samples added but not yet written in a chunk."""
        return len(self._sizes)

    @property
    def closing_files(self) -> list[str]:
        """The files :meth:`close` writes: ``<rank>.index.json`` (and ``<rank>.keys.parquet``)."""
        names = [rank_index_filename(self.rank)]
        if self._keys is not None:
            names.append(keys_filename(self.rank))
        return names

    def _check_config(self, expected: DatasetConfig) -> None:
        own = self._own_config()
        if agreed_config(expected, own) is None:
            different = own.differences(expected)
            ours, theirs = own.core(), expected.core()
            details = ", ".join(
                f"{key}: {ours[key]!r} here vs {theirs[key]!r} in the dataset" for key in different
            )
            raise DatasetFormatError(
                f"The config isn't consistent between chunks: these samples cannot extend the "
                f"dataset in {self.output_dir}: {details}. "
                f"Use the same chunk settings, compression and sample structure, or write a "
                f"new dataset (mode='overwrite')."
            )

    def close(self) -> DatasetIndex | None:
        """Write the last chunk and ``<rank>.index.json``; return this writer's index.

        Returns ``None`` (and writes no index) when the writer received no sample.
        """
        self._flush()
        if not self.chunks:
            return None
        config = self.config if self.num_samples or self._expected is None else self._expected
        plugins: dict[str, dict[str, str]] = {}
        if self._encoder.providers:
            plugins["serializers"] = dict(self._encoder.providers)
        if self._compression and (codec := provider_of("compression", self._compression)):
            plugins["compression"] = {self._compression.partition(":")[0]: codec}
        cipher = self._encryption.name if self._encryption is not None else ""
        for kind, name in (("encryption", cipher), ("item_loaders", self._loader.name)):
            registry = kinds.ALL[kind]
            if name in registry and (provider := registry.provider(name)):
                plugins[kind] = {name: provider}
        index = DatasetIndex(config=config, chunks=tuple(self.chunks), plugins=plugins)
        write_index(self.output_dir / rank_index_filename(self.rank), index)
        if self._keys is not None:
            self._keys.write(self.output_dir / keys_filename(self.rank))
        return index


def _holds_a_dataset(folder: Path) -> bool:
    """Whether ``folder`` has a dataset's index (``index.json`` or per-writer indexes)."""
    names = os.listdir(folder)
    return INDEX_FILENAME in names or bool(rank_index_names(names))


def _digests(data: Buffer) -> tuple[str, str | None]:
    """A chunk file's checksum and block checksums."""
    return checksum_of(data), block_checksums(data)


def _digest(data: Buffer) -> tuple[str, str | None]:
    """A chunk file's checksum (no block table: it is never read in ranges)."""
    return checksum_of(data), None


def write_samples(
    samples: Iterable[Any],
    make: Callable[..., ChunkWriter],
    write_dir: str | os.PathLike[str] | None,
    upload_to: Location | None,
) -> None:
    """Write ``samples`` with one writer: its chunks and its per-writer index, not ``index.json``.

    Args:
        samples: The samples, in order.
        make: Builds the writer: ``make(folder)``, or ``make(folder, on_chunk=...)``.
        write_dir: The local folder to write into; ``None`` with ``upload_to``.
        upload_to: A remote location: the files are written into a temporary folder and
            uploaded as they are written, the per-writer index last.

    On failure, the files written (and uploaded) are removed.

    Raises:
        ValueError: No sample was given.
    """
    if upload_to is None:
        folder = Path(write_dir or ".")
        _write_all(samples, make(folder), resolve(folder))
        return
    with tempfile.TemporaryDirectory(prefix="litdata-write-") as staging:
        uploader = Uploader(upload_to)
        writer = make(staging, on_chunk=lambda path, _: uploader.upload(path))
        try:
            _write_all(samples, writer, upload_to)
            for name in writer.closing_files:
                uploader.upload(Path(staging, name), last=True)
            uploader.wait()
        except BaseException:
            with contextlib.suppress(Exception):
                uploader.wait()
            _remove_written(writer, upload_to)
            raise


def _write_all(samples: Iterable[Any], writer: ChunkWriter, location: Location) -> None:
    """Add every sample and close the writer; on failure remove what it wrote."""
    try:
        for sample in samples:
            writer.add(sample)
        if writer.close() is None:
            raise ValueError(f"No samples were given, so no dataset was written to {location}.")
    except BaseException:
        _remove_written(writer, resolve(writer.output_dir))
        raise


def _remove_written(writer: ChunkWriter, location: Location) -> None:
    """Remove what a failed write left, best-effort: the write's own error is what matters.

    A storage that fails a removal (the server that failed the write, most likely) is not
    asked again; what is left is logged.
    """
    names = [chunk.filename for chunk in writer.chunks] + writer.closing_files
    for position, name in enumerate(names):
        try:
            location.storage.delete(location.join(name))
        except OSError as error:  # noqa: PERF203  # StorageError included; a few files
            logger.warning(
                "could not remove %s after the failed write (%s); left behind: %s",
                location.join(name),
                error,
                ", ".join(names[position:]),
            )
            return
