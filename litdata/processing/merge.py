"""Merging datasets, and completing a dataset whose index merge did not run."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from litdata.core.chunks.codecs import chunk_filename
from litdata.core.errors import DatasetExistsError, DatasetNotFoundError
from litdata.core.index import (
    INDEX_FILENAME,
    ChunkEntry,
    DatasetIndex,
    load_index,
    merge_rank_indexes,
    publish_index,
)

__all__ = ["complete_dataset", "is_complete_dataset", "merge_datasets"]

_MUST_MATCH = (
    "data_format",
    "data_spec",
    "compression",
    "encryption",
    "item_loader",
    "compression_level",
)


def is_complete_dataset(input_dir: str | os.PathLike[str]) -> bool:
    """Whether ``input_dir`` holds a finished dataset (its ``index.json`` exists)."""
    return (Path(input_dir) / INDEX_FILENAME).is_file()


def complete_dataset(input_dir: str | os.PathLike[str]) -> str:
    """Merge the per-worker indexes of an interrupted ``optimize`` into ``index.json``.

    A no-op when the dataset is already complete.

    Returns:
        The path of ``index.json``.

    Raises:
        DatasetNotFoundError: There is neither an ``index.json`` nor a per-worker index.
    """
    directory = Path(input_dir)
    if not is_complete_dataset(directory):
        merge_rank_indexes(directory)
    return str(directory / INDEX_FILENAME)


def _check_compatible(first: DatasetIndex, other: DatasetIndex, where: Path) -> None:
    different = other.config.differences(first.config, _MUST_MATCH)
    if different:
        raise ValueError(
            f"{where} cannot be merged with the first dataset: they differ in "
            f"{', '.join(different)}. Only datasets with the same sample layout merge."
        )


def merge_datasets(
    input_dirs: Sequence[str | os.PathLike[str]],
    output_dir: str | os.PathLike[str],
    max_workers: int | None = None,
) -> None:
    """Copy the chunks of several datasets into one new dataset, in the given order.

    Chunks are renamed ``chunk-0-<n>`` (with the compression infix); their checksums carry over.

    Raises:
        ValueError: Fewer than two inputs, the output is an input, or layouts differ.
        DatasetNotFoundError: An input has no ``index.json``.
        DatasetExistsError: The output already holds a dataset.
    """
    sources = [Path(directory).absolute() for directory in input_dirs]
    output = Path(output_dir).absolute()
    if len(sources) < 2:  # noqa: PLR2004  # merging needs two
        raise ValueError(f"merge_datasets needs at least two datasets, got {len(sources)}.")
    if output in sources:
        raise ValueError(f"output_dir {output} is one of the inputs; choose a new directory.")
    if is_complete_dataset(output):
        raise DatasetExistsError(f"{output} already holds a dataset; choose a new directory.")
    indexes = []
    for source in sources:
        if not is_complete_dataset(source):
            raise DatasetNotFoundError(f"{source} holds no dataset (no index.json).")
        indexes.append(load_index(source))
    for source, index in zip(sources[1:], indexes[1:], strict=True):
        _check_compatible(indexes[0], index, source)
    compression = indexes[0].config.compression
    copies: list[tuple[Path, Path]] = []
    chunks: list[ChunkEntry] = []
    for source, index in zip(sources, indexes, strict=True):
        for chunk in index.chunks:
            name = chunk_filename(0, len(chunks), compression)
            copies.append((source / chunk.filename, output / name))
            chunks.append(replace(chunk, filename=name))
    output.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers or min(8, os.cpu_count() or 1)) as pool:
        list(pool.map(lambda pair: shutil.copyfile(*pair), copies))
    publish_index(output, indexes[0].config, chunks, (index.plugins for index in indexes))
