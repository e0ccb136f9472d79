"""``window``: whole chunks per worker, shuffled within a sliding window.

For in-place reads on network and parallel filesystems (NFS, Lustre, GPFS...): each worker
reads whole chunks from a contiguous stripe of the dataset, so the filesystem sees long
sequential reads, and the order is mixed only within a window of ``LITDATA_POSIX_SHUFFLE_WINDOW``
(default 16) positions, of the worker's chunks and of each chunk's items. The window is an
option: ``shuffle="window:size=4"``.
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
    """Whole chunks in stripes, window-shuffled per worker and within each chunk.

    Args:
        size: The window; ``LITDATA_POSIX_SHUFFLE_WINDOW`` (default 16) when not given. A
            window of 1 keeps the stripes' order.
    """

    name: ClassVar[str] = "window"
    whole_chunks: ClassVar[bool] = True

    def __init__(self, size: int | None = None) -> None:
        if size is None:
            size = config.integer("LITDATA_POSIX_SHUFFLE_WINDOW", 16, minimum=1)
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError(f"The window shuffle's size must be a positive integer, got {size!r}.")
        self.size = size

    def chunk_order(self, num_chunks: int, seed: int, epoch: int) -> Sequence[int]:
        """Index order: stripes stay contiguous."""
        return range(num_chunks)

    def worker_chunk_order(
        self, chunks: Sequence[int], seed: int, epoch: int, worker: int
    ) -> Sequence[int]:
        """The worker's chunks, window-shuffled with ``(seed, epoch, worker)``."""
        return window_shuffle(chunks, self.size, np.random.default_rng([seed, epoch, worker, 2]))

    def item_order(self, chunk: int, num_items: int, seed: int, epoch: int) -> Sequence[int]:
        """The chunk's items, window-shuffled with ``(seed, epoch, chunk)``."""
        rng = np.random.default_rng([seed, epoch, chunk, 3])
        return window_shuffle(range(num_items), self.size, rng)
