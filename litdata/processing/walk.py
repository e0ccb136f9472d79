"""``walk``: list a large local tree with threads, like ``os.walk`` (LitData's ``litdata.walk``)."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["walk"]

Entry = tuple[str, list[str], list[str]]


def _list(folder: str) -> Entry:
    dirnames: list[str] = []
    filenames: list[str] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            (dirnames if entry.is_dir() else filenames).append(entry.name)
    return folder, sorted(dirnames), sorted(filenames)


class walk:  # LitData's name: a class used like the function os.walk
    """Yield ``(dirpath, dirnames, filenames)`` for every folder under ``folder``.

    Folders are listed by ``max_workers`` threads at once (network file systems answer a
    listing slowly, so listing many in parallel is much faster), and yielded breadth-first,
    as LitData's walk yields them, in sorted order: a folder, then its subfolders by name,
    level by level, with names sorted within each, whichever listing finishes first. As with
    ``os.walk``, removing names from ``dirnames`` skips those subfolders.

    Args:
        folder: The local root folder.
        max_workers: Listing threads (the CPU count by default).
    """

    def __init__(self, folder: str | os.PathLike[str], max_workers: int | None = None) -> None:
        self.folder = os.fspath(folder)
        self.max_workers = max_workers or os.cpu_count() or 1

    def __iter__(self) -> Iterator[Entry]:
        with ThreadPoolExecutor(self.max_workers, thread_name_prefix="litdata-walk") as pool:
            queued: deque[Future[Entry]] = deque([pool.submit(_list, self.folder)])
            try:
                while queued:
                    dirpath, dirnames, filenames = queued.popleft().result()
                    yield dirpath, dirnames, filenames  # the caller may prune dirnames
                    queued.extend(
                        pool.submit(_list, os.path.join(dirpath, name)) for name in dirnames
                    )
            finally:  # a caller that stops early waits for no more listings
                for future in queued:
                    future.cancel()
