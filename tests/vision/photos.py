"""Photo-like JPEGs for the vision tests: smooth colour fields, edges and grain, as photos have."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image


def photo(width: int, height: int, seed: int) -> np.ndarray:
    """An ``(height, width, 3)`` uint8 image with gradients, blobs, edges and noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    base = np.stack(
        [
            128 + 90 * np.sin(x / rng.uniform(20, 60) + c) * np.cos(y / rng.uniform(20, 60) - c)
            for c in range(3)
        ],
        axis=-1,
    )
    for _ in range(6):
        cx, cy, r = rng.uniform(0, width), rng.uniform(0, height), rng.uniform(10, 80)
        inside = (x - cx) ** 2 + (y - cy) ** 2 < r * r
        base[inside] = rng.uniform(0, 255, size=3)
    base += rng.normal(0, 3, size=base.shape)
    return np.clip(base, 0, 255).astype(np.uint8)


def jpeg(width: int, height: int, seed: int, quality: int = 90, **save: object) -> bytes:
    """``photo`` encoded as a JPEG."""
    buffer = io.BytesIO()
    Image.fromarray(photo(width, height, seed)).save(buffer, "JPEG", quality=quality, **save)
    return buffer.getvalue()
