"""``ChunkedIndex``: an item named by its global index and its chunk (LitData's read request).

Iteration asks ``dataset[ChunkedIndex(...)]`` for each item when a subclass overrides
``__getitem__``, so the override sees every streamed item, as in LitData.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ChunkedIndex"]


@dataclass(frozen=True)
class ChunkedIndex:
    """One item: its global index in the dataset and the chunk holding it.

    Attributes:
        index: The item's index in the whole dataset (all chunks, in order).
        chunk_index: The position of its chunk in ``index.json``.
        chunk_size: The items in that chunk, when known.
        chunk_indexes: Chunks the reader will need next (a prefetch hint).
        is_last_index: Whether it is the last item this worker reads this epoch.
    """

    index: int
    chunk_index: int
    chunk_size: int | None = None
    chunk_indexes: list[int] | None = None
    is_last_index: bool = False
