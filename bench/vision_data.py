"""W6 vision: ImageNet-like JPEG photos and the recipe every system runs on them.

The photos are scikit-image's bundled sample photographs (``skimage.data``; install
``scikit-image`` in ours' venv to generate W6), cut into 10,000 distinct images by random
crops, rescales, flips, colour shifts and a little sensor-like noise, at sizes drawn like
ImageNet's (long side log-normal around 500 px, 4:3 / 3:2 / 1:1 shapes, a quarter portrait,
200..1,000 px a side), saved as baseline JPEGs at quality 90.

The recipe is ImageNet training's: decode, ``RandomResizedCrop(224, scale=(0.08, 1), ratio=(3/4,
4/3))``, random horizontal flip, ``uint8`` CHW tensor, batch 256. ``plain_transform`` is what
users write today with Pillow (torchvision cannot load next to the CPU torch here, so the box
is drawn here as torchvision defines it); every system but ours-fused runs exactly this code.
This module imports only NumPy at the top: the peers' interpreter imports it too.
"""

from __future__ import annotations

import io
import math
import os
import random
from pathlib import Path
from typing import Any

import numpy as np

W6_COUNT = 10_000
W6_QUALITY = 90
W6_SIDE = 224
W6_BATCH = 256
_PHOTOS = (
    "astronaut",
    "chelsea",
    "coffee",
    "rocket",
    "hubble_deep_field",
    "immunohistochemistry",
    "retina",
    "stereo_motorcycle",
    "camera",
    "grass",
    "gravel",
    "brick",
)
_SHAPES = ((4 / 3, 0.6), (3 / 2, 0.2), (1.0, 0.1), (5 / 4, 0.1))


def _photos() -> list[Any]:
    """The source photographs as PIL RGB images."""
    import skimage.data
    from PIL import Image

    out = []
    for name in _PHOTOS:
        pixels = getattr(skimage.data, name)()
        pixels = pixels[0] if isinstance(pixels, tuple) else pixels
        if pixels.ndim == 2:
            pixels = np.stack([pixels] * 3, axis=-1)
        out.append(Image.fromarray(np.ascontiguousarray(pixels[..., :3])))
    return out


def _size(rng: random.Random) -> tuple[int, int]:
    """A width and height drawn like ImageNet's (median about 500 x 375)."""
    long_side = min(1000, max(200, round(rng.lognormvariate(math.log(500), 0.22))))
    shape = rng.choices([s for s, _ in _SHAPES], [w for _, w in _SHAPES])[0]
    short_side = max(200, round(long_side / shape))
    return (short_side, long_side) if rng.random() < 0.25 else (long_side, short_side)


def _one(photo: Any, rng: random.Random, noise: np.random.Generator) -> bytes:
    """One distinct photo: a random crop, rescale, flip, colour shift and noise, as JPEG."""
    from PIL import Image

    width, height = _size(rng)
    fraction = rng.uniform(0.35, 1.0)
    crop_w = max(16, round(photo.width * math.sqrt(fraction)))
    crop_h = max(16, min(photo.height, round(crop_w * height / width)))
    crop_w = min(crop_w, photo.width)
    left = rng.randint(0, photo.width - crop_w)
    top = rng.randint(0, photo.height - crop_h)
    image = photo.resize(
        (width, height), Image.BICUBIC, box=(left, top, left + crop_w, top + crop_h)
    )
    if rng.random() < 0.5:
        image = image.transpose(Image.FLIP_LEFT_RIGHT)
    pixels = np.asarray(image, dtype=np.float32)
    gains = np.array([rng.uniform(0.8, 1.2) for _ in range(3)], dtype=np.float32)
    pixels = pixels * gains + rng.uniform(-20, 20)
    pixels += noise.normal(0.0, rng.uniform(1.0, 4.0), size=pixels.shape).astype(np.float32)
    buffer = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(
        buffer, format="JPEG", quality=W6_QUALITY
    )
    return buffer.getvalue()


