"""Hugging Face Hub datasets: ``index_hf_dataset`` and ``optimize_hf``.

Streaming ``hf://datasets/<org>/<name>/<path>`` needs nothing from here: the ``hf`` storage
backend serves the files and the ``parquet`` format reads them. ``index_hf_dataset`` keeps a
folder's index in the local cache (the Hub is read-only), so later opens read no footer;
``optimize_hf`` converts a Hub dataset's Parquet files into litdata chunks.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from litdata.core.config import cache_mode
from litdata.core.errors import DatasetNotFoundError
from litdata.core.index import INDEX_FILENAME, DatasetIndex, index_bytes
from litdata.core.location import Location
from litdata.core.publish import publish_bytes
from litdata.engine.boundary.resolve import resolve
from litdata.engine.cache.directory import cache_home, make_folder
from litdata.plugins.formats.parquet.footers import (
    SUFFIX,
    Footer,
    arrow,
    build_index,
    files_at,
    read_footer,
)

__all__ = ["HubRows", "hub_parquet_files", "index_hf_dataset", "optimize_hf"]

_SCHEME = "hf://"
#: Rows converted to Python at a time by ``optimize_hf``'s workers.
_BATCH = 1024


def _location(dataset_url: str, storage_options: Mapping[str, Any] | None) -> Location:
    if not dataset_url.startswith(_SCHEME):
        raise ValueError(
            f"{dataset_url!r} is not a Hugging Face URL; use hf://datasets/<org>/<name>/<path>."
        )
    return files_at(dataset_url, storage_options)


def index_hf_dataset(
    dataset_url: str,
    cache_dir: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> str:
    """Index the Parquet files of a Hub folder into the local cache; reuse an earlier index.

    Returns the folder holding ``index.json``: pass it as
    ``StreamingDataset(dataset_url, index_path=...)`` to open the dataset without reading the
    files' footers again.

    Args:
        dataset_url: ``hf://datasets/<org>/<name>/<path>`` (a folder, or a glob of files).
        cache_dir: The cache root (``LITDATA_CACHE_DIR`` or ``~/.lightning/chunks`` if unset).
        storage_options: ``HfFileSystem`` options (``token``, ``endpoint``).

    Raises:
        ValueError: ``dataset_url`` is not an ``hf://`` URL.
        DatasetNotFoundError: No Parquet file is there.
    """
    location = _location(dataset_url, storage_options)
    folder = cache_home(f"{location.join(location.pattern or '')}#index", cache_dir)
    if (folder / INDEX_FILENAME).is_file():
        return str(folder)
    index = build_index(location)
    written = DatasetIndex(index.config, index.chunks, updated_at=str(time.time()))
    make_folder(folder)
    publish_bytes(folder / INDEX_FILENAME, index_bytes(written), durable=True, mode=cache_mode())
    return str(folder)


def hub_parquet_files(
    name: str,
    revision: str | None = None,
    split: str | None = None,
    config: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> list[str]:
    """The ``hf://`` URLs of a Hub dataset's Parquet files, in name order.

    Args:
        name: ``org/name``, or an ``hf://`` URL of a folder in the repository.
        revision: A branch, tag or commit (``refs/convert/parquet`` for the Hub's conversion).
        split: Keep files of this split (a folder named so, or names starting with it).
        config: Keep files under a folder of this name (a dataset's config or subset).
        storage_options: ``HfFileSystem`` options.

    Raises:
        DatasetNotFoundError: No Parquet file matches.
    """
    url = name if name.startswith(_SCHEME) else f"{_SCHEME}datasets/{name}"
    if revision is not None and not name.startswith(_SCHEME):
        url = f"{url}@{revision.replace('/', '%2F')}"
    root = resolve(url, storage_options=storage_options)
    backend: Any = root.storage.backend
    base = backend.path(root.url)
    found = sorted(path for path in backend.fs.find(base) if path.endswith(SUFFIX) and path != base)

    def wanted(path: str) -> bool:
        parts = path[len(base) :].strip("/").split("/")
        folders, filename = parts[:-1], parts[-1]
        if config is not None and config not in folders:
            return False
        return split is None or split in folders or filename.startswith(split)

    urls = [f"{_SCHEME}{path}" for path in found if wanted(path)]
    if not urls:
        raise DatasetNotFoundError(
            f"No {SUFFIX} files in {url}"
            + (f" for split={split!r}" if split else "")
            + (f" and config={config!r}" if config else "")
            + f" (it has {len(found)} Parquet files). Check the name, split and config; "
            f"revision='refs/convert/parquet' reads the Hub's Parquet conversion."
        )
    return urls


class HubRows:
    """``optimize``'s function for ``optimize_hf``: the rows of one Hub Parquet file.

    Args:
        fn: ``row -> sample`` (the row as is when ``None``).
        columns: The columns to read (all when ``None``).
        storage_options: ``HfFileSystem`` options.
    """

    def __init__(
        self,
        fn: Callable[[dict[str, Any]], Any] | None,
        columns: Sequence[str] | None,
        storage_options: Mapping[str, Any] | None,
    ) -> None:
        self.fn = fn
        self.columns = list(columns) if columns is not None else None
        self.storage_options = dict(storage_options or {})

    def __call__(self, url: str) -> Iterator[Any]:
        """Download ``url`` and yield its rows, ``fn`` applied."""
        _, parquet = arrow()
        folder, _, filename = url.rpartition("/")
        location = resolve(folder, storage_options=self.storage_options)
        with tempfile.TemporaryDirectory(prefix="litdata-hf-") as scratch:
            path = os.path.join(scratch, filename)
            location.storage.download(url, path)
            with parquet.ParquetFile(path, pre_buffer=False) as source:
                for batch in source.iter_batches(_BATCH, columns=self.columns, use_threads=False):
                    for row in batch.to_pylist():
                        yield row if self.fn is None else self.fn(row)


def _refuse_nulls(
    files: list[str], columns: Sequence[str] | None, storage_options: Mapping[str, Any] | None
) -> None:
    """Refuse scalar columns with nulls: a sample's leaves must keep one kind of value.

    Raises:
        ValueError: A scalar column has nulls (the message names it and a file).
    """

    def footer(url: str) -> Footer:
        folder, _, filename = url.rpartition("/")
        return read_footer(resolve(folder, storage_options=storage_options), filename)

    with ThreadPoolExecutor(4) as pool:
        footers = list(pool.map(footer, files))
    for found in footers:
        nulls = sorted(found.nulls if columns is None else found.nulls & set(columns))
        if nulls:
            raise ValueError(
                f"Column {nulls[0]!r} of {found.name} has nulls, and a value of each sample must "
                f"keep one type. Pass fn= to fill them (e.g. row[{nulls[0]!r}] or 0), or leave "
                f"the column out with columns=."
            )


def optimize_hf(  # noqa: PLR0917  # LitData's positional arguments
    name: str,
    output_dir: str,
    revision: str | None = None,
    split: str | None = None,
    config: str | None = None,
    chunk_size: int | None = None,
    chunk_bytes: int | str | None = None,
    fn: Callable[[dict[str, Any]], Any] | None = None,
    num_workers: int | None = None,
    columns: list[str] | None = None,
    overwrite: bool = False,
    cache_dir: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
    **optimize_kwargs: Any,
) -> str:
    """Convert a Hugging Face dataset's Parquet files into litdata chunks (``optimize``).

    Each row becomes a sample (``fn(row)`` when ``fn`` is given). Lists (of values, or of
    records such as chat messages) are stored as one JSON leaf, so their length may vary from
    row to row; struct columns stay dicts. Scalar columns with nulls are refused unless ``fn``
    fills them (their files' statistics tell), since each value of a sample keeps one type.

    Args:
        name: The Hub id (``org/name``) or an ``hf://`` URL of a folder of Parquet files.
        output_dir: Where to write the chunks (local, or any writable storage).
        revision: A branch, tag or commit (``refs/convert/parquet``: the Hub's conversion).
        split: Keep files of this split (``train``...); all files when ``None``.
        config: Keep files under a folder of this name (a config or subset).
        chunk_size: Samples per chunk.
        chunk_bytes: Bytes per chunk (``"256MB"`` when neither this nor ``chunk_size`` is set).
        fn: ``row -> sample`` (importable, as for ``optimize``); the row as is when ``None``.
        num_workers: Writer processes (default: one per file, at most the CPU count).
        columns: Read only these columns.
        overwrite: Rewrite ``output_dir`` even if it holds a dataset already.
        cache_dir: Unused (files are downloaded to a temporary folder per worker); accepted
            for LitData compatibility.
        storage_options: ``HfFileSystem`` options (``token``, ``endpoint``); else ``HF_TOKEN``.
        **optimize_kwargs: More ``optimize`` arguments (``compression``...).

    Returns:
        ``output_dir``. When it already holds a dataset and ``overwrite`` is false, nothing is
        converted.

    Raises:
        DatasetNotFoundError: No Parquet file matches ``split`` and ``config``.
        ValueError: A scalar column has nulls and no ``fn`` fills them.
    """
    del cache_dir
    from litdata.processing.optimize import optimize

    output = resolve(output_dir)
    if not overwrite and output.storage.exists(output.join(INDEX_FILENAME)):
        return output_dir
    files = hub_parquet_files(name, revision, split, config, storage_options)
    if fn is None:
        _refuse_nulls(files, columns, storage_options)
    if overwrite:
        optimize_kwargs.setdefault("mode", "overwrite")
    if chunk_size is None and chunk_bytes is None:
        chunk_bytes = "256MB"
    optimize(
        fn=HubRows(fn, columns, storage_options),
        inputs=files,
        output_dir=output_dir,
        chunk_size=chunk_size,
        chunk_bytes=chunk_bytes,
        num_workers=num_workers or min(len(files), os.cpu_count() or 1),
        **optimize_kwargs,
    )
    return output_dir
