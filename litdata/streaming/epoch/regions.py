"""The items a dataset reads: a list of regions, each a range of one chunk's items.

A fresh dataset has one region per chunk, covering it: held as the reader's arrays, with no
Python object per chunk (``RegionIndex.whole``). Subsampling, splitting and subsets shorten,
drop or repeat regions; everything else (the plan, random access) works on regions.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["Region", "RegionIndex"]

Int64s = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Region:
    """Items ``[start, end)`` of chunk ``chunk`` (a position in the index's chunk list)."""

    chunk: int
    start: int
    end: int

    @property
    def size(self) -> int:
        """The number of items."""
        return self.end - self.start


class RegionIndex:
    """Maps a dataset position to its region and item (``ds[i]``).

    Args:
        regions: The dataset's regions, in order.
    """

    def __init__(self, regions: Sequence[Region]) -> None:
        self._list: list[Region] | None = list(regions)
        count = len(self._list)
        #: Each region's chunk and first item (``None`` for whole chunks: chunk r, item 0).
        self.chunks: Int64s | None = np.fromiter((r.chunk for r in self._list), np.int64, count)
        self.starts: Int64s | None = np.fromiter((r.start for r in self._list), np.int64, count)
        #: Each region's number of items.
        self.sizes: Int64s = np.fromiter((r.size for r in self._list), np.int64, count)
        self._sums = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(self.sizes, out=self._sums[1:])
        self._views: tuple[memoryview, ...] | None = None
        self._length = int(self._sums[-1])

    @classmethod
    def whole_chunks(cls, sizes: Int64s, sums: Int64s) -> RegionIndex:
        """Every chunk, whole: ``sizes`` items each, ``sums`` their cumulative counts (from 0).

        The arrays are the reader's (mapped from the compact index): nothing per chunk is made.
        """
        index = cls.__new__(cls)
        index._list, index.chunks, index.starts = None, None, None
        index.sizes, index._sums, index._views = sizes, sums, None
        index._length = int(sums[-1])
        return index

    @property
    def whole(self) -> bool:
        """Whether these are every chunk, whole (``whole_chunks``)."""
        return self.chunks is None

    @property
    def regions(self) -> list[Region]:
        """The regions, as objects (made on first use: a subset or split needs them)."""
        if self._list is None:
            self._list = [Region(chunk, 0, size) for chunk, size in enumerate(self.sizes.tolist())]
        return self._list

    def region(self, position: int) -> Region:
        """Region ``position``."""
        if self.chunks is None or self.starts is None:
            return Region(position, 0, int(self.sizes[position]))
        start = int(self.starts[position])
        return Region(int(self.chunks[position]), start, start + int(self.sizes[position]))

    def __len__(self) -> int:
        return self._length

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_views": None}

    def _scalars(self) -> tuple[memoryview, ...]:
        """Memoryviews of the arrays: a bisect and an item of one cost what a list's do."""
        if self._views is None:
            arrays = [self._sums, self._sums[1:]]
            if self.chunks is not None and self.starts is not None:
                arrays += [self.chunks, self.starts]
            self._views = tuple(np.ascontiguousarray(a, np.int64).data for a in arrays)
        return self._views

    def first(self, region: int) -> int:
        """The dataset position of region ``region``'s first item."""
        return int(self._sums[region])

    def locate(self, index: int) -> tuple[int, int]:
        """The ``(chunk, item in chunk)`` of dataset position ``index`` (``0 <= index < len``)."""
        sums, ends, *chosen = self._views or self._scalars()
        position = bisect_right(ends, index)
        item = index - sums[position]
        if not chosen:
            return position, item
        chunks, starts = chosen
        return chunks[position], starts[position] + item
