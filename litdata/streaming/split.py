"""``train_test_split``: disjoint datasets from one, by fractions of its items."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from litdata.core.errors import LitdataWarning
from litdata.streaming.dataset import StreamingDataset
from litdata.streaming.epoch.subsets import split_regions

__all__ = ["train_test_split"]


def train_test_split(
    streaming_dataset: StreamingDataset,
    splits: Sequence[float],
    seed: int = 42,
    shuffle: bool = True,
) -> list[StreamingDataset]:
    """Split a dataset into disjoint datasets of ``int(len * split)`` items each.

    Args:
        streaming_dataset: The dataset to split.
        splits: The fraction of the items each part gets (floats that add up to at most 1).
        seed: Seeds the shuffle of the chunks before splitting.
        shuffle: Deal whole chunks in a random order (else the parts follow the index order).

    Raises:
        ValueError: A split is not a float in [0, 1], or they add up to more than 1.
    """
    if not isinstance(streaming_dataset, StreamingDataset):
        raise TypeError(
            f"train_test_split splits a StreamingDataset, got {type(streaming_dataset).__name__}"
        )
    parts = split_regions(streaming_dataset.regions, splits, seed, shuffle)
    for split, part in zip(splits, parts, strict=True):
        if not part:
            warnings.warn(
                f"The split {split} of train_test_split has no items.", LitdataWarning, stacklevel=2
            )
    return [streaming_dataset.with_regions(part) for part in parts]
