"""``litdata verify PATH_OR_URL``: check every chunk of a dataset (presence, size, checksum...).

The dataset is opened as a reader opens it. A format that can check a chunk's bytes
(``ChunkChecker``: litdata's own chunks) is asked to; then every item of every chunk, whatever
its format (Parquet, MDS, WebDataset...), is decoded with the format's own decoder, as a reader
would (except an encrypted dataset's: verify has no key).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from tqdm import tqdm

from litdata.cli.storage_flags import add_storage_flags, in_cli_terms, storage_options
from litdata.core.chunks.checksum import verify_checksum
from litdata.core.chunks.framing import unframe
from litdata.core.errors import ChunkCorruptError, LitdataError, UnsafeDataError
from litdata.core.formats import ChunkChecker, ItemDecoder, ReadOptions
from litdata.core.index import ChunkEntry
from litdata.core.protocols import Compressor
from litdata.core.units import counted
from litdata.engine.boundary.options import resolve_plugin
from litdata.engine.boundary.resolve import resolve
from litdata.engine.cache.chunk_cache import ChunkCache
from litdata.engine.items.serializer_set import SerializerSet
from litdata.engine.opening import Dataset, open_dataset
from litdata.engine.reader import DatasetReader

__all__ = ["add_parser", "check_chunk", "run"]


def add_parser(commands: Any) -> None:
    """Register the ``verify`` command."""
    parser = commands.add_parser("verify", help="check a dataset's chunks against its index")
    parser.add_argument("path", help="the dataset directory or URL")
    add_storage_flags(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)


def check_chunk(
    cache: ChunkCache, dataset: Dataset, entry: ChunkEntry, scratch: Path, decoder: ItemDecoder
) -> str:
    """Check one chunk as stored, and decode its items as a reader would.

    Returns:
        What is wrong with it, or ``""``.
    """
    index = dataset.index
    try:
        data, where = cache.stored(entry, scratch)
    except FileNotFoundError:
        return (
            f"missing: listed in index.json but not found at {cache.location.join(entry.filename)}"
        )
    except LitdataError as error:  # not a regular file: a FIFO, a directory...
        return str(error)
    config = index.config
    if not config.compression and len(data) != entry.chunk_bytes:
        recorded = entry.chunk_bytes
        what = "truncated" if len(data) < recorded else "too long"
        return f"{what}: {len(data):,} bytes, but index.json records {recorded:,}"
    compressor = (
        resolve_plugin(
            "compression", config.compression, providers=index.plugins.get("compression")
        )
        if config.compression
        else None
    )
    level = config.extra.get("compression_level")
    try:
        verify_checksum(data, entry, where)
    except LitdataError as error:
        return _damage(data, entry, compressor, level, where) or str(error)
    try:
        plain = (
            data
            if compressor is None
            else unframe(bytes(data), entry, level, compressor.decompress, where)
        )
        if isinstance(dataset.format, ChunkChecker):
            dataset.format.check_chunk(memoryview(plain), entry, index, where)
    except LitdataError as error:
        return str(error)
    if config.encryption:
        return ""  # its items cannot be decoded without the key
    local = cache.location.local_path
    if local is not None and plain is data:
        return _decode_every_item(decoder, os.path.join(local, entry.filename), entry)
    scratch.write_bytes(plain)
    problem = _decode_every_item(decoder, str(scratch), entry)
    return problem.replace(str(scratch), where)


def _decoder(dataset: Dataset) -> ItemDecoder:
    """The format's own decoder (pickled objects stay refused: a check runs no dataset code)."""
    providers = dataset.index.plugins.get("serializers", {})
    serializers = SerializerSet(allow_pickle=False, providers=providers)
    options = ReadOptions(serializers, where=dataset.location.url)
    return dataset.format.decoder(dataset.index, options)


def _decode_every_item(decoder: ItemDecoder, path: str, entry: ChunkEntry) -> str:
    """Decode each item of the chunk file at ``path``; what failed, or ``""``."""
    position = -1
    try:
        handle = decoder.open(path, entry)
        try:
            for position in range(decoder.items_in_chunk(entry)):
                decoder.read(handle, position)
        finally:
            handle.close()
    except UnsafeDataError:
        return ""  # a pickled object: decoding it would run the dataset's code
    except Exception as error:  # a damaged item may fail any way its decoder does
        what = "it cannot be opened" if position < 0 else f"item {position} does not decode"
        why = str(error) if isinstance(error, LitdataError) else f"{type(error).__name__}: {error}"
        return f"{what}: {why}"
    return ""


def _damage(
    data: bytes, entry: ChunkEntry, compressor: Compressor | None, level: str | None, where: str
) -> str:
    """Why a compressed chunk fails its checksum, when its bytes say: cut short, or garbled."""
    if compressor is None:
        return ""
    try:
        unframe(bytes(data), entry, level, compressor.decompress, where)
    except ChunkCorruptError as error:
        return f"truncated or damaged: {error} Re-copy or re-create it."
    return ""


def run(args: argparse.Namespace) -> int:
    """Verify every chunk; print the problems; exit with 1 if there are any.

    The dataset is opened as a reader opens it (its index, sample structure, serializers and
    item counts checked); one that a reader refuses is reported, and no chunk is checked.
    """
    try:
        location = resolve(args.path, storage_options=storage_options(args))
        dataset = open_dataset(location)
        decoder = _decoder(dataset)
        if dataset.index.chunks:
            DatasetReader(location, dataset=dataset).close()  # the reader's own checks
    except (LitdataError, OSError, ValueError) as error:
        print(f"error: {in_cli_terms(str(error))}")
        return 1
    index = dataset.index
    cache = ChunkCache(dataset.location, index)
    chunks = tqdm(index.chunks, desc="verifying", unit="chunk", disable=args.quiet)
    problems = []
    with tempfile.TemporaryDirectory(prefix="litdata-verify-") as scratch:
        for entry in chunks:
            problem = check_chunk(cache, dataset, entry, Path(scratch, "chunk"), decoder)
            if problem:
                problems.append(f"{entry.filename}: {problem}")
    for problem in problems:
        print(f"error: {problem}")
    checked = _what_was_checked(dataset)
    print(
        f"{dataset.location.url}: {counted(len(index.chunks), 'chunk')}, "
        f"{counted(index.num_items, 'item')}, {counted(len(problems), 'problem')} ({checked})."
    )
    return 1 if problems else 0


def _what_was_checked(dataset: Dataset) -> str:
    if any(chunk.checksum for chunk in dataset.index.chunks):
        return "with checksums"
    if not isinstance(dataset.format, ChunkChecker):
        return "no checksums recorded; every item decoded"
    return "no checksums recorded (written by LitData); sizes, headers and items checked"
