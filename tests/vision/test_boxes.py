"""Crop boxes: the distribution RandomResizedCrop defines, and draws that depend only on the key."""

import math

import numpy as np
import pytest

from litdata.vision import Draws, sample_box

DRAWS = 10_000


def definition(width, height, rng):
    """torchvision's RandomResizedCrop box, written from its documented definition (numpy RNG)."""
    area = width * height
    for _ in range(10):
        target = area * rng.uniform(0.08, 1.0)
        aspect = math.exp(rng.uniform(math.log(3 / 4), math.log(4 / 3)))
        w, h = round(math.sqrt(target * aspect)), round(math.sqrt(target / aspect))
        if 0 < w <= width and 0 < h <= height:
            return rng.integers(0, width - w + 1), rng.integers(0, height - h + 1), w, h
    if width / height < 3 / 4:
        w, h = width, round(width / (3 / 4))
    elif width / height > 4 / 3:
        w, h = round(height * 4 / 3), height
    else:
        w, h = width, height
    return (width - w) // 2, (height - h) // 2, w, h


def statistics(boxes, width, height):
    boxes = np.asarray(boxes, dtype=np.float64)
    left, _top, w, h = boxes.T
    scale = w * h / (width * height)
    log_ratio = np.log(w / h)
    centre_x = (left + w / 2) / width
    return scale, log_ratio, centre_x


@pytest.mark.parametrize(("width", "height"), [(500, 375), (375, 500), (1000, 1000), (900, 300)])
def test_box_distribution_matches_the_definition(width, height):
    ours = [sample_box(width, height, Draws(7, 1, i)) for i in range(DRAWS)]
    rng = np.random.default_rng(3)
    reference = [definition(width, height, rng) for _ in range(DRAWS)]
    got = statistics([(b.left, b.top, b.width, b.height) for b in ours], width, height)
    want = statistics(reference, width, height)
    for name, a, b, tolerance in zip(
        ("scale", "log ratio", "centre x"), got, want, (0.012, 0.012, 0.01), strict=True
    ):
        for q in (10, 25, 50, 75, 90):  # quantiles agree within sampling noise
            assert abs(np.percentile(a, q) - np.percentile(b, q)) < 3 * tolerance, (name, q)
        assert abs(a.mean() - b.mean()) < tolerance, name
    assert all(b.left >= 0 and b.left + b.width <= width for b in ours)
    assert all(b.top >= 0 and b.top + b.height <= height for b in ours)
    flips = np.mean([b.flip for b in ours])
    assert abs(flips - 0.5) < 0.02


def test_scale_and_ratio_bounds_hold():
    boxes = [
        sample_box(640, 480, Draws(1, 2, i), scale=(0.5, 0.6), ratio=(1, 1)) for i in range(2000)
    ]
    fitted = [b for b in boxes if (b.width, b.height) != (480, 480)]
    assert fitted
    for box in fitted:
        assert 0.5 - 0.01 <= box.width * box.height / (640 * 480) <= 0.6 + 0.01
        assert abs(box.width - box.height) <= 1


def test_a_box_that_never_fits_falls_back_to_the_centre():
    box = sample_box(1000, 100, Draws(0), ratio=(1, 1), scale=(0.9, 1.0))
    assert (box.left, box.top, box.width, box.height) == (450, 0, 100, 100)


def test_draws_depend_only_on_the_key():
    assert [Draws(1, 2, 3).random() for _ in range(3)] == [Draws(1, 2, 3).random()] * 3
    first = Draws(1, 2, 3)
    stream = [first.random() for _ in range(1000)]
    assert stream != [Draws(1, 2, 4).random() for _ in range(1000)]
    assert min(stream) >= 0
    assert max(stream) < 1
    assert abs(np.mean(stream) - 0.5) < 0.03
