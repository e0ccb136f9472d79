"""``chunks``: litdata's native format (LitData's ``index.json`` + chunk files)."""

from __future__ import annotations

from typing import ClassVar

from litdata.core.index import DatasetIndex, load_index

__all__ = ["ChunksFormat"]


class ChunksFormat:
    """Datasets written by ``optimize`` (ours or LitData's)."""

    name: ClassVar[str] = "chunks"

    def read_index(self, root: str) -> DatasetIndex:
        """Read ``<root>/index.json``."""
        return load_index(root)
