"""Merging datasets, and completing a dataset whose index merge did not run (local or remote)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from litdata.core.chunks.names import chunk_filename
from litdata.core.errors import DatasetExistsError, DatasetFormatError, DatasetNotFoundError
from litdata.core.index import INDEX_FILENAME, ChunkEntry, DatasetIndex, index_from_bytes
from litdata.core.location import Location
from litdata.core.publish import publishing
from litdata.engine.boundary.resolve import resolve
from litdata.engine.native.completion import publish_merged
from litdata.engine.native.keys import dataset_keys_parts, merge_keys
from litdata.engine.native.output_lock import OutputLock
from litdata.engine.native.rank_indexes import publish_index

__all__ = ["complete_dataset", "is_complete_dataset", "merge_datasets"]

_MUST_MATCH = (
    "data_format",
    "data_spec",
    "compression",
    "encryption",
    "item_loader",
    "compression_level",
)


def is_complete_dataset(input_dir: str | os.PathLike[str] | Location) -> bool:
    """Whether ``input_dir`` (a path or URL) holds a finished dataset (its ``index.json``)."""
    location = resolve(input_dir)
    return location.storage.exists(location.join(INDEX_FILENAME))


def complete_dataset(input_dir: str | os.PathLike[str]) -> str:
    """Merge the per-worker indexes of an interrupted ``optimize`` into ``index.json``.

    A no-op when the dataset is already complete. The merge runs under the output lock, once
    (see ``litdata.engine.native.completion``); what a litdata run that did not finish left is
    merged too, since you ask for it.

    Returns:
        The path (or URL) of ``index.json``.

    Raises:
        DatasetNotFoundError: There is neither an ``index.json`` nor a per-worker index.
        OutputLockedError: A writer still writes the dataset.
    """
    location = resolve(input_dir)
    if not is_complete_dataset(location):
        publish_merged(location, take_over=True)
    return location.join(INDEX_FILENAME)


def _read_index(location: Location) -> DatasetIndex:
    try:
        data = location.read(INDEX_FILENAME)
    except FileNotFoundError:
        raise DatasetNotFoundError(f"{location.url} holds no dataset (no index.json).") from None
    return index_from_bytes(data, location.join(INDEX_FILENAME))


def _check_compatible(first: DatasetIndex, other: DatasetIndex, where: str) -> None:
    different = other.config.differences(first.config, _MUST_MATCH)
    mine, theirs = first.config.encryption or {}, other.config.encryption or {}
    if different == ["encryption"] and mine.get("key_id") != theirs.get("key_id"):
        raise ValueError(
            f"{where} cannot be merged with the first dataset: they are encrypted with "
            f"different keys ({mine.get('algorithm')} key {mine.get('key_id')} and "
            f"{theirs.get('key_id')}), and no one key would read the result. Re-encrypt one "
            f"with the other's key first."
        )
    if different:
        raise ValueError(
            f"{where} cannot be merged with the first dataset: they differ in "
            f"{', '.join(different)}. Only datasets with the same sample layout merge."
        )


def _copy(source: Location, name: str, target: Location, new_name: str) -> None:
    """Copy one object, whatever the two locations are (atomically when local)."""
    source_path, target_path = source.local_path, target.local_path
    if source_path is not None and target_path is not None:
        destination = os.path.join(target_path, new_name)
        with publishing(destination) as temporary:
            shutil.copyfile(os.path.join(source_path, name), temporary)
        return
    with tempfile.TemporaryDirectory(prefix="litdata-merge-") as scratch:
        local = os.path.join(scratch, name)
        if source_path is not None:
            local = os.path.join(source_path, name)
        else:
            source.storage.download(source.join(name), local)
        if target_path is not None:
            with publishing(os.path.join(target_path, new_name)) as temporary:
                shutil.copyfile(local, temporary)
        else:
            target.storage.upload(local, target.join(new_name))


def _merge_keys(
    output: Location,
    sources: Sequence[Location],
    indexes: Sequence[DatasetIndex],
    chunks: Sequence[ChunkEntry],
) -> dict[str, Any]:
    """Merge the inputs' keys sidecars, each offset by the samples before it."""
    parts, offset = [], 0
    for source, index in zip(sources, indexes, strict=True):
        parts.extend(dataset_keys_parts(source, index, offset))
        offset += index.num_items
    return merge_keys(output, parts, [chunk.chunk_size for chunk in chunks])


