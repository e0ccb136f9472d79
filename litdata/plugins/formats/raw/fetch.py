"""``FileFetcher``: the bytes of many files at once, with a bounded number of requests in flight.

Local files are read in the calling thread (threads only add overhead to page-cache reads).
Remote files are read with one GET each (a ranged read of the whole object, its size being
known from the index), or, from ``range_parallel_threshold`` bytes on, as ranges of
``range_chunk_size`` fetched side by side. With ``cache_files=True`` each file is also kept
(atomically) under the cache folder, and read from there next time. The thread pool is created
lazily in each process (never shared across a fork) and never pickled.
"""

from __future__ import annotations

import hashlib
import os
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from litdata.core import config
from litdata.core.dataset_file import read_regular
from litdata.core.errors import DatasetFormatError, StorageError
from litdata.core.guards import is_member
from litdata.core.location import Location
from litdata.core.publish import publish_bytes
from litdata.engine.boundary.resolve import relocate
from litdata.engine.cache.directory import make_folder
from litdata.plugins.formats.raw.indexer import FileMetadata

__all__ = ["FileFetcher", "default_budget"]

#: Requests in flight per process when the files are small (latency-bound).
_SMALL_FILE_BUDGET = 64
#: Bytes in flight per process the bandwidth model aims for, with larger files.
_BYTES_IN_FLIGHT = 64 * 1024 * 1024


