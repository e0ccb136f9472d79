"""Where a dataset's cached files live: ``<cache root>/<md5 of its URL>/<version>/``.

The version is the index's ``updated_at``: a dataset rewritten under the same URL gets a new
directory, and the directories of other versions are removed. A remote dataset's index (and
its format) is kept in ``<cache root>/<md5 of its URL>/dataset.json``, so a warm cache opens
with no network at all.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from litdata.core import config
from litdata.core.index import DatasetIndex, parse_index
from litdata.core.storage.publish import publish_bytes, stale_temporaries

_RECORD = "dataset.json"

__all__ = ["cache_home", "flat_name", "recall", "remember", "version_dir"]


def _digest(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def flat_name(name: str) -> str:
    """A file's name in a cache folder, which is flat (a format may list nested files)."""
    return name.replace("/", "%2F")


def cache_home(url: str, cache_dir: str | None = None) -> Path:
    """The cache folder of the dataset at ``url`` (all its versions).

    Args:
        url: Where the dataset lives (a URL, or an absolute local path).
        cache_dir: The cache root; defaults to ``LITDATA_CACHE_DIR`` or ``~/.lightning/chunks``.
    """
    root = Path(cache_dir).expanduser() if cache_dir else config.cache_root()
    return root / _digest(url)


def remember(home: Path, format_name: str, index: DatasetIndex) -> None:
    """Keep a remote dataset's format and index, for opening it offline later."""
    home.mkdir(parents=True, exist_ok=True)
    record = {"format": format_name, "index": index.to_json()}
    publish_bytes(home / _RECORD, json.dumps(record, sort_keys=True).encode())


def recall(home: Path) -> tuple[str, DatasetIndex] | None:
    """The format and index :func:`remember` kept, if any (and readable)."""
    try:
        record = json.loads((home / _RECORD).read_bytes())
        return str(record["format"]), parse_index(record["index"], str(home / _RECORD))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def version_dir(home: Path, index: DatasetIndex) -> Path:
    """The folder of this version of the dataset, created.

    Other versions are removed, and so are the partial downloads of killed processes.
    """
    version = index.updated_at or _digest(str(home))
    target = home / version
    if home.is_dir():
        for stale in home.iterdir():
            if stale.is_dir() and stale.name != version:
                shutil.rmtree(stale, ignore_errors=True)
    target.mkdir(parents=True, exist_ok=True)
    for partial in stale_temporaries(target):  # downloads of processes that were killed
        partial.unlink(missing_ok=True)
    return target
