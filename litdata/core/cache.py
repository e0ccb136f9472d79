"""The local chunk cache: where chunks that cannot be read in place become local files.

A local, uncompressed chunk is read where it lies (never copied, never modified). A compressed
one is checked against its checksum and decompressed into the cache, published atomically
(temp file + rename), so concurrent readers never see half a file. The cache directory of a
dataset is ``<cache root>/<md5 of its location>/<version>``; other versions are purged.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import time
from pathlib import Path

from litdata.core import config
from litdata.core.chunks.checksum import verify_checksum
from litdata.core.chunks.codecs import create_compressor, decompressed_filename
from litdata.core.chunks.framing import unframe
from litdata.core.index import ChunkEntry, DatasetIndex, atomic_write_bytes
from litdata.core.protocols import Compressor
from litdata.core.registry import hooks

__all__ = ["ChunkCache", "dataset_cache_dir"]

logger = logging.getLogger(__name__)


def dataset_cache_dir(location: str, index: DatasetIndex, cache_dir: str | None = None) -> Path:
    """The cache directory of the dataset at ``location`` (a path or URL), created if needed.

    Args:
        location: Where the dataset lives.
        index: Its index (its ``updated_at`` names the version directory).
        cache_dir: The cache root; defaults to ``LITDATA_CACHE_DIR`` or ``~/.lightning/chunks``.
    """
    root = Path(cache_dir) if cache_dir else config.cache_root()
    home = root / hashlib.md5(location.encode(), usedforsecurity=False).hexdigest()
    version = index.updated_at or hashlib.md5(location.encode(), usedforsecurity=False).hexdigest()
    target = home / version
    if home.is_dir():
        for stale in home.iterdir():
            if stale.name != version:
                shutil.rmtree(stale, ignore_errors=True)
    target.mkdir(parents=True, exist_ok=True)
    return target


class ChunkCache:
    """Makes the chunks of one local dataset readable as local, uncompressed files.

    Args:
        root: The dataset directory.
        index: Its index.
        cache_dir: The cache root for chunks that must be decompressed.
    """

    def __init__(
        self, root: str | os.PathLike[str], index: DatasetIndex, cache_dir: str | None = None
    ) -> None:
        self.root = Path(root)
        self.index = index
        self._cache_root = cache_dir
        self._compression = index.config.compression
        self._cache: Path | None = None
        self._compressor: Compressor | None = None

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        state["_compressor"] = None
        return state

    @property
    def in_place(self) -> bool:
        """Whether chunks are read where they lie (the dataset is not compressed)."""
        return not self._compression

    def local_path(self, chunk_index: int) -> Path:
        """A local file holding chunk ``chunk_index`` uncompressed.

        Raises:
            FileNotFoundError: The chunk file is missing from the dataset.
            ChunkCorruptError: A compressed chunk fails its checksum or decompresses to the
                wrong size.
        """
        entry = self.index.chunks[chunk_index]
        source = self.root / entry.filename
        if not self._compression:
            return source
        if self._cache is None:
            self._cache = dataset_cache_dir(str(self.root.resolve()), self.index, self._cache_root)
        target = self._cache / decompressed_filename(entry.filename, self._compression)
        if not target.exists():
            self._decompress(source, target, entry)
        return target

    def _decompress(self, source: Path, target: Path, entry: ChunkEntry) -> None:
        start = time.perf_counter()
        try:
            data = source.read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(
                f"Chunk {source} listed in index.json is missing. The dataset is incomplete; "
                f"re-create or re-copy it."
            ) from None
        verify_checksum(data, entry, str(source))
        if self._compressor is None:
            providers = self.index.plugins.get("compression", {})
            self._compressor = create_compressor(self._compression or "", providers)
        level = self.index.config.extra.get("compression_level")
        plain = unframe(data, entry, level, self._compressor.decompress, str(source))
        atomic_write_bytes(target, plain)
        hooks.chunk_downloaded(str(source), str(target), len(data), time.perf_counter() - start)
        logger.debug("decompressed %s into %s", source, target)
