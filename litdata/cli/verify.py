"""``litdata verify PATH_OR_URL``: check every chunk of a dataset (presence, size, checksum...)."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from tqdm import tqdm

from litdata.core.cache.chunks import ChunkCache
from litdata.core.chunks.checksum import verify_checksum
from litdata.core.chunks.codecs import create_compressor
from litdata.core.chunks.framing import unframe
from litdata.core.chunks.layout import validate_header
from litdata.core.errors import ChunkCorruptError, LitdataError
from litdata.core.index import ChunkEntry, DatasetIndex
from litdata.core.protocols import Compressor
from litdata.core.source import open_dataset

__all__ = ["add_parser", "check_chunk", "run"]


def add_parser(commands: Any) -> None:
    """Register the ``verify`` command."""
    parser = commands.add_parser("verify", help="check a dataset's chunks against its index")
    parser.add_argument("path", help="the dataset directory or URL")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)


def check_chunk(cache: ChunkCache, index: DatasetIndex, entry: ChunkEntry, scratch: Path) -> str:
    """Check one chunk as stored; return what is wrong with it, or ``""``."""
    try:
        data, where = cache.stored(entry, scratch)
    except FileNotFoundError:
        return (
            f"missing: listed in index.json but not found at {cache.location.join(entry.filename)}"
        )
    config = index.config
    if not config.compression and len(data) != entry.chunk_bytes:
        recorded = entry.chunk_bytes
        what = "truncated" if len(data) < recorded else "too long"
        return f"{what}: {len(data):,} bytes, but index.json records {recorded:,}"
    compressor = (
        create_compressor(config.compression, index.plugins.get("compression"))
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
        if not (config.encryption and config.encryption.get("level") == "chunk"):
            view = memoryview(plain)
            validate_header(view, num_items=entry.chunk_size, file_size=len(view), name=where)
    except LitdataError as error:
        return str(error)
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
    """Verify every chunk; print the problems; exit with 1 if there are any."""
    try:
        dataset = open_dataset(args.path)
    except (LitdataError, OSError) as error:
        print(f"error: {error}")
        return 1
    index = dataset.index
    cache = ChunkCache(dataset.location, index)
    chunks = tqdm(index.chunks, desc="verifying", unit="chunk", disable=args.quiet)
    problems = []
    with tempfile.TemporaryDirectory(prefix="litdata-verify-") as scratch:
        for entry in chunks:
            problem = check_chunk(cache, index, entry, Path(scratch, "chunk"))
            if problem:
                problems.append(f"{entry.filename}: {problem}")
    for problem in problems:
        print(f"error: {problem}")
    checked = (
        "with checksums"
        if any(chunk.checksum for chunk in index.chunks)
        else "no checksums recorded (written by LitData); sizes and headers checked"
    )
    print(
        f"{dataset.location.url}: {len(index.chunks)} chunks, {index.num_items} items, "
        f"{len(problems)} problem(s) ({checked})."
    )
    return 1 if problems else 0
