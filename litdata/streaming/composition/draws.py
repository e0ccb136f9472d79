"""The weighted draws of ``CombinedStreamingDataset``, addressable by draw number.

Draw ``t`` of a worker is a function of ``(seed, epoch, worker, t)`` alone, so a resumed worker
continues the exact sequence without replaying it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

__all__ = ["Mixer"]

_BLOCK = 4096


@lru_cache(maxsize=8)
def _block(seed: int, epoch: int, worker: int, block: int) -> list[float]:
    rng = np.random.default_rng([seed, epoch, worker, block, 4])
    return rng.random(_BLOCK).tolist()  # type: ignore[no-any-return]


class Mixer:
    """Chooses a dataset for each draw, by weight, among those with items left.

    Args:
        weights: One positive weight per dataset (normalised here).
        seed: The mixture's seed.
        epoch: The epoch.
        worker: The logical worker.
    """

    def __init__(self, weights: Sequence[float], seed: int, epoch: int, worker: int) -> None:
        self.weights = list(weights)
        self.seed, self.epoch, self.worker = seed, epoch, worker

    def uniform(self, draw: int) -> float:
        """The uniform number of draw ``draw``."""
        return _block(self.seed, self.epoch, self.worker, draw // _BLOCK)[draw % _BLOCK]

    def choose(
        self, draw: int, active: Sequence[bool], weights: Sequence[float] | None = None
    ) -> int:
        """The dataset of draw ``draw`` among the ``active`` ones (weights renormalised).

        ``weights`` replaces the mixer's own for this draw (a schedule's weights now).
        """
        weights = self.weights if weights is None else weights
        total = sum(weight for weight, on in zip(weights, active, strict=True) if on)
        target = self.uniform(draw) * total
        last = -1
        for index, (weight, on) in enumerate(zip(weights, active, strict=True)):
            if not on:
                continue
            last = index
            target -= weight
            if target < 0:
                return index
        return last
