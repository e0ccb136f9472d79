"""Finding a dataset: which storage backend serves a location, and which format it is in."""

from __future__ import annotations

import os
from pathlib import Path

from litdata.core.errors import DatasetNotFoundError, LitdataError
from litdata.core.index import DatasetIndex, rank_index_files
from litdata.core.protocols import InPlaceStorage
from litdata.core.registry import hooks, registries

__all__ = ["open_local_dataset"]


def open_local_dataset(location: str | os.PathLike[str]) -> tuple[Path, DatasetIndex]:
    """Resolve a dataset that can be read in place; return its directory and index.

    The storage backend comes from the ``litdata_resolve_storage`` hook, the format from
    ``litdata_detect_format``.

    Raises:
        DatasetNotFoundError: There is no dataset at ``location``.
        UnknownPluginError: No storage backend serves its URL scheme.
        LitdataError: The backend's files cannot be read in place.
    """
    url = os.fspath(location)
    backend = hooks.resolve_storage(url)
    storage = registries.storage.create(backend)
    if not isinstance(storage, InPlaceStorage):
        raise LitdataError(
            f"{url} is served by the {backend!r} storage backend, whose files cannot be read "
            f"in place. Stream it with litdata.StreamingDataset, which downloads into a cache."
        )
    root = Path(storage.local_path(url))
    if not root.is_dir():
        raise DatasetNotFoundError(f"No dataset at {root}: the directory does not exist.")
    name = hooks.detect_format(str(root))
    if name is None:
        hint = (
            " Per-writer indexes are there: the merge did not run. litdata.complete_dataset("
            f"{str(root)!r}) finishes it."
            if rank_index_files(root)
            else " Did optimize() finish writing it?"
        )
        raise DatasetNotFoundError(f"No dataset at {root}: it holds no index.json.{hint}")
    return root, registries.formats.create(name).read_index(str(root))
