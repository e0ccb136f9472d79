"""``WeightSchedule``: mixture weights that change during training, and the clock that drives them.

A schedule maps a *position* in training to the weights of a mixture's draws. The position is
counted by global samples (every rank's) or by loader steps, across epochs. A worker knows its
position without talking to anyone: the loader hands every epoch its starting ``Clock``, and
worker ``i``'s ``k``-th batch of the run is loader step ``k * num_workers + i`` after it (the
loader takes batches from its workers in turn). Samples are counted as ``batch_size *
world_size`` per step, so every rank, and a run resumed on another topology, agree on it.
"""

from __future__ import annotations

import itertools
import math
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Clock", "WeightSchedule"]

_UNITS = ("samples", "steps")


def _normalised(weights: Sequence[float], where: str) -> list[float]:
    values = list(weights)
    if (
        not values
        or any(
            isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w) or w < 0
            for w in values
        )
        or not any(values)
    ):
        raise ValueError(
            f"WeightSchedule: the weights at {where} must be finite non-negative numbers, not "
            f"all zero; got {values!r}."
        )
    total = float(sum(values))
    return [float(w) / total for w in values]


class WeightSchedule:
    """Mixture weights as a function of training progress, for ``CombinedStreamingDataset``.

    Args:
        points: ``(position, weights)`` breakpoints, the first at position 0, positions
            increasing; each ``weights`` has one entry per dataset (normalised here).
        unit: ``"samples"`` (global samples yielded, over all ranks) or ``"steps"`` (loader
            steps, i.e. batches of one rank).
        interpolate: Move linearly from one breakpoint's weights to the next one's; otherwise
            each breakpoint's weights hold until the next breakpoint. After the last one its
            weights hold.

    Raises:
        ValueError: No breakpoint, a first one not at 0, positions not increasing, weights of
            different lengths or not usable as weights, or an unknown ``unit``.

    Example:
        ``WeightSchedule([(0, [0.9, 0.1]), (100_000, [0.5, 0.5])], unit="samples")``
    """

    def __init__(
        self,
        points: Sequence[tuple[int, Sequence[float]]],
        unit: str = "samples",
        interpolate: bool = False,
    ) -> None:
        if unit not in _UNITS:
            raise ValueError(f"WeightSchedule: unit must be one of {_UNITS}, got {unit!r}.")
        if not points:
            raise ValueError("WeightSchedule needs at least one (position, weights) breakpoint.")
        positions = [point[0] for point in points]
        if any(isinstance(p, bool) or not isinstance(p, int) for p in positions):
            raise ValueError(f"WeightSchedule: positions are whole {unit}; got {positions!r}.")
        if positions[0] != 0 or any(b <= a for a, b in itertools.pairwise(positions)):
            raise ValueError(
                f"WeightSchedule: positions must start at 0 and increase; got {positions!r}."
            )
        self.positions = positions
        self.weights = [_normalised(w, f"{unit} {p}") for p, w in points]
        lengths = {len(w) for w in self.weights}
        if len(lengths) != 1:
            raise ValueError(
                f"WeightSchedule: every breakpoint needs as many weights; got lengths "
                f"{[len(w) for w in self.weights]}."
            )
        self.unit = unit
        self.interpolate = interpolate

    @property
    def num_datasets(self) -> int:
        """How many datasets the schedule weighs."""
        return len(self.weights[0])

    def at(self, position: float) -> list[float]:
        """The (normalised) weights at ``position`` (in ``unit``)."""
        segment = bisect_right(self.positions, position) - 1
        segment = max(segment, 0)
        if not self.interpolate or segment == len(self.positions) - 1:
            return self.weights[segment]
        start, end = self.positions[segment], self.positions[segment + 1]
        fraction = (position - start) / (end - start)
        before, after = self.weights[segment], self.weights[segment + 1]
        return [a + (b - a) * fraction for a, b in zip(before, after, strict=True)]

    def describe(self) -> dict[str, Any]:
        """The schedule as plain data (recorded in state dicts, compared on resume)."""
        return {
            "points": [[p, list(w)] for p, w in zip(self.positions, self.weights, strict=True)],
            "unit": self.unit,
            "interpolate": self.interpolate,
        }

    def __repr__(self) -> str:
        points = list(zip(self.positions, self.weights, strict=True))
        return f"WeightSchedule({points!r}, unit={self.unit!r}, interpolate={self.interpolate})"


@dataclass(frozen=True)
class Clock:
    """Training progress at the start of a run of the loader: steps and global samples.

    Attributes:
        step: Loader steps taken before (over every epoch).
        samples: Global samples (all ranks) yielded before, counted per step as
            ``batch_size * world_size``.
    """

    step: int = 0
    samples: int = 0

    def after(self, steps: int, batch_size: int, world_size: int) -> Clock:
        """The clock ``steps`` loader steps later."""
        return Clock(self.step + steps, self.samples + steps * batch_size * world_size)

    def position(self, unit: str, steps: int, batch_size: int, world_size: int) -> int:
        """The position, in ``unit``, of the loader step ``steps`` after this clock."""
        later = self.after(steps, batch_size, world_size)
        return later.step if unit == "steps" else later.samples

    def to_json(self) -> dict[str, int]:
        """The clock as stored in a state dict."""
        return {"step": self.step, "samples": self.samples}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Clock:
        """Parse a stored clock.

        Raises:
            ValueError: It is not two non-negative counts.
        """
        try:
            step, samples = raw["step"], raw["samples"]
        except (KeyError, TypeError):
            message = f"A state dict's clock must be {{step, samples}}, got {raw!r}."
            raise ValueError(message) from None
        if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in (step, samples)):
            raise ValueError(f"A state dict's clock holds non-negative counts, got {raw!r}.")
        return cls(step, samples)
