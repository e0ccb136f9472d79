"""Where a dataset's cached files live: ``<cache root>/<md5 of its URL>/<version>/``.

The version is the index's ``updated_at``: a dataset rewritten under the same URL gets a new
directory, and the directories of other versions are removed. The index itself is cached in
``<cache root>/<md5 of its URL>/index.json``, so a warm cache opens with no network at all.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from litdata.core import config
from litdata.core.index import INDEX_FILENAME, DatasetIndex

__all__ = ["cache_home", "cached_index_path", "version_dir"]


def _digest(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def cache_home(url: str, cache_dir: str | None = None) -> Path:
    """The cache folder of the dataset at ``url`` (all its versions).

    Args:
        url: Where the dataset lives (a URL, or an absolute local path).
        cache_dir: The cache root; defaults to ``LITDATA_CACHE_DIR`` or ``~/.lightning/chunks``.
    """
    root = Path(cache_dir).expanduser() if cache_dir else config.cache_root()
    return root / _digest(url)


def cached_index_path(home: Path) -> Path:
    """Where the last index seen for a dataset is kept."""
    return home / INDEX_FILENAME


def version_dir(home: Path, index: DatasetIndex) -> Path:
    """The folder of this version of the dataset, created; other versions are removed."""
    version = index.updated_at or _digest(str(home))
    target = home / version
    if home.is_dir():
        for stale in home.iterdir():
            if stale.is_dir() and stale.name != version:
                shutil.rmtree(stale, ignore_errors=True)
    target.mkdir(parents=True, exist_ok=True)
    return target
