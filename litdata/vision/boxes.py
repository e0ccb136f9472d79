"""Crop boxes as torchvision's ``RandomResizedCrop`` defines them, and the draws behind them.

The box is chosen from the image's width and height alone, so it is known before a single pixel
is decoded. ``Draws`` are a counter-based stream: the same key gives the same numbers in any
process or thread, which is what makes an epoch's crops reproducible, resumable and replayable.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Box", "Draws", "Uniforms", "fresh_uniforms", "sample_box"]

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_ATTEMPTS = 10  # torchvision's number of tries before the centre-crop fallback


def _mix(value: int) -> int:
    """SplitMix64's finaliser: a bijection of 64-bit integers that scatters nearby inputs."""
    value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9 & _MASK
    value = (value ^ (value >> 27)) * 0x94D049BB133111EB & _MASK
    return value ^ (value >> 31)


class Uniforms(Protocol):
    """A source of uniform numbers in ``[0, 1)`` (``random.Random`` is one)."""

    def random(self) -> float:
        """The next number."""
        ...


class Draws:
    """Uniform numbers in ``[0, 1)`` from a tuple of integers (seed, epoch, index, salt).

    Args:
        key: The integers the stream is a function of.
    """

    def __init__(self, *key: int) -> None:
        state = 0
        for part in key:
            state = _mix((state ^ (part & _MASK)) + _GOLDEN & _MASK)
        self._state = state

    def random(self) -> float:
        """The next number (53 random bits)."""
        self._state = (self._state + _GOLDEN) & _MASK
        return (_mix(self._state) >> 11) * (1.0 / (1 << 53))


@dataclass(frozen=True)
class Box:
    """A crop box in the image's pixels: left, top, width, height, and whether to flip it."""

    left: int
    top: int
    width: int
    height: int
    flip: bool = False


def _integer(uniforms: Uniforms, low: int, high: int) -> int:
    """A uniform integer in ``[low, high]``."""
    return low + min(int(uniforms.random() * (high - low + 1)), high - low)


def sample_box(
    width: int,
    height: int,
    uniforms: Uniforms,
    *,
    scale: tuple[float, float] = (0.08, 1.0),
    ratio: tuple[float, float] = (3 / 4, 4 / 3),
    flip: float = 0.5,
) -> Box:
    """A random box of an image of ``width`` x ``height`` pixels, as ``RandomResizedCrop`` draws.

    Up to ten tries of an area fraction uniform in ``scale`` and an aspect ratio log-uniform in
    ``ratio``; the first box that fits is placed uniformly. When none fits, the largest centred
    box whose aspect ratio lies within ``ratio``. Then a horizontal flip with probability
    ``flip``.

    Args:
        width: The image's width.
        height: The image's height.
        uniforms: Where the random numbers come from.
        scale: The box's area as a fraction of the image's, lower and upper bound.
        ratio: The box's width / height, lower and upper bound.
        flip: The probability of a horizontal flip.
    """
    area = width * height
    low, high = math.log(ratio[0]), math.log(ratio[1])
    for _ in range(_ATTEMPTS):
        target = area * (scale[0] + (scale[1] - scale[0]) * uniforms.random())
        aspect = math.exp(low + (high - low) * uniforms.random())
        box_width = round(math.sqrt(target * aspect))
        box_height = round(math.sqrt(target / aspect))
        if 0 < box_width <= width and 0 < box_height <= height:
            top = _integer(uniforms, 0, height - box_height)
            left = _integer(uniforms, 0, width - box_width)
            return Box(left, top, box_width, box_height, uniforms.random() < flip)
    shape = width / height
    if shape < min(ratio):
        box_width, box_height = width, round(width / min(ratio))
    elif shape > max(ratio):
        box_width, box_height = round(height * max(ratio)), height
    else:
        box_width, box_height = width, height
    left, top = (width - box_width) // 2, (height - box_height) // 2
    return Box(left, top, box_width, box_height, uniforms.random() < flip)


def fresh_uniforms(seed: int | None) -> random.Random:
    """Numbers for a transform used outside a streaming dataset (seeded, or from the OS)."""
    return random.Random(seed)  # noqa: S311  augmentation, not cryptography
