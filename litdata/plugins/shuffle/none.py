"""``none``: chunks and items in index order (``shuffle=False``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

__all__ = ["NoShuffle"]


class NoShuffle:
    """Every worker reads a contiguous run of the dataset, in order."""

    name: ClassVar[str] = "none"
    whole_chunks: ClassVar[bool] = False

    def chunk_order(self, num_chunks: int, seed: int, epoch: int) -> Sequence[int]:
        """Index order."""
        return range(num_chunks)

    def worker_chunk_order(
        self, chunks: Sequence[int], seed: int, epoch: int, worker: int
    ) -> Sequence[int]:
        """As dealt."""
        return chunks

    def item_order(self, chunk: int, num_items: int, seed: int, epoch: int) -> Sequence[int]:
        """Index order."""
        return range(num_items)
