"""``parquet``: stream folders of Parquet files without converting them (LitData's layout).

``StreamingDataset("data/")``, ``StreamingDataset("s3://bucket/data/train-*.parquet")`` or
``StreamingDataset("hf://datasets/org/name/data")``: each file is a chunk, each row an item
(``{column: value}``). The index is the folder's ``index.json`` when it has one in LitData's
Parquet layout (``index_parquet_dataset`` writes it), else it is built from the files' footers
when the dataset is opened (in memory; nothing is written next to the files). Files are taken
in name order and must share one schema.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from litdata.core.errors import DatasetFormatError
from litdata.core.formats import ItemDecoder, ReadOptions
from litdata.core.index import INDEX_FILENAME, DatasetIndex, index_bytes, index_from_bytes
from litdata.core.location import Location
from litdata.core.registry.hookspecs import hookimpl
from litdata.engine.boundary.resolve import resolve
from litdata.plugins.formats.parquet.footers import LOADER_NAME, SUFFIX, build_index, files_at
from litdata.plugins.formats.parquet.rows import ParquetLoader

__all__ = ["ParquetFormat", "index_parquet_dataset", "litdata_detect_format"]

#: Footers of remote files read at once when a dataset is opened without an index.
_REMOTE_READS = 16
#: How an index.json written for Parquet files is recognised without parsing it.
_MARK = f'"{LOADER_NAME}"'.encode()
#: The bytes at each end of an ``index.json`` looked at for it (its config is at the end).
_SNIFF = 1 << 20


class ParquetFormat:
    """Folders of Parquet files, local or remote (any storage backend; ``hf://`` too)."""

    name: ClassVar[str] = "parquet"
    written_by: ClassVar[str] = "a Parquet writer (pyarrow, pandas, Spark, Hugging Face...)"

    def read_index(self, location: Location) -> DatasetIndex:
        """The folder's Parquet ``index.json``, or an index built from the files' footers.

        Raises:
            DatasetNotFoundError: No Parquet file (matching the location's pattern) is there.
            DatasetFormatError: A file is not readable Parquet, or the schemas differ.
        """
        if location.storage.probe(location.join(INDEX_FILENAME)):
            data = location.read(INDEX_FILENAME)
            if _MARK in data:
                return index_from_bytes(data, location.join(INDEX_FILENAME))
        # Remote footers are small ranged reads that mostly wait on the network.
        return build_index(location, 4 if location.local_path is not None else _REMOTE_READS)

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> ItemDecoder:
        """The rows decoder of the reader's ``ParquetLoader`` (a default one if none is given).

        Raises:
            DatasetFormatError: The reader asked for another item loader.
        """
        loader = options.item_loader
        if loader is None:
            loader = ParquetLoader()
        elif loader.name != LOADER_NAME:
            raise DatasetFormatError(
                f"{options.where} is a Parquet dataset, but it is opened with {loader.name}. "
                f"Use item_loader=ParquetLoader(...) (or none)."
            )
        decoder: ItemDecoder = loader.decoder(index, options)
        return decoder


@hookimpl
def litdata_detect_format(location: Location, index: DatasetIndex | None) -> str | None:
    """``parquet`` for a Parquet index, or a folder (or glob) of ``.parquet`` files."""
    if index is not None:
        return ParquetFormat.name if index.config.item_loader == LOADER_NAME else None
    if location.storage.probe(location.join(INDEX_FILENAME)):
        head, tail = location.read_ends(INDEX_FILENAME, _SNIFF)  # keys sorted: config is last
        found = _MARK in head or _MARK in tail
        return ParquetFormat.name if found else None
    try:
        names = location.names()
    except FileNotFoundError:
        return None
    return ParquetFormat.name if any(name.endswith(SUFFIX) for name in names) else None


def index_parquet_dataset(
    pq_dir_url: str,
    cache_dir: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
    num_workers: int = 4,
) -> str:
    """Write the ``index.json`` of a folder of Parquet files, reading only their footers.

    The index has LitData's Parquet layout (LitData reads it, and we read LitData's): one
    chunk per ``.parquet`` file directly in the folder, in name order. Then
    ``StreamingDataset(pq_dir_url)`` opens the folder without reading every footer again.

    Args:
        pq_dir_url: The folder (a path or URL: ``s3://``, ``gs://``, ``hf://``...), or a glob
            of files in it (``data/train-*.parquet``).
        cache_dir: Write ``index.json`` into this folder instead of next to the files (pass it
            as ``StreamingDataset(..., index_path=cache_dir)``). Needed for read-only
            storage such as the Hugging Face Hub.
        storage_options: Options for the storage backend (credentials, endpoint...).
        num_workers: Footers read at once.

    Returns:
        Where ``index.json`` was written (its folder's path or URL).

    Raises:
        DatasetNotFoundError: No Parquet file is there.
        DatasetFormatError: A file is not readable Parquet, or the schemas differ.
    """
    location = files_at(pq_dir_url, storage_options)
    index = build_index(location, num_workers)
    written = DatasetIndex(index.config, index.chunks, updated_at=str(time.time()))
    target = location if cache_dir is None else resolve(os.path.expanduser(cache_dir))
    try:
        target.write(INDEX_FILENAME, index_bytes(written))
    except PermissionError as error:
        raise PermissionError(
            f"Cannot write {INDEX_FILENAME} to {target.url} ({error}). Pass cache_dir= to "
            f"write it elsewhere, then StreamingDataset({pq_dir_url!r}, index_path=cache_dir)."
        ) from error
    return target.url
