"""``walk``: list a large local tree with threads, like ``os.walk`` (LitData's ``litdata.walk``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

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
    listing slowly, so listing many in parallel is much faster), so the order is not
    ``os.walk``'s: a folder comes before its subfolders, and names are sorted within one.
    As with ``os.walk``, removing names from ``dirnames`` skips those subfolders.

    Args:
        folder: The local root folder.
        max_workers: Listing threads (the CPU count by default).
    """

    def __init__(self, folder: str | os.PathLike[str], max_workers: int | None = None) -> None:
        self.folder = os.fspath(folder)
        self.max_workers = max_workers or os.cpu_count() or 1

    def __iter__(self) -> Iterator[Entry]:
        with ThreadPoolExecutor(self.max_workers, thread_name_prefix="litdata-walk") as pool:
            pending: set[Future[Entry]] = {pool.submit(_list, self.folder)}
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    dirpath, dirnames, filenames = future.result()
                    yield dirpath, dirnames, filenames  # the caller may prune dirnames
                    pending.update(
                        pool.submit(_list, os.path.join(dirpath, name)) for name in dirnames
                    )
