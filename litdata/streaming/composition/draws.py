"""The weighted draws of ``CombinedStreamingDataset``, addressable by draw number.

Draw ``t`` of a worker is a function of ``(seed, epoch, worker, t)`` and of the weights at that
draw alone, so a resumed worker continues the exact sequence without replaying it. Draws are
chosen a block at a time (numpy, the same arithmetic as one at a time, in the same order), so
that a worker's reading and the loader's plan of it share one cheap computation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

__all__ = ["Mixer", "Weights", "draws"]

_BLOCK = 4096
#: Draws chosen at a time.
_CHOICES = 1024

#: The weights of ``count`` draws from draw ``first``: a ``(count, datasets)`` array.
Weights = Callable[[int, int], npt.NDArray[np.float64]]


@lru_cache(maxsize=8)
def _block(seed: int, epoch: int, worker: int, block: int) -> npt.NDArray[np.float64]:
    rng = np.random.default_rng([seed, epoch, worker, block, 4])
    uniforms = rng.random(_BLOCK)
    uniforms.flags.writeable = False
    return uniforms


class Mixer:
    """Chooses a dataset for each draw, by weight, among those with items left.

    Args:
        seed: The mixture's seed.
        epoch: The epoch.
        worker: The logical worker.
    """

    def __init__(self, seed: int, epoch: int, worker: int) -> None:
        self.seed, self.epoch, self.worker = seed, epoch, worker

    def uniforms(self, first: int, count: int) -> npt.NDArray[np.float64]:
        """The uniform numbers of draws ``first`` to ``first + count - 1``."""
        blocks = range(first // _BLOCK, (first + count - 1) // _BLOCK + 1)
        joined = np.concatenate([_block(self.seed, self.epoch, self.worker, b) for b in blocks])
        start = first - blocks[0] * _BLOCK
        return joined[start : start + count]

    def choose(
        self, first: int, weights: npt.NDArray[np.float64], active: Sequence[bool]
    ) -> npt.NDArray[np.int64]:
        """The dataset of each draw from ``first``, among the ``active`` ones (renormalised).

        ``weights`` has a row per draw. A draw's uniform number times the active weights' total
        is less one weight after another, in order; the dataset whose weight takes it below 0
        is drawn (the last active one if rounding leaves it at 0).
        """
        count = len(weights)
        on = [index for index, live in enumerate(active) if live]
        total = np.zeros(count)
        for index in on:
            total = total + weights[:, index]
        target = self.uniforms(first, count) * total
        chosen = np.full(count, on[-1] if on else -1, dtype=np.int64)
        open_ = np.ones(count, dtype=bool)
        for index in on:
            target = target - weights[:, index]
            hit = open_ & (target < 0)
            chosen[hit] = index
            open_ &= ~hit
        return chosen


def draws(  # noqa: PLR0917  # the mixture's settings, named at its two call sites
    mixer: Mixer,
    left: Sequence[int],
    takes: Sequence[int],
    iterate_over_all: bool,
    first: int,
    weights: Weights,
) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
    """Blocks of draws from draw ``first`` until the mixture ends: their datasets and takes.

    Each block is ``(datasets, items taken)``, one entry per draw. A draw takes ``takes`` items
    of its dataset, or what is left of it; with ``iterate_over_all`` a dataset it exhausts
    leaves the draws after it, otherwise drawing an exhausted dataset ends the mixture.

    Args:
        mixer: The worker's mixer.
        left: Each dataset's items left to this worker.
        takes: The items a draw takes from each dataset (1, or its batch size per stream).
        iterate_over_all: Read every dataset to its end.
        first: The first draw's number.
        weights: The weights of the draws.
    """
    left_now = np.asarray(left, dtype=np.int64)
    nominal = np.asarray(takes, dtype=np.int64)
    remaining, draw = int(left_now.sum()), first
    active = [count > 0 or not iterate_over_all for count in left]
    while remaining:
        chosen = mixer.choose(draw, weights(draw, _CHOICES), active)
        asked = nominal[chosen]
        spans = np.arange(len(nominal)) == chosen[:, None]
        before = (np.cumsum(spans * asked[:, None], axis=0) - spans * asked[:, None])[
            np.arange(len(chosen)), chosen
        ]  # items of its dataset the draws before each one took (as asked)
        room = left_now[chosen] - before
        end = len(chosen)
        empty = np.flatnonzero(room <= 0)  # a draw of a dataset with nothing left
        if len(empty):
            end = int(empty[0])
        exhausts = np.flatnonzero((room > 0) & (asked >= room))
        if iterate_over_all and len(exhausts) and exhausts[0] < end:
            end = int(exhausts[0]) + 1  # the draws after it choose without that dataset
        taken = np.minimum(asked[:end], room[:end])
        done = np.flatnonzero(np.cumsum(taken) >= remaining)
        if len(done):
            end = int(done[0]) + 1
            taken = taken[:end]
        chosen = chosen[:end]
        yield chosen, taken
        draw += end
        remaining -= int(taken.sum())
        np.subtract.at(left_now, chosen, taken)
        if not iterate_over_all and len(empty) and int(empty[0]) == end:
            return  # the next draw picks an exhausted dataset: the mixture ends
        for dataset in np.flatnonzero(left_now == 0).tolist():
            if iterate_over_all:
                active[dataset] = False