def merge_datasets(
    input_dirs: Sequence[str | os.PathLike[str]],
    output_dir: str | os.PathLike[str],
    max_workers: int | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> None:
    """Copy the chunks of several datasets into one new dataset, in the given order.

    Inputs and output may be local paths or URLs. Chunks are renamed ``chunk-0-<n>`` (with the
    compression infix); their checksums carry over. The output is locked while it is written,
    and its ``index.json`` appears last.

    Raises:
        ValueError: Fewer than two inputs, the output is an input, layouts differ (or the
            encryption keys: datasets encrypted with different keys do not merge), or some
            inputs have keys and others not (keys sidecars are merged when all have one).
        DatasetFormatError: Two inputs' samples have the same key (nothing is written).
        DatasetNotFoundError: An input has no ``index.json``.
        DatasetExistsError: The output already holds a dataset.
        OutputLockedError: Another writer is writing the output.
    """
    sources = [resolve(source, storage_options=storage_options) for source in input_dirs]
    output = resolve(output_dir, storage_options=storage_options)
    if len(sources) < 2:  # noqa: PLR2004  # merging needs two
        raise ValueError(f"merge_datasets needs at least two datasets, got {len(sources)}.")
    if output.url in {source.url for source in sources}:
        raise ValueError(f"output_dir {output.url} is one of the inputs; choose a new location.")
    indexes = [_read_index(source) for source in sources]
    for source, index in zip(sources[1:], indexes[1:], strict=True):
        _check_compatible(indexes[0], index, source.url)
    keyed = [index.keys is not None for index in indexes]
    if any(keyed) and not all(keyed):
        unkeyed = [source.url for source, has in zip(sources, keyed, strict=True) if not has]
        raise ValueError(
            f"Some inputs have a keys sidecar and {', '.join(unkeyed)} do not: the merged "
            f"dataset could not find their samples by key. build_keys_index() them first."
        )
    created = output.local_path is not None and not os.path.isdir(output.local_path)
    if output.local_path is not None:
        os.makedirs(output.local_path, exist_ok=True)
    lock = OutputLock(output, "merge_datasets")
    lock.acquire()
    if is_complete_dataset(output):
        lock.release(keep_marker=lock.found_stale)
        raise DatasetExistsError(f"{output.url} already holds a dataset; choose a new location.")
    compression = indexes[0].config.compression
    copies: list[tuple[Location, str, str]] = []
    chunks: list[ChunkEntry] = []
    for source, index in zip(sources, indexes, strict=True):
        for chunk in index.chunks:
            name = chunk_filename(0, len(chunks), compression)
            copies.append((source, chunk.filename, name))
            chunks.append(replace(chunk, filename=name))
    try:  # the keys first: duplicates refuse the merge before anything is written
        keys = _merge_keys(output, sources, indexes, chunks) if all(keyed) else None
    except DatasetFormatError:
        lock.release()
        if created:
            with contextlib.suppress(OSError):
                os.rmdir(output.local_path or "")
        raise
    succeeded = False
    try:
        with ThreadPoolExecutor(max_workers or min(8, os.cpu_count() or 1)) as pool:
            list(pool.map(lambda copy: _copy(copy[0], copy[1], output, copy[2]), copies))
        publish_index(
            output, indexes[0].config, chunks, (index.plugins for index in indexes), keys=keys
        )
        succeeded = True
    finally:
        lock.release(keep_marker=not succeeded)
