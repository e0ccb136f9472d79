"""Eviction: the chunk cache's copies kept within ``max_cache_size``, least recently used first."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from litdata.core.registry import hooks
from litdata.engine.cache.copies import CheckedCopies
from litdata.engine.cache.locks import ChunkLock

__all__ = ["make_room"]

logger = logging.getLogger(__name__)


def make_room(directory: Path, budget: int, needed: int, mode: int | None) -> None:
    """Evict chunks nobody holds, least recently used first, until ``needed`` bytes fit.

    Downloads in flight (their temporary files, which a parted download sizes in full at
    once) count against the budget too, though they cannot be evicted.

    Args:
        directory: The cache folder of one dataset.
        budget: The bytes its copies may take (``max_cache_size``).
        needed: The bytes of the chunk about to arrive.
        mode: The permissions of the locks taken to evict.
    """
    cached = []
    flight = 0
    for item in os.scandir(directory):
        try:
            if not item.is_file():
                continue
            stat = item.stat()
        except FileNotFoundError:  # another process evicted (or published) it meanwhile
            continue
        if item.name.startswith("."):
            flight += stat.st_size if ".tmp." in item.name else 0
            continue
        cached.append((stat.st_mtime, stat.st_size, item.name))
    total = flight + sum(size for _, size, _ in cached)
    for _, size, name in sorted(cached):
        if total + needed <= budget:
            return
        lock = ChunkLock(directory, name, mode)
        if not lock.acquire("exclusive", timeout=0):
            continue  # a reader holds it
        try:
            path = directory / name
            path.unlink(missing_ok=True)
            CheckedCopies.forget(path)
        finally:
            lock.release()
        total -= size
        hooks.chunk_evicted(str(path), size)
        logger.debug("evicted %s (%d bytes) to stay within the cache budget", path, size)
