"""``window``: whole chunks per worker, shuffled within a sliding window.

For in-place reads on network and parallel filesystems (NFS, Lustre, GPFS...): each worker
reads whole chunks from a contiguous stripe of the dataset, so the filesystem sees long
sequential reads, and the order is mixed only within a window of ``LITDATA_POSIX_SHUFFLE_WINDOW``
(default 16) positions, of the worker's chunks and of each chunk's items.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from litdata.core import config

__all__ = ["WindowShuffle", "window_shuffle"]


def window_shuffle(values: Sequence[int], window: int, rng: np.random.Generator) -> list[int]:
    """Swap each position with one at most ``window - 1`` positions later."""
    result = list(values)
    if window <= 1:
        return result
    count = len(result)
    targets = rng.integers(0, window, size=max(count - 1, 0))
    for i in range(count - 1):
        j = min(i + int(targets[i]), count - 1)
        result[i], result[j] = result[j], result[i]
    return result


class WindowShuffle:
    """Whole chunks in stripes, window-shuffled per worker and within each chunk."""

    name: ClassVar[str] = "window"
    whole_chunks: ClassVar[bool] = True

    def __init__(self, window: int | None = None) -> None:
        self.window = config.shuffle_window() if window is None else max(1, window)

    def chunk_order(self, num_chunks: int, seed: int, epoch: int) -> Sequence[int]:
        """Index order: stripes stay contiguous."""
        return range(num_chunks)

    def worker_chunk_order(
        self, chunks: Sequence[int], seed: int, epoch: int, worker: int
    ) -> Sequence[int]:
        """The worker's chunks, window-shuffled with ``(seed, epoch, worker)``."""
        return window_shuffle(chunks, self.window, np.random.default_rng([seed, epoch, worker, 2]))

    def item_order(self, chunk: int, num_items: int, seed: int, epoch: int) -> Sequence[int]:
        """The chunk's items, window-shuffled with ``(seed, epoch, chunk)``."""
        rng = np.random.default_rng([seed, epoch, chunk, 3])
        return window_shuffle(range(num_items), self.window, rng)
