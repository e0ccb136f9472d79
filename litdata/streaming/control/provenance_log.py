"""The provenance log: for each batch a rank delivers, its epoch, its step and its samples' ids.

One file per rank, ``rank-<R>.ids`` in the log's folder, appended to by every run (a resumed
run adds the steps after the resume). The file starts with ``MAGIC`` (7 bytes); then one record
per batch: ``epoch`` (u32), ``step`` (u64), ``n`` (u32), little-endian, then the ``n`` dataset
indices (u16) and the ``n`` sample indices (u64). A reader trusts none of it: every count is
checked against the bytes that are really there.
"""

from __future__ import annotations

import os
import re
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

import numpy as np

from litdata.streaming.workers.batching import BatchIds, Ids

__all__ = ["MAGIC", "LogRecord", "ProvenanceLog", "find_step", "read_log"]

MAGIC = b"LDIDS1\n"
_HEAD = struct.Struct("<IQI")
_NAME = re.compile(r"rank-(\d{1,6})\.ids")
#: Dataset indices are stored as u16: a mixture of more datasets cannot be logged.
MAX_DATASETS = 1 << 16
#: The log's write buffer, and how long a record may wait in it.
BUFFER_BYTES = 1 << 20
FLUSH_SECONDS = 1.0


class LogRecord(NamedTuple):
    """One batch of the log."""

    rank: int
    epoch: int
    step: int
    ids: Ids


class ProvenanceLog:
    """Appends one rank's batches to ``directory/rank-<rank>.ids``.

    Args:
        directory: The log's folder (created if missing).
        rank: The rank whose batches these are.
        num_datasets: How many datasets the batches come from.

    Raises:
        ValueError: Too many datasets for the log (65,536 or more).
    """

    def __init__(self, directory: str | os.PathLike[str], rank: int, num_datasets: int) -> None:
        if num_datasets > MAX_DATASETS:
            raise ValueError(
                f"A provenance log stores dataset indices below {MAX_DATASETS}; this loader "
                f"reads {num_datasets} datasets."
            )
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"rank-{rank}.ids"
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        self._file: BinaryIO = self.path.open("ab", buffering=BUFFER_BYTES)
        if fresh:
            self._file.write(MAGIC)
        self._flushed = time.monotonic()

    def write(self, epoch: int, step: int, ids: BatchIds) -> None:
        """Append the batch of ``step`` in ``epoch`` (``ids``: an ``(n, 2)`` array).

        Records reach the file at least every ``FLUSH_SECONDS`` (a killed run loses at most
        the last second of its log), in large writes rather than one per batch.
        """
        head = _HEAD.pack(epoch, step, len(ids))
        datasets, samples = ids[:, 0].astype("<u2"), ids[:, 1].astype("<u8")
        self._file.write(b"".join((head, datasets.tobytes(), samples.tobytes())))
        now = time.monotonic()
        if now - self._flushed >= FLUSH_SECONDS:
            self._file.flush()
            self._flushed = now

    def close(self) -> None:
        """Write what is buffered and close the file."""
        self._file.close()


def read_log(path: str | os.PathLike[str]) -> Iterator[LogRecord]:
    """Every record of one rank's log file.

    Raises:
        ValueError: The file is not a provenance log, or a record is cut short (the message
            names the file and the byte offset).
    """
    file = Path(path)
    match = _NAME.fullmatch(file.name)
    if match is None:
        raise ValueError(f"{file} is not a provenance log file (rank-<R>.ids).")
    rank = int(match.group(1))
    data = file.read_bytes()
    if not data.startswith(MAGIC):
        raise ValueError(f"{file} is not a provenance log: it does not start with {MAGIC!r}.")
    offset = len(MAGIC)
    while offset < len(data):
        if len(data) - offset < _HEAD.size:
            raise ValueError(f"{file}: a record is cut short at byte {offset} (an unfinished run).")
        epoch, step, count = _HEAD.unpack_from(data, offset)
        body = offset + _HEAD.size
        end = body + count * 10
        if end > len(data):
            raise ValueError(
                f"{file}: the record at byte {offset} says {count} samples, more than the "
                f"{len(data) - body} bytes left hold (an unfinished run, or not a log)."
            )
        datasets = np.frombuffer(data, "<u2", count, body)
        samples = np.frombuffer(data, "<u8", count, body + 2 * count)
        ids = list(zip(datasets.tolist(), samples.tolist(), strict=True))
        yield LogRecord(rank, epoch, step, ids)
        offset = end


def find_step(
    directory: str | os.PathLike[str], step: int, epoch: int | None = None
) -> list[LogRecord]:
    """The records of ``step`` on every rank of the log in ``directory``, rank by rank.

    ``epoch`` defaults to the last epoch each rank's log holds that step in (a later run's
    record of a step wins over an earlier one's).

    Raises:
        FileNotFoundError: ``directory`` holds no provenance log.
        ValueError: A log file is damaged (see ``read_log``).
    """
    ranks = {}
    for path in Path(directory).glob("rank-*.ids"):
        match = _NAME.fullmatch(path.name)
        if match is not None:
            ranks[int(match.group(1))] = path
    files = [ranks[rank] for rank in sorted(ranks)]
    if not files:
        raise FileNotFoundError(f"{directory} holds no provenance log (rank-<R>.ids files).")
    found = []
    for file in files:
        matches = [
            record
            for record in read_log(file)
            if record.step == step and (epoch is None or record.epoch == epoch)
        ]
        if matches:
            last_epoch = max(record.epoch for record in matches)
            found.append([record for record in matches if record.epoch == last_epoch][-1])
    return found
