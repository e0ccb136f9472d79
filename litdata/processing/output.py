"""The output directory of ``optimize``: modes, chunk numbering, publishing, cleaning up.

- ``mode=None``: a directory that already holds a dataset is refused; leftovers of a failed
  run (chunk files, per-worker indexes) are removed, unless resuming from checkpoints.
- ``mode="overwrite"``: the new dataset is written into a staging folder and swapped in only
  when complete, so a failing run leaves the old dataset intact.
- ``mode="append"``: new chunks continue each writer rank's numbering after the existing
  chunks, and ``index.json`` lists the old chunks first.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from litdata.core.chunks.codecs import parse_chunk_filename
from litdata.core.errors import DatasetExistsError, DatasetFormatError
from litdata.core.index import (
    INDEX_FILENAME,
    DatasetIndex,
    load_index,
    merge_rank_indexes,
    rank_index_files,
)
from litdata.processing.checkpoint import CHECKPOINT_DIR
from litdata.processing.run import make_output_dir

__all__ = ["MODES", "Output", "prepare_output"]

logger = logging.getLogger(__name__)

MODES = (None, "append", "overwrite")
STAGING = ".litdata-staging"


def _dataset_files(directory: Path, names: Collection[str]) -> list[Path]:
    """The chunk files and indexes (complete or per-worker) among ``names``, ``index.json`` first.

    Args:
        directory: The directory the names are in.
        names: File names in ``directory`` (all of them, or those a run added).
    """
    files = [directory / name for name in names if parse_chunk_filename(name)]
    files.extend(rank_index_files(directory, names))
    return [directory / INDEX_FILENAME, *files] if INDEX_FILENAME in names else files


def _remove_checkpoints(directory: Path) -> None:
    shutil.rmtree(directory / CHECKPOINT_DIR, ignore_errors=True)


def _remove(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


@dataclass
class Output:
    """Where one run writes, and how it becomes a dataset.

    Attributes:
        directory: The dataset directory.
        write_dir: Where the workers write (the directory, or a staging folder).
        existing: The dataset being appended to.
        chunk_starts: The first chunk number of each writer rank (append).
        keep_on_failure: Leave partial output for a resume (``use_checkpoint``).
    """

    directory: Path
    write_dir: Path
    existing: DatasetIndex | None = None
    chunk_starts: dict[int, int] = field(default_factory=dict)
    keep_on_failure: bool = False
    _before: frozenset[str] = frozenset()

    def publish(self) -> DatasetIndex:
        """Merge the workers' indexes into ``index.json`` (swapping a staged dataset in).

        The dataset is then complete, so its checkpoints (if any) are removed.
        """
        if self.write_dir != self.directory:
            # index.json goes first: never a stale index over missing chunks.
            _remove(_dataset_files(self.directory, os.listdir(self.directory)))
            for path in self.write_dir.iterdir():
                os.replace(path, self.directory / path.name)
            shutil.rmtree(self.write_dir, ignore_errors=True)
        index = merge_rank_indexes(self.directory, existing=self.existing)
        _remove_checkpoints(self.directory)
        return index

    def discard(self) -> None:
        """Remove what a failed run wrote (unless it is to be resumed)."""
        if self.keep_on_failure:
            return
        if self.write_dir != self.directory:
            shutil.rmtree(self.write_dir, ignore_errors=True)
            return
        added = [name for name in os.listdir(self.directory) if name not in self._before]
        _remove(_dataset_files(self.directory, added))


def _chunk_starts(names: Collection[str], existing: DatasetIndex) -> dict[int, int]:
    """The next free chunk number of each rank, past the dataset's chunks and stray files."""
    starts: dict[int, int] = {}
    for name in [*(chunk.filename for chunk in existing.chunks), *names]:
        parsed = parse_chunk_filename(name)
        if parsed:
            rank, index = parsed
            starts[rank] = max(starts.get(rank, 0), index + 1)
    return starts


def prepare_output(
    output_dir: str | os.PathLike[str], mode: str | None, use_checkpoint: bool
) -> Output:
    """Get the output directory ready for a run in ``mode``.

    Raises:
        ValueError: ``mode`` is unknown, or the path is a file.
        DatasetExistsError: ``mode=None`` and a dataset is already there.
        DatasetFormatError: ``mode="append"`` to a dataset whose chunks cannot be extended.
    """
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is not valid: use None, 'append' or 'overwrite'.")
    directory = make_output_dir(output_dir)
    names = os.listdir(directory)
    resuming = use_checkpoint and (directory / CHECKPOINT_DIR).is_dir()
    has_index = (directory / INDEX_FILENAME).exists()
    if mode is None and has_index:
        raise DatasetExistsError(
            f"{directory} already holds a dataset (index.json). Datasets are immutable: use "
            f"mode='append' to add samples, mode='overwrite' to replace it, or another directory."
        )
    if mode == "append" and has_index:
        existing = load_index(directory)
        level = existing.config.extra.get("compression_level")
        if level not in (None, "chunk"):
            raise DatasetFormatError(
                f"{directory} was written by LitData with compression_level={level!r}; litdata "
                f"cannot add chunks to it. Write a new dataset, or merge_datasets() two."
            )
        shards = rank_index_files(directory, names)
        _remove(shards)
        before = frozenset(names).difference(shard.name for shard in shards)
        starts = _chunk_starts(before, existing)
        return Output(directory, directory, existing, starts, _before=before)
    if mode == "overwrite" and not use_checkpoint:
        staging = directory / STAGING
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        return Output(directory, staging)
    if not resuming:  # leftovers of a failed run, or the dataset being overwritten in place
        leftovers = _dataset_files(directory, names)
        if leftovers:
            logger.info("removing %d files of an earlier run from %s", len(leftovers), directory)
        _remove(leftovers)
        _remove_checkpoints(directory)  # they describe the leftovers just removed
    return Output(directory, directory, keep_on_failure=use_checkpoint)
