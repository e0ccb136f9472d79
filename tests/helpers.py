"""Small helpers shared by tests."""

from __future__ import annotations

import os
from pathlib import Path


def chunk_files(directory: Path) -> list[str]:
    """The chunk files in a dataset directory, sorted."""
    return sorted(name for name in os.listdir(directory) if name.startswith("chunk-"))


def snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``directory`` with its size and modification time."""
    return {
        str(path.relative_to(directory)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def content_snapshot(directory: Path) -> dict[str, str]:
    """Every file under ``directory`` (hidden ones included) with a hash of its content."""
    import hashlib

    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }
