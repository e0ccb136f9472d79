"""``full``: a new permutation of the chunks, and of the items inside each, every epoch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

import numpy as np

__all__ = ["FullShuffle"]


class FullShuffle:
    """Chunks dealt in a random order; each chunk's items read in a random order.

    Both permutations are seeded with ``(seed, epoch[, chunk])``: the same seed and epoch give
    the same order on every rank, and each epoch a different one.
    """

    name: ClassVar[str] = "full"
    whole_chunks: ClassVar[bool] = False

    def chunk_order(self, num_chunks: int, seed: int, epoch: int) -> Sequence[int]:
        """A permutation seeded with ``(seed, epoch)`` (a numpy array: checked without copies)."""
        return cast("Sequence[int]", np.random.default_rng([seed, epoch]).permutation(num_chunks))

    def worker_chunk_order(
        self, chunks: Sequence[int], seed: int, epoch: int, worker: int
    ) -> Sequence[int]:
        """As dealt (the dealing order is already random)."""
        return chunks

    def item_order(self, chunk: int, num_items: int, seed: int, epoch: int) -> Sequence[int]:
        """A permutation seeded with ``(seed, epoch, chunk)``."""
        rng = np.random.default_rng([seed, epoch, chunk, 1])
        return cast("Sequence[int]", rng.permutation(num_items))
