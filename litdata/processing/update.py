"""``dataset_update``: replace a few samples of a keyed dataset in place, atomically.

::

    with litdata.dataset_update("data/") as update:
        update["user-42"] = {"uid": "user-42", "score": 0.9}
        update.commit()

Only the chunks holding a replaced sample are rewritten. Each rewritten chunk gets a new file
(``chunk-<rank>-<index>-u<generation>.bin``); the new ``index.json``, published atomically
last, is the commit point. A crash at any moment therefore leaves the old dataset or the new
one, never a mix. The files the new index no longer names stay until the next update, so a
``StreamingDataset`` opened before this one keeps reading the version it opened.

The dataset is locked for the whole session (a second updater, or an ``optimize`` appending,
fails at once). Datasets on object stores are refused: publishing their new chunks and index
cannot be made atomic against a concurrent writer without conditional writes.
"""

from __future__ import annotations

import os
import shutil
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import replace
from itertools import accumulate
from pathlib import Path
from types import TracebackType
from typing import Any

from litdata.core.chunks.names import chunk_filename, parse_chunk_generation
from litdata.core.errors import DatasetFormatError, SampleError
from litdata.core.index import INDEX_FILENAME, ChunkEntry, DatasetIndex
from litdata.core.location import Location
from litdata.core.protocols import Encryptor, Serializer
from litdata.core.publish import stale_temporaries
from litdata.engine.boundary.resolve import resolve
from litdata.engine.native.keys import KEYS_DIR, normalize_key
from litdata.engine.native.output_lock import OutputLock
from litdata.engine.native.rank_indexes import publish_index
from litdata.engine.native.writer import ChunkWriter
from litdata.engine.reader import DatasetReader

__all__ = ["DatasetUpdate", "dataset_update"]

#: Where new chunks are written before they are moved into the dataset.
SCRATCH = ".litdata-update"


