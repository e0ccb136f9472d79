"""``litdata verify PATH``: check every chunk of a local dataset (size, header, checksum)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from tqdm import tqdm

from litdata.core.chunks.checksum import verify_checksum
from litdata.core.chunks.codecs import create_compressor
from litdata.core.chunks.framing import unframe
from litdata.core.chunks.layout import validate_header
from litdata.core.errors import LitdataError
from litdata.core.index import ChunkEntry, DatasetIndex
from litdata.core.source import open_local_dataset

__all__ = ["add_parser", "run", "verify_chunk"]


def add_parser(commands: Any) -> None:
    """Register the ``verify`` command."""
    parser = commands.add_parser("verify", help="check a dataset's chunks against its index")
    parser.add_argument("path", help="the dataset directory")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)


def verify_chunk(root: Path, index: DatasetIndex, entry: ChunkEntry) -> None:
    """Check one chunk file: it exists, matches its checksum and has a consistent header.

    Raises:
        FileNotFoundError: The chunk file is missing.
        ChunkCorruptError: The chunk is truncated, corrupt or inconsistent with the index.
    """
    path = root / entry.filename
    data = path.read_bytes()
    verify_checksum(data, entry, str(path))
    compression = index.config.compression
    if compression:
        level = index.config.extra.get("compression_level")
        data = unframe(
            data,
            entry,
            level,
            create_compressor(compression, index.plugins.get("compression")).decompress,
            str(path),
        )
    validate_header(data, num_items=entry.chunk_size, file_size=len(data), name=str(path))


def _problem(root: Path, index: DatasetIndex, entry: ChunkEntry) -> str | None:
    try:
        verify_chunk(root, index, entry)
    except (LitdataError, OSError) as error:
        return f"{entry.filename}: {error}"
    return None


def run(args: argparse.Namespace) -> int:
    """Verify every chunk; print the problems; exit with 1 if there are any."""
    try:
        root, index = open_local_dataset(os.path.abspath(args.path))
    except (LitdataError, OSError) as error:
        print(f"error: {error}")
        return 1
    chunks = tqdm(index.chunks, desc="verifying", unit="chunk", disable=args.quiet)
    problems = [problem for entry in chunks if (problem := _problem(root, index, entry))]
    for problem in problems:
        print(f"error: {problem}")
    checked = (
        "with checksums"
        if any(chunk.checksum for chunk in index.chunks)
        else ("no checksums recorded (written by LitData); headers checked")
    )
    print(
        f"{root}: {len(index.chunks)} chunks, {index.num_items} items, {len(problems)} "
        f"problem(s) ({checked})."
    )
    return 1 if problems else 0
