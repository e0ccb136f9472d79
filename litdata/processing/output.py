"""The output of ``optimize``: its lock, its mode, where workers write, and how it is published.

- One writer per output (:class:`~litdata.engine.native.output_lock.OutputLock`).
- ``mode=None``: an output holding a dataset is refused; one holding files that are not part
  of a dataset is refused too (unless they are the leftovers of a failed litdata run, which
  are removed, or kept for a resume with ``use_checkpoint``).
- ``mode="overwrite"``: locally, the new dataset is written into a staging folder and swapped
  in only when complete, so a failing run leaves the old dataset intact; remotely, the old
  index is removed first, then the old chunks. Only files recognised as dataset files are
  removed; anything else stays.
- ``mode="append"``: new chunks continue each writer rank's numbering after the existing
  chunks, and ``index.json`` lists the old chunks first. With ``use_checkpoint``, an
  interrupted append resumes like any other run.
- A local output folder the run created is removed again when the run fails and leaves it
  empty.

Remote outputs are written by each worker into a local folder of its own, and every chunk is
uploaded as soon as it is written (in the background); ``index.json`` is published last.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from litdata.core.chunks.names import parse_chunk_filename
from litdata.core.compact import COMPACT_FILENAME
from litdata.core.errors import DatasetExistsError, DatasetFormatError
from litdata.core.formats import ItemLoader
from litdata.core.index import INDEX_FILENAME, DatasetConfig, DatasetIndex, index_from_bytes
from litdata.core.location import Location
from litdata.core.publish import published_name
from litdata.engine.boundary.resolve import resolve
from litdata.engine.items.loaders import default_item_loader
from litdata.engine.native.keys import KEYS_DIR, remove_keys, writer_keys_names
from litdata.engine.native.output_lock import LOCK_FILENAME, OutputLock
from litdata.engine.native.rank_indexes import merge_rank_indexes, rank_index_names
from litdata.processing.checkpoint import CHECKPOINT_DIR, Checkpoints
from litdata.processing.claims import CLAIMS_DIR, ConfigClaims
from litdata.processing.update import SCRATCH as UPDATE_SCRATCH

__all__ = ["MODES", "Output", "check_append", "prepare_output"]

logger = logging.getLogger(__name__)

MODES = (None, "append", "overwrite")
STAGING = ".litdata-staging"
_OURS = {
    INDEX_FILENAME,
    COMPACT_FILENAME,
    LOCK_FILENAME,
    CHECKPOINT_DIR,
    CLAIMS_DIR,
    STAGING,
    KEYS_DIR,
    UPDATE_SCRATCH,
}
_SHOWN = 5  # foreign files named in a refusal
#: The writer settings an append must share with the dataset.
_WRITER_KEYS = ("chunk_size", "chunk_bytes", "compression", "item_loader")


def dataset_files(names: Collection[str]) -> list[str]:
    """The chunk files and indexes (whole or per-writer) among ``names``, ``index.json`` first.

    Temporary files a killed writer left while publishing one of them are included.
    """
    files = [name for name in names if parse_chunk_filename(name)]
    files.extend(rank_index_names(names))
    files.extend(writer_keys_names(names))
    targets = {name: published_name(name) for name in names}
    files.extend(
        name
        for name, target in targets.items()
        if target
        and (
            parse_chunk_filename(target)
            or target == INDEX_FILENAME
            or rank_index_names([target])
            or writer_keys_names([target])
        )
    )
    return [INDEX_FILENAME, *files] if INDEX_FILENAME in names else files


def _listing(location: Location) -> list[str]:
    """Every name directly in the output (local folders included)."""
    local = location.local_path
    if local is not None:
        return sorted(os.listdir(local))
    return location.storage.list(location.url)


def _remove(location: Location, names: Collection[str]) -> None:
    """Delete ``names`` at ``location``; with ``index.json``, the dataset's ``keys/`` too."""
    for name in names:
        location.storage.delete(location.join(name))
    if INDEX_FILENAME in names:
        remove_keys(location)