def generate_w6(out: Path) -> None:
    """Write W6: ``images.bin`` + ``offsets.npy`` + ``labels.npy``, and ``files/NNNNN.jpg``."""
    rng, noise = random.Random(6), np.random.default_rng(6)
    photos = _photos()
    files = out / "files"
    files.mkdir(parents=True, exist_ok=True)
    offsets = np.zeros(W6_COUNT + 1, dtype=np.int64)
    with open(out / "images.bin.tmp", "wb") as blob:
        for i in range(W6_COUNT):
            data = _one(photos[i % len(photos)], rng, noise)
            blob.write(data)
            (files / f"{i:05d}.jpg").write_bytes(data)
            offsets[i + 1] = offsets[i] + len(data)
    os.replace(out / "images.bin.tmp", out / "images.bin")
    np.save(out / "offsets.npy", offsets)
    np.save(out / "labels.npy", (np.arange(W6_COUNT, dtype=np.int64) * 7919) % 1000)


# ----------------------------------------------------------------------------------------------
# The plain recipe (Pillow), as torchvision defines RandomResizedCrop.


def crop_params(width: int, height: int, rng: random.Random) -> tuple[int, int, int, int]:
    """``(left, top, w, h)``: torchvision's ``RandomResizedCrop.get_params`` for scale (0.08,
    1) and ratio (3/4, 4/3): ten tries of a uniform area and log-uniform aspect, then a
    centred fallback."""
    area, low, high = width * height, math.log(3 / 4), math.log(4 / 3)
    for _ in range(10):
        target = area * rng.uniform(0.08, 1.0)
        aspect = math.exp(rng.uniform(low, high))
        w, h = round(math.sqrt(target * aspect)), round(math.sqrt(target / aspect))
        if 0 < w <= width and 0 < h <= height:
            return rng.randint(0, width - w), rng.randint(0, height - h), w, h
    if width / height < 3 / 4:
        w, h = width, round(width / (3 / 4))
    elif width / height > 4 / 3:
        w, h = round(height * 4 / 3), height
    else:
        w, h = width, height
    return (width - w) // 2, (height - h) // 2, w, h


_RNG = random.Random()


def plain_transform(sample: dict[str, Any]) -> dict[str, Any]:
    """Decode with Pillow, RandomResizedCrop(224) (bilinear, antialiased), flip, CHW uint8."""
    import torch
    from PIL import Image

    with Image.open(io.BytesIO(bytes(sample["image"]))) as image:
        rgb = image.convert("RGB")
    left, top, w, h = crop_params(rgb.width, rgb.height, _RNG)
    out = rgb.resize((W6_SIDE, W6_SIDE), Image.BILINEAR, box=(left, top, left + w, top + h))
    if _RNG.random() < 0.5:
        out = out.transpose(Image.FLIP_LEFT_RIGHT)
    pixels = np.asarray(out).transpose(2, 0, 1)
    return {"image": torch.from_numpy(np.ascontiguousarray(pixels)), "label": int(sample["label"])}


def fused_transform() -> Any:
    """Ours fused: ``litdata.vision.RandomResizedCrop(224)`` on the ``image`` field."""
    from litdata.vision import RandomResizedCrop

    return RandomResizedCrop(W6_SIDE, field="image")


def check_batch(images: Any, labels: Any) -> tuple[int, int]:
    """A W6 batch must be one contiguous ``[B, 3, 224, 224]`` uint8 tensor; (count, label sum)."""
    shape = tuple(images.shape)
    if shape[1:] != (3, W6_SIDE, W6_SIDE) or str(images.dtype) != "torch.uint8":
        raise ValueError(f"W6 batch of shape {shape} and dtype {images.dtype}")
    if not images.is_contiguous():
        raise ValueError("W6 batch is not one contiguous tensor")
    values = labels.tolist() if hasattr(labels, "tolist") else list(labels)
    return len(values), int(sum(values))
