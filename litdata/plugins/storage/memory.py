"""``memory``: objects in this process's memory (fsspec's memory filesystem).

For tests and examples: ``memory://bucket/dataset`` behaves like an object store that is not
read in place, so datasets there go through the cache as remote ones do. The store is one per
process; DataLoader workers started with ``fork`` see what was written before they started.
"""

from __future__ import annotations

from typing import ClassVar

from litdata.plugins.storage._fsspec import FsspecStorage

__all__ = ["MemoryStorage"]


class MemoryStorage(FsspecStorage):
    """The ``memory://`` scheme."""

    name: ClassVar[str] = "memory"
    protocol: ClassVar[str] = "memory"

    def path(self, url: str) -> str:
        """``memory://bucket/key`` is ``/bucket/key`` in the memory filesystem."""
        return "/" + super().path(url).lstrip("/")
