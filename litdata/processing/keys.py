"""``build_keys_index``: give an existing dataset its ``keys/`` sidecar, for ``ds["id"]``."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from litdata.core.index import INDEX_FILENAME, index_from_bytes
from litdata.core.location import Location
from litdata.core.protocols import Encryptor, Serializer
from litdata.core.registry import hooks, kinds
from litdata.engine.boundary.resolve import resolve
from litdata.engine.native.keys import KEYS_DIR, KeyRecorder, KeysPart, check_key_fn, merge_keys
from litdata.engine.native.output_lock import OutputLock
from litdata.engine.native.rank_indexes import publish_index
from litdata.engine.reader import DatasetReader

__all__ = ["build_keys_index"]


def build_keys_index(
    input_dir: str | os.PathLike[str],
    key_fn: Callable[[Any], Any],
    *,
    overwrite: bool = False,
    verbose: bool = True,
    num_shards: int = 1,
    storage_options: Mapping[str, Any] | None = None,
    encryption: Encryptor | None = None,
    serializers: Mapping[str, Serializer] | None = None,
) -> str:
    """Read every sample of the dataset at ``input_dir`` and write its keys sidecar.

    ``key_fn`` gets each sample as the dataset returns it. The dataset's chunks are not
    touched; ``index.json`` is published again (atomically) with its ``keys`` section. Local
    paths and URLs both work; the dataset is locked while its keys are written.

    Args:
        input_dir: The dataset (a path or URL).
        key_fn: ``sample -> key`` (an int or a str, unique).
        overwrite: Replace an existing sidecar.
        verbose: Show a progress bar.
        num_shards: Split the keys over this many files (by a hash of each key).
        storage_options: Options for the storage backend (credentials, endpoint).
        encryption: The key of an encrypted dataset.
        serializers: The serializers a dataset written with your own needs.

    Returns:
        The location of the ``keys/`` folder.

    Raises:
        FileExistsError: The dataset has keys and ``overwrite`` is false.
        DatasetFormatError: Two samples have the same key.
        TypeError: ``key_fn`` returned something other than an int or a str.
    """
    if not callable(key_fn):
        raise ValueError(f"key_fn must be callable, got {type(key_fn).__name__}.")
    if num_shards < 1:
        raise ValueError(f"num_shards must be at least 1, got {num_shards}.")
    location = resolve(input_dir, storage_options=storage_options)
    reader = DatasetReader(location, encryption=encryption, serializers=serializers)
    recorded = reader.index.config.item_loader or hooks.default_item_loader(reader.index)
    check_key_fn(key_fn, kinds.item_loaders.load(recorded))
    if reader.index.keys is not None and not overwrite:
        raise FileExistsError(
            f"{location.join(KEYS_DIR)} already exists: pass overwrite=True to rebuild it."
        )
    lock = OutputLock(location, "build_keys_index")
    lock.acquire()
    try:
        recorder = KeyRecorder(key_fn)
        for position in tqdm(range(len(reader)), desc="keys", unit="sample", disable=not verbose):
            recorder.record(reader[position])
        reader.close()
        sizes = [chunk.chunk_size for chunk in reader.index.chunks]
        _publish(location, recorder, sizes, num_shards)
    finally:
        lock.release()
    return location.join(KEYS_DIR)


def _publish(location: Location, recorder: KeyRecorder, sizes: list[int], shards: int) -> None:
    """Write the sidecar, then ``index.json`` naming it (re-read: the lock is held)."""
    with tempfile.TemporaryDirectory(prefix="litdata-keys-") as scratch:
        name = "scanned.keys.parquet"
        recorder.write(Path(scratch, name))
        keys = merge_keys(location, [KeysPart(resolve(scratch), name)], sizes, shards)
    index = index_from_bytes(location.read(INDEX_FILENAME), location.join(INDEX_FILENAME))
    publish_index(location, index.config, index.chunks, [index.plugins], keys=keys)
