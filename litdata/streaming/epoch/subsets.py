"""Choosing which items a dataset reads: subsample, upsample, split and subset, as regions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from litdata.streaming.epoch.regions import Region, RegionIndex

__all__ = ["split_regions", "subsample_regions", "subset_regions"]


def _take(regions: Sequence[Region], count: int) -> list[Region]:
    """The first ``count`` items of ``regions`` (the last region shortened)."""
    taken: list[Region] = []
    for region in regions:
        if count <= 0:
            break
        size = min(region.size, count)
        taken.append(Region(region.chunk, region.start, region.start + size))
        count -= size
    return taken


def _shuffled(regions: Sequence[Region], rng: np.random.RandomState | None) -> list[Region]:
    if rng is None:
        return list(regions)
    return [regions[i] for i in rng.permutation(len(regions))]


def subsample_regions(
    regions: Sequence[Region], fraction: float, seed: int, shuffle: bool
) -> list[Region]:
    """``fraction`` of the items: whole copies of the dataset for each unit, then a share.

    With ``shuffle``, each copy and the share take the chunks in a random order (seeded by
    ``seed``), so the share is spread over the dataset; otherwise the share is its beginning.

    Raises:
        ValueError: ``fraction`` is not a positive float.
    """
    if not isinstance(fraction, float) or not fraction > 0:
        raise ValueError(f"subsample must be a positive float (e.g. 0.1 or 2.5), got {fraction!r}")
    rng = np.random.RandomState([seed]) if shuffle else None
    total = sum(region.size for region in regions)
    chosen: list[Region] = []
    while fraction >= 1:
        chosen.extend(_shuffled(regions, rng))
        fraction -= 1
    if fraction > 0:
        chosen.extend(_take(_shuffled(regions, rng), int(total * fraction)))
    return chosen


def split_regions(
    regions: Sequence[Region], splits: Sequence[float], seed: int, shuffle: bool
) -> list[list[Region]]:
    """Disjoint consecutive shares of the items, ``int(total * split)`` each.

    Raises:
        ValueError: A split is not a float in [0, 1], or the splits add up to more than 1.
    """
    if not splits or any(not isinstance(s, float) or not 0 <= s <= 1 for s in splits):
        raise ValueError(f"splits must be floats between 0 and 1, got {list(splits)!r}")
    if sum(splits) > 1 + 1e-9:
        raise ValueError(
            f"splits add up to {sum(splits):g}, more than the whole dataset; they must add up "
            f"to at most 1 (e.g. [0.8, 0.1, 0.1])."
        )
    ordered = _shuffled(regions, np.random.RandomState([seed]) if shuffle else None)
    total = sum(region.size for region in regions)
    parts, offset = [], 0
    for split in splits:
        count = int(total * split)
        parts.append(_take(_skip(ordered, offset), count))
        offset += count
    return parts


def _skip(regions: Sequence[Region], count: int) -> list[Region]:
    left: list[Region] = []
    for region in regions:
        if count >= region.size:
            count -= region.size
            continue
        left.append(Region(region.chunk, region.start + count, region.end))
        count = 0
    return left


def subset_regions(index: RegionIndex, positions: Sequence[int]) -> list[Region]:
    """The items at ``positions`` (in that order), consecutive runs merged into regions.

    Raises:
        ValueError: A position is out of range.
    """
    count = len(index)
    regions: list[Region] = []
    for position in positions:
        if not isinstance(position, int | np.integer) or not 0 <= position < count:
            raise ValueError(f"subset index {position!r} is out of range for {count} items.")
        chunk, item = index.locate(int(position))
        last = regions[-1] if regions else None
        if last is not None and last.chunk == chunk and last.end == item:
            regions[-1] = Region(chunk, last.start, item + 1)
        else:
            regions.append(Region(chunk, item, item + 1))
    return regions