class DatasetUpdate:
    """A keyed, in-place patch of a local dataset: ``update[key] = sample``, then ``commit()``.

    Args:
        input_dir: The dataset (a local directory with ``index.json`` and ``keys/``).
        encryption: The key of an encrypted dataset (rewritten chunks are encrypted with it).
        serializers: The serializers a dataset written with your own needs.

    Raises:
        NotImplementedError: ``input_dir`` is on an object store.
        FileNotFoundError: It has no ``index.json`` or no ``keys/`` sidecar.
        OutputLockedError: Another writer or updater holds the dataset.
    """

    def __init__(
        self,
        input_dir: str | os.PathLike[str],
        *,
        encryption: Encryptor | None = None,
        serializers: Mapping[str, Serializer] | None = None,
    ) -> None:
        self.location: Location = resolve(input_dir)
        local = self.location.local_path
        if local is None:
            raise NotImplementedError(
                f"dataset_update works on local datasets only; {self.location.url} is on an "
                f"object store, where new chunks and a new index cannot be published atomically "
                f"against another writer. Download it, update it, and upload it again."
            )
        self.root = Path(local)
        for needed in (INDEX_FILENAME, f"{KEYS_DIR}/"):
            if not (self.root / needed).exists():
                raise FileNotFoundError(
                    f"{self.root} has no {needed}: dataset_update needs a dataset written with "
                    f"optimize(..., key_fn=...) (or given keys by build_keys_index)."
                )
        self._encryption = encryption
        self._serializers = serializers
        self._pending: dict[int | str, Any] = {}
        self._done = False
        self._lock = OutputLock(self.location, "dataset_update")
        self._lock.acquire()

    # -- staging ---------------------------------------------------------------------------
    def __setitem__(self, key: Any, sample: Any) -> None:
        self.replace(key, sample)

    def replace(self, key: Any, sample: Any) -> None:
        """Stage ``sample`` as the new sample for ``key`` (written by :meth:`commit`).

        Raises:
            RuntimeError: The update was already committed or closed.
            TypeError: ``key`` is not an int or a str.
        """
        self._check_open()
        self._pending[normalize_key(key)] = sample

    def __len__(self) -> int:
        return len(self._pending)

    def _check_open(self) -> None:
        if self._done:
            raise RuntimeError(
                "This dataset_update was already committed or closed; it cannot be used after "
                "commit. Open a new one."
            )

    # -- committing ------------------------------------------------------------------------
    def commit(self) -> DatasetIndex:
        """Rewrite the chunks holding the staged samples and publish the new index.

        Returns:
            The new index.

        Raises:
            KeyError: A staged key is not in the dataset (nothing was changed).
            DatasetFormatError: A staged sample's structure differs from the dataset's
                (nothing was changed).
            RuntimeError: Already committed.
        """
        self._check_open()
        self._done = True
        try:
            return self._commit()
        finally:
            shutil.rmtree(self.root / SCRATCH, ignore_errors=True)
            self._lock.release()

    def _commit(self) -> DatasetIndex:
        reader = DatasetReader(
            self.location, encryption=self._encryption, serializers=self._serializers
        )
        index = reader.index
        self._remove_superseded(index)
        starts = [0, *accumulate(reader.chunk_sizes)]
        by_chunk: dict[int, dict[int, Any]] = defaultdict(dict)
        for key, sample in self._pending.items():
            try:
                position = reader.find_key(key)
            except KeyError:
                reader.close()
                raise KeyError(
                    f"Unknown dataset key {key!r}: no sample of {self.root} has it (nothing was "
                    f"changed; dataset_update replaces samples, it does not add them)."
                ) from None
            chunk = bisect_right(starts, position) - 1
            by_chunk[chunk][position - starts[chunk]] = sample
        generation = 1 + max(
            (parse_chunk_generation(chunk.filename) or (0, 0, 0))[2] for chunk in index.chunks
        )
        scratch = self.root / SCRATCH
        shutil.rmtree(scratch, ignore_errors=True)
        rewritten = {
            chunk: self._rewrite(reader, chunk, replacements, scratch, generation)
            for chunk, replacements in sorted(by_chunk.items())
        }
        reader.close()
        for entry in rewritten.values():
            _install(scratch / entry.filename, self.root / entry.filename)
        chunks = [rewritten.get(i, chunk) for i, chunk in enumerate(index.chunks)]
        return publish_index(self.location, index.config, chunks, [index.plugins], index.keys)

    def _rewrite(
        self,
        reader: DatasetReader,
        chunk: int,
        replacements: Mapping[int, Any],
        scratch: Path,
        generation: int,
    ) -> ChunkEntry:
        """Write chunk ``chunk`` with ``replacements`` into ``scratch``; return its entry."""
        old = reader.index.chunks[chunk]
        config = reader.index.config
        parsed = parse_chunk_generation(old.filename)
        rank, number = parsed[:2] if parsed else (0, chunk)
        samples = [
            replacements[position] if position in replacements else reader.read(chunk, position)
            for position in range(reader.chunk_sizes[chunk])
        ]
        writer = ChunkWriter(
            scratch,
            chunk_size=len(samples),
            compression=config.compression,
            serializers=self._serializers,
            rank=rank,
            chunk_index=number,
            encryption=self._encryption if config.encryption else None,
            mode="overwrite",  # a scratch folder of this update's
        )
        try:
            for sample in samples:
                writer.add(sample)
            writer.close()
        except SampleError as error:
            raise self._changed(old.filename, str(error)) from error
        different = writer.config.differences(config, ("data_format", "data_spec"))
        if different or len(writer.chunks) != 1:
            raise self._changed(old.filename, f"different {', '.join(different)}")
        name = chunk_filename(rank, number, config.compression, generation)
        (scratch / writer.chunks[0].filename).rename(scratch / name)
        return replace(writer.chunks[0], filename=name)

    def _changed(self, filename: str, problem: str) -> DatasetFormatError:
        return DatasetFormatError(
            f"The samples given for chunk {filename} of {self.root} change the dataset's sample "
            f"structure ({problem}): an update replaces samples with samples of the same "
            f"structure. Nothing was changed."
        )

    def _remove_superseded(self, index: DatasetIndex) -> None:
        """Delete chunk files the index no longer names (the previous update's old files)."""
        named = {chunk.filename for chunk in index.chunks}
        for path in self.root.iterdir():
            if parse_chunk_generation(path.name) and path.name not in named:
                path.unlink(missing_ok=True)
        for partial in stale_temporaries(self.root):
            partial.unlink(missing_ok=True)

    # -- context manager -------------------------------------------------------------------
    def close(self) -> None:
        """Give the dataset up; staged samples that were not committed are dropped."""
        if not self._done:
            self._done = True
            self._pending.clear()
            self._lock.release()

    def __enter__(self) -> DatasetUpdate:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def _install(source: Path, target: Path) -> None:
    """Move a new chunk file into the dataset, flushed to disk first."""
    with open(source, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(source, target)


def dataset_update(
    input_dir: str | os.PathLike[str],
    *,
    encryption: Encryptor | None = None,
    serializers: Mapping[str, Serializer] | None = None,
) -> DatasetUpdate:
    """Open a keyed, atomic, in-place update of the local dataset at ``input_dir``.

    See :class:`DatasetUpdate`; use it as a context manager and call ``commit()``.
    """
    return DatasetUpdate(input_dir, encryption=encryption, serializers=serializers)