@dataclass
class Output:
    """Where one run writes, and how it becomes a dataset.

    Attributes:
        location: The dataset's location.
        write_dir: The local folder the workers write chunks into (the dataset folder, or a
            staging folder swapped in at the end); ``None`` for a remote output, whose workers
            upload their chunks as they write them.
        lock: The output's lock, held until :meth:`publish` or :meth:`discard`.
        existing: The dataset being appended to.
        chunk_starts: The first chunk number of each writer rank (append).
        keep_on_failure: Leave partial output for a resume (``use_checkpoint``).
        staged: Whether ``write_dir`` is a local staging folder swapped in when complete.
        created: Whether this run created the local output folder (removed again if a
            failed run leaves it empty).
    """

    location: Location
    write_dir: Path | None
    lock: OutputLock
    existing: DatasetIndex | None = None
    chunk_starts: dict[int, int] = field(default_factory=dict)
    keep_on_failure: bool = False
    staged: bool = False
    created: bool = False
    _before: frozenset[str] = frozenset()

    @property
    def remote(self) -> bool:
        """Whether chunks are uploaded (the output is not a local folder)."""
        return self.location.local_path is None

    @property
    def upload_to(self) -> Location | None:
        """Where workers upload their chunks (remote outputs), else ``None``."""
        return self.location if self.remote else None

    @property
    def claims(self) -> ConfigClaims:
        """The configs the run's workers write with, compared at their first chunk."""
        return ConfigClaims(self.location)

    @property
    def checkpoints(self) -> Checkpoints:
        """The output's checkpoints (``use_checkpoint``)."""
        return Checkpoints(self.location)

    def publish(self, empty: DatasetConfig | None = None) -> DatasetIndex:
        """Merge the workers' indexes into ``index.json`` (swapping a staged dataset in).

        The dataset is then complete: its checkpoints and the lock are removed.

        Args:
            empty: The config to publish an empty dataset with when no worker wrote a sample.
        """
        if self.staged and self.write_dir is not None:
            local = Path(self.location.local_path or "")
            # index.json goes first: never a stale index over missing chunks.
            _remove(self.location, dataset_files(os.listdir(local)))
            for path in self.write_dir.iterdir():
                os.replace(path, local / path.name)
            shutil.rmtree(self.write_dir, ignore_errors=True)
        index = merge_rank_indexes(self.location, existing=self.existing, empty=empty)
        self.claims.remove()
        self.checkpoints.remove()
        self.lock.release()
        return index

    def discard(self) -> None:
        """Remove what a failed run wrote (unless it is to be resumed); unlock.

        Best-effort: it runs while the run's own error propagates, which must stay the one
        the caller sees (a storage that failed the run usually fails the clean-up too); what
        could not be removed is logged.
        """
        try:
            self.claims.remove()
            self._remove_added()
        except OSError as error:  # StorageError included
            logger.warning(
                "could not remove what the failed run wrote to %s: %s", self.location.url, error
            )
        try:
            self.lock.release(keep_marker=self.keep_on_failure)
        except OSError as error:
            logger.warning("could not release the lock of %s: %s", self.location.url, error)
        if self.created and not self.keep_on_failure and self.location.local_path:
            with contextlib.suppress(OSError):  # not empty: something else is there
                os.rmdir(self.location.local_path)

    def _remove_added(self) -> None:
        if self.keep_on_failure:
            return
        if self.staged and self.write_dir is not None:
            shutil.rmtree(self.write_dir, ignore_errors=True)
        if not self.staged:
            added = [name for name in _listing(self.location) if name not in self._before]
            _remove(self.location, dataset_files(added))


def _chunk_starts(names: Collection[str], existing: DatasetIndex) -> dict[int, int]:
    """The next free chunk number of each rank, past the dataset's chunks and stray files."""
    starts: dict[int, int] = {}
    for name in [*(chunk.filename for chunk in existing.chunks), *names]:
        parsed = parse_chunk_filename(name)
        if parsed:
            rank, index = parsed
            starts[rank] = max(starts.get(rank, 0), index + 1)
    return starts


def _refuse_foreign(location: Location, foreign: list[str]) -> DatasetExistsError:
    shown = ", ".join(foreign[:_SHOWN])
    if len(foreign) > _SHOWN:
        shown += f" and {len(foreign) - _SHOWN} more"
    return DatasetExistsError(
        f"{location.url} holds files that are not part of a litdata dataset ({shown}). Write "
        f"to an empty location, or pass mode='overwrite' to replace the dataset files there "
        f"(other files are kept)."
    )


def check_append(
    output: Output,
    *,
    chunk_size: int | None,
    chunk_bytes: int | None,
    compression: str | None,
    item_loader: ItemLoader | None,
    key_fn: Callable[[Any], Any] | None,
) -> None:
    """Refuse, before any work, an append whose settings or keys differ from the dataset's.

    Raises:
        DatasetFormatError: A writer setting differs from the one the dataset was written with.
        ValueError: The dataset has keys and ``key_fn`` is missing, or the reverse.
    """
    existing, url = output.existing, output.location.url
    if existing is None:
        return
    given = DatasetConfig(
        chunk_bytes=chunk_bytes,
        chunk_size=chunk_size,
        compression=compression,
        item_loader=(item_loader or default_item_loader()).name,
    )
    ours, recorded = given.core(), existing.config.core()
    different = [
        f"{key}={ours[key]!r} (the dataset has {recorded[key]!r})"
        for key in given.differences(existing.config, _WRITER_KEYS)
    ]
    if different:
        raise DatasetFormatError(
            f"mode='append' needs the settings the dataset was written with: "
            f"{'; '.join(different)}."
        )
    if existing.keys is not None and key_fn is None:
        raise ValueError(
            f"The dataset at {url} has a keys sidecar: pass its key_fn to mode='append' so the "
            f"new samples get keys too."
        )
    if existing.keys is None and key_fn is not None and existing.num_items:
        raise ValueError(
            f"The dataset at {url} has no keys sidecar, so its samples have no keys: call "
            f"build_keys_index({url!r}, key_fn) first, then append with key_fn."
        )