def default_budget(files: Sequence[FileMetadata], processes: int) -> int:
    """Requests one process keeps in flight: many for small files, fewer for large ones.

    Args:
        files: The dataset's files (their median size decides).
        processes: How many processes fetch at once (DataLoader workers); the budget is shared.
    """
    median = statistics.median(file.size for file in files) if files else 0
    if median < 1024 * 1024:
        total = _SMALL_FILE_BUDGET * 2
    else:
        total = max(8, _BYTES_IN_FLIGHT // max(1, int(median)))
    return max(4, min(_SMALL_FILE_BUDGET, total // max(1, processes)))


class FileFetcher:
    """Fetches the bytes (or a local path) of raw files.

    Args:
        location: Where the files are (their paths are inside it).
        budget: Requests in flight at most (``None``: chosen from the files, per process).
        cache_folder: Keep fetched files here (``None``: keep nothing).
        range_parallel_threshold: Files of at least this size are fetched as parallel ranges
            (0: never).
        range_chunk_size: The size of those ranges.
        timeout: Seconds a batch may take (raised for large files, 3 s per 25 MB).
    """

    def __init__(
        self,
        location: Location,
        budget: int | None,
        cache_folder: Path | None,
        *,
        range_parallel_threshold: int = 0,
        range_chunk_size: int = 8 * 1024 * 1024,
        timeout: float = 120.0,
    ) -> None:
        self.location = location
        self.timeout = timeout
        self.budget = budget
        self.cache_folder = cache_folder
        self.range_parallel_threshold = range_parallel_threshold
        self.range_chunk_size = max(1, range_chunk_size)
        self._pool: ThreadPoolExecutor | None = None
        self._pid = 0
        self._local = location.local_path is not None
        self._ranged = not self._local and location.storage.ranged

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_pool": None, "_pid": 0}

    def pool(self, files: Sequence[FileMetadata]) -> ThreadPoolExecutor:
        """This process's thread pool (sized by the budget)."""
        if self._pool is None or self._pid != os.getpid():
            budget = self.budget
            if budget is None:
                from litdata.streaming.epoch.topology import worker_and_count

                budget = default_budget(files, worker_and_count()[1])
            self._pool = ThreadPoolExecutor(max(1, budget), thread_name_prefix="litdata-raw")
            self._pid = os.getpid()
        return self._pool

    def cached_path(self, file: FileMetadata) -> Path | None:
        """Where ``file`` is kept in the cache (``None`` without ``cache_files``)."""
        if self.cache_folder is None:
            return None
        relative = file.path[len(self.location.url) :].lstrip("/")
        if not is_member(relative):
            relative = hashlib.md5(file.path.encode(), usedforsecurity=False).hexdigest()
        return self.cache_folder / relative

    def fetch(self, files: Sequence[FileMetadata], as_paths: bool = False) -> list[Any]:
        """The bytes (or local paths) of ``files``, in order, fetched concurrently.

        Raises:
            FileNotFoundError: A file is gone.
            OSError: A file could not be read (the message names it).
        """
        if self._local:
            return [self._one(file, as_paths) for file in files]
        pool = self.pool(files)
        futures: list[Future[Any] | list[Future[bytes]]] = []
        for file in files:
            ranges = self._ranges(file)
            if ranges and not as_paths and self._kept(file) is None:
                futures.append(
                    [pool.submit(self._read_range, file, start, end) for start, end in ranges]
                )
            else:
                futures.append(pool.submit(self._one, file, as_paths))
        largest = max((file.size for file in files), default=0)
        deadline = time.monotonic() + max(self.timeout, 3 * largest / 25e6)
        results = []
        for file, future in zip(files, futures, strict=True):
            parts = future if isinstance(future, list) else [future]
            try:
                values = [part.result(max(0.0, deadline - time.monotonic())) for part in parts]
            except TimeoutError:
                for pending in futures:
                    for part in pending if isinstance(pending, list) else [pending]:
                        part.cancel()
                raise TimeoutError(
                    f"Fetching {file.path} took longer than the batch's "
                    f"{self.timeout:.0f} s download_timeout; the storage is unreachable or slow."
                ) from None
            if isinstance(future, list):
                data = b"".join(values)
                self._keep(file, data)
                results.append(data)
            else:
                results.append(values[0])
        return results

    def _ranges(self, file: FileMetadata) -> list[tuple[int, int]]:
        threshold = self.range_parallel_threshold
        if not self._ranged or not threshold or file.size < threshold:
            return []
        step = self.range_chunk_size
        return [(start, min(start + step, file.size)) for start in range(0, file.size, step)]

    def _kept(self, file: FileMetadata) -> Path | None:
        path = self.cached_path(file)
        if path is not None and path.is_file() and path.stat().st_size == file.size:
            return path
        return None

    def _keep(self, file: FileMetadata, data: bytes) -> None:
        path = self.cached_path(file)
        if path is not None:
            make_folder(path.parent)
            publish_bytes(path, data, mode=config.cache_mode())

    def _read_range(self, file: FileMetadata, start: int, end: int) -> bytes:
        return self.location.storage.read_range(file.path, start, end)

    def _one(self, file: FileMetadata, as_paths: bool) -> Any:
        kept = self._kept(file)
        if kept is not None:
            return str(kept) if as_paths else kept.read_bytes()
        data = self._read(file)
        self._keep(file, data)
        if as_paths:
            return str(self.cached_path(file))
        return data

    def _read(self, file: FileMetadata) -> bytes:
        """The file's bytes, refused when it is not the size the listing recorded.

        Raises:
            FileNotFoundError: It is gone.
            DatasetFormatError: It grew or shrank since the listing.
            StorageError: A remote read kept failing (an object that shrank: cut short).
        """
        try:
            if self._local:
                data = read_regular(file.path)
            elif not file.size:
                data = b""
            elif self._ranged:
                data = self._read_range(file, 0, file.size)
            else:
                folder, _, name = file.path.rpartition("/")
                data = relocate(self.location, folder).read_file(name)  # a scratch file
        except FileNotFoundError:
            raise FileNotFoundError(
                f"{file.path} is listed in the raw index but is gone. Pass "
                f"recompute_index=True to list the files again."
            ) from None
        except StorageError as error:
            raise StorageError(
                f"{error} If {file.path} changed since the raw index listed it ({file.size:,} "
                f"bytes), pass recompute_index=True to list the files again."
            ) from error
        if len(data) != file.size:
            raise DatasetFormatError(
                f"{file.path} has {len(data):,} bytes, but the raw index listed it with "
                f"{file.size:,}: it changed since the files were listed. Pass "
                f"recompute_index=True to list them again."
            )
        return data
