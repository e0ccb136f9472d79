"""The items a dataset reads: a list of regions, each a range of one chunk's items.

A fresh dataset has one region per chunk, covering it. Subsampling, splitting and subsets
shorten, drop or repeat regions; everything else (the plan, random access) works on regions.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

__all__ = ["Region", "RegionIndex"]


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
        self.regions = list(regions)
        self._ends = list(accumulate(region.size for region in self.regions))

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def first(self, region: int) -> int:
        """The dataset position of region ``region``'s first item."""
        return self._ends[region] - self.regions[region].size

    def locate(self, index: int) -> tuple[int, int]:
        """The ``(chunk, item in chunk)`` of dataset position ``index`` (``0 <= index < len``)."""
        position = bisect_right(self._ends, index)
        region = self.regions[position]
        before = self._ends[position] - region.size
        return region.chunk, region.start + index - before