def prepare_output(
    output_dir: str | os.PathLike[str],
    mode: str | None,
    use_checkpoint: bool,
    *,
    storage_options: Mapping[str, Any] | None = None,
    command: str = "optimize",
) -> Output:
    """Lock the output and get it ready for a run in ``mode``.

    ``command`` names the writer (``"optimize"``, ``"write_dataset"``) in another writer's
    refusal.

    Raises:
        ValueError: ``mode`` is unknown, or the path is a file.
        OutputLockedError: Another writer is writing there.
        DatasetExistsError: ``mode=None`` and a dataset (or other files) are already there.
        DatasetFormatError: ``mode="append"`` to a dataset whose chunks cannot be extended.
    """
    if mode not in MODES:
        raise ValueError(
            f"The provided `mode` should be either `append` or `overwrite` (or None, to write a "
            f"new dataset); got mode={mode!r}."
        )
    location = resolve(output_dir, storage_options=storage_options)
    local = location.local_path
    created = local is not None and not os.path.exists(local)
    if local is not None:
        if os.path.exists(local) and not os.path.isdir(local):
            raise ValueError(f"output_dir {local} is a file; give a directory.")
        os.makedirs(local, exist_ok=True)
    lock = OutputLock(location, command)
    lock.acquire()
    try:
        output = _prepare(location, lock, mode, use_checkpoint)
    except BaseException:
        lock.release(keep_marker=lock.found_stale)
        if created and local is not None:
            with contextlib.suppress(OSError):
                os.rmdir(local)
        raise
    output.created = created
    return output


def _prepare(location: Location, lock: OutputLock, mode: str | None, resume: bool) -> Output:
    names = _listing(location)
    has_index = INDEX_FILENAME in names
    checkpoints = Checkpoints(location)
    resuming = resume and checkpoints.exist()
    ours = set(dataset_files(names)) | _OURS
    foreign = [name for name in names if name not in ours]
    leftovers = [name for name in dataset_files(names) if name != INDEX_FILENAME]
    evidence = lock.found_stale or resuming or bool(rank_index_names(names))
    if leftovers and not has_index and not evidence and mode != "overwrite":
        foreign = [*leftovers, *foreign]  # files named like chunks, but not left by a run
    if mode is None and has_index:
        raise DatasetExistsError(
            f"{location.url} already holds a dataset (index.json), and datasets are immutable. "
            f"HINT: If you want to append/overwrite to the existing dataset, use mode='append' "
            f"(adds the new samples after its own) or mode='overwrite' (replaces it); or write "
            f"to another location."
        )
    if foreign and mode != "overwrite":
        raise _refuse_foreign(location, foreign)
    write_dir = Path(location.local_path) if location.local_path else None
    if mode == "append" and has_index:
        existing = index_from_bytes(location.read(INDEX_FILENAME), location.join(INDEX_FILENAME))
        level = existing.config.extra.get("compression_level")
        if level not in (None, "chunk"):
            raise DatasetFormatError(
                f"{location.url} was written by LitData with compression_level={level!r}; "
                f"litdata cannot add chunks to it. Write a new dataset, or merge_datasets() two."
            )
        shards = rank_index_names(names) + writer_keys_names(names)
        _remove(location, shards)
        before = frozenset(names).difference(shards)
        # A resumable append numbers its chunks from the dataset's alone, so that a resumed
        # run continues the numbering its checkpoints recorded (over its own leftovers).
        starts = _chunk_starts(() if resume else before, existing)
        return Output(
            location, write_dir, lock, existing, starts, keep_on_failure=resume, _before=before
        )
    if mode == "overwrite" and not resume and write_dir is not None:
        staging = write_dir / STAGING
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        return Output(location, staging, lock, staged=True)
    if not resuming:  # leftovers of a failed run, or the dataset being overwritten in place
        removed = dataset_files(names)
        if removed:
            logger.info(
                "removing %d dataset files of an earlier run from %s", len(removed), location
            )
        _remove(location, removed)
        checkpoints.remove()  # they describe the leftovers just removed
    remaining = frozenset(_listing(location))
    return Output(location, write_dir, lock, keep_on_failure=resume, _before=remaining)
