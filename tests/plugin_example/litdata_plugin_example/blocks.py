"""``blocks``: a shuffle with an option: items move in blocks of ``size``, blocks in random order.

``StreamingDataset(..., shuffle="blocks:size=8")`` reads each chunk's items in runs of 8
consecutive items, the runs in a random order (friendlier to caches than a full shuffle).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import ClassVar


class BlockShuffle:
    """Chunks in a random order; each chunk's items in shuffled blocks of ``size``.

    Args:
        size: Items per block (a positive integer).
    """

    name: ClassVar[str] = "blocks"
    whole_chunks: ClassVar[bool] = False

    def __init__(self, size: int = 4) -> None:
        if not isinstance(size, int) or size < 1:
            raise ValueError(f"blocks: size must be a positive integer, got {size!r}")
        self.size = size

    def chunk_order(self, num_chunks: int, seed: int, epoch: int) -> Sequence[int]:
        """A seeded permutation of the chunks."""
        order = list(range(num_chunks))
        random.Random(f"{seed}-{epoch}").shuffle(order)
        return order

    def worker_chunk_order(
        self, chunks: Sequence[int], seed: int, epoch: int, worker: int
    ) -> Sequence[int]:
        """As dealt."""
        return chunks

    def item_order(self, chunk: int, num_items: int, seed: int, epoch: int) -> Sequence[int]:
        """Blocks of ``size`` consecutive items, in a seeded order."""
        starts = list(range(0, num_items, self.size))
        random.Random(f"{seed}-{epoch}-{chunk}").shuffle(starts)
        return [
            item for start in starts for item in range(start, min(start + self.size, num_items))
        ]
