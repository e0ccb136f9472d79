"""Storing images at a bounded resolution: what ``optimize``'s ``fn`` calls on each image.

Training at 224 px rarely needs more than ~256-512 px on the short side; storing images at
that bound makes the dataset smaller and every epoch's decoding cheaper, at the price of
detail that a crop of a small part of a large image would have kept (docs/vision.md measures
both on W6). Images already within the bound are kept byte for byte.
"""

from __future__ import annotations

import io
import os
from typing import Any, Literal

from litdata.core.imports import require
from litdata.vision.decoding import DEFAULT_MAX_PIXELS, ImageDecodeError, read_header

__all__ = ["bound_resolution"]

_SIDES = ("short", "long")


def bound_resolution(
    image: bytes | memoryview | str | os.PathLike[str] | Any,
    max_side: int,
    *,
    side: Literal["short", "long"] = "short",
    quality: int = 90,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> bytes:
    """An image as JPEG bytes with its ``side`` side at most ``max_side`` pixels.

    ``image`` is encoded bytes, a path to an image file or a PIL image. An encoded image that
    is within the bound is returned unchanged; a larger one (or a PIL image) is decoded (JPEGs
    at a reduced DCT scale where that still leaves at least the bound), resized with Pillow's
    antialiased Lanczos filter keeping its aspect ratio, and saved as a baseline JPEG at
    ``quality``.

    Args:
        image: Encoded bytes, a path, or a PIL image.
        max_side: The bound, in pixels.
        side: Bound the ``"short"`` side (as ImageNet pipelines resize) or the ``"long"`` one.
        quality: The JPEG quality of re-encoded images.
        max_pixels: Images declaring more pixels are refused (``ImageDecodeError``).

    Raises:
        ValueError: ``max_side``, ``side`` or ``quality`` is out of range.
        ImageDecodeError: The image cannot be decoded or is larger than ``max_pixels``.
    """
    if max_side <= 0 or side not in _SIDES or not 1 <= quality <= 100:  # noqa: PLR2004
        raise ValueError(
            f"bound_resolution needs max_side > 0, side in {_SIDES} and 1 <= quality <= 100, "
            f"got max_side={max_side}, side={side!r}, quality={quality}."
        )
    pil = require("PIL.Image", extra="vision", purpose="Resizing images")
    if isinstance(image, str | os.PathLike):
        with open(image, "rb") as file:
            image = file.read()
    if isinstance(image, bytes | bytearray | memoryview):
        data = bytes(image)
        where = "an image given to bound_resolution"
        header = read_header(data, where, max_pixels)
        if _bounded_side(header.width, header.height, side) <= max_side:
            return data
        try:
            with pil.open(io.BytesIO(data)) as opened:
                factor = max_side / _bounded_side(opened.width, opened.height, side)
                target = _target(opened.width, opened.height, factor)
                opened.draft("RGB", target)  # JPEG: the smallest DCT scale still >= target
                return _encode(pil, opened.convert("RGB"), target, quality)
        except Exception as error:  # every decoder's error becomes one clear error
            raise ImageDecodeError(f"Cannot decode {where}: {error}.") from error
    factor = min(1.0, max_side / _bounded_side(image.width, image.height, side))
    return _encode(pil, image.convert("RGB"), _target(image.width, image.height, factor), quality)


def _bounded_side(width: int, height: int, side: str) -> int:
    return min(width, height) if side == "short" else max(width, height)


def _target(width: int, height: int, factor: float) -> tuple[int, int]:
    return max(1, round(width * factor)), max(1, round(height * factor))


def _encode(pil: Any, image: Any, size: tuple[int, int], quality: int) -> bytes:
    if image.size != size:
        image = image.resize(size, pil.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()
