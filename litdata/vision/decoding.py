"""Decoding only what a crop needs: the header first, then the image at the smallest DCT scale.

JPEGs in RGB or grey are decoded by simplejpeg (libjpeg-turbo; releases the GIL) at the
largest of the scales 1/8, 1/4, 1/2 that still gives the crop box at least the output's size;
everything else (progressive JPEGs decode this way too, CMYK/YCCK JPEGs, PNG, WebP...) is
decoded in full by Pillow. Sizes are checked against a pixel budget before any pixel is
decoded, and every failure is an ``ImageDecodeError`` naming the sample.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from litdata.core.errors import LitdataError
from litdata.core.imports import require

__all__ = ["DEFAULT_MAX_PIXELS", "Header", "ImageDecodeError", "decode_for_box", "read_header"]

#: Images declaring more pixels than this are refused before decoding (about 8,200 x 8,200).
DEFAULT_MAX_PIXELS = 1 << 26
_JPEG = b"\xff\xd8"
_SCALES = (8, 4, 2)  # DCT scale denominators libjpeg-turbo decodes fastest
_FAST_COLORSPACES = ("Gray", "YCbCr", "RGB")


class ImageDecodeError(LitdataError, ValueError):
    """An image that cannot be decoded, or declares more pixels than allowed."""


@dataclass(frozen=True)
class Header:
    """What the header says: the size and whether the fast JPEG path can decode it."""

    width: int
    height: int
    fast: bool


def _simplejpeg() -> Any:
    return require("simplejpeg", extra="vision", purpose="Decoding JPEGs at reduced size")


def _pillow() -> Any:
    return require("PIL.Image", extra="vision", purpose="Decoding images")


def read_header(data: bytes | memoryview, where: str, max_pixels: int) -> Header:
    """The image's size from its header (no pixel decoded), checked against ``max_pixels``.

    Raises:
        ImageDecodeError: The header cannot be read, or the image is larger than allowed.
    """
    header = _fast_header(data) if bytes(data[:2]) == _JPEG else None
    try:
        if header is None:
            with _pillow().open(io.BytesIO(data)) as image:
                header = Header(image.width, image.height, False)
    except Exception as error:  # every decoder's error becomes one clear error
        raise ImageDecodeError(
            f"Cannot read the image header of {where}: {error}. The bytes are not a "
            "readable image (JPEG, PNG, ...); check how this sample was written."
        ) from error
    if header.width <= 0 or header.height <= 0 or header.width * header.height > max_pixels:
        raise ImageDecodeError(
            f"The image of {where} declares {header.width} x {header.height} pixels, more "
            f"than the {max_pixels:,} allowed (max_pixels=); it was not decoded. Raise "
            "max_pixels if such images are expected, or drop the sample."
        )
    return header


def _fast_header(data: bytes | memoryview) -> Header | None:
    """A JPEG's header as libjpeg-turbo reads it, or None where it cannot (Pillow reads it)."""
    try:
        height, width, colorspace, _ = _simplejpeg().decode_jpeg_header(data)
    except ValueError:  # e.g. a sampling layout TurboJPEG does not classify
        return None
    return Header(int(width), int(height), colorspace in _FAST_COLORSPACES)


def reduction(box_width: int, box_height: int, out_width: int, out_height: int) -> int:
    """The largest DCT scale denominator (8, 4, 2 or 1) leaving the box at least the output."""
    for scale in _SCALES:
        if box_width >= out_width * scale and box_height >= out_height * scale:
            return scale
    return 1


def decode_for_box(
    data: bytes | memoryview, header: Header, scale: int, where: str
) -> npt.NDArray[np.uint8]:
    """The image as ``(H, W, 3)`` uint8, decoded at ``1/scale`` where the fast path allows it.

    Raises:
        ImageDecodeError: The image data is truncated or corrupt.
    """
    try:
        if header.fast:
            decoder = _simplejpeg()
            if scale == 1:
                pixels = decoder.decode_jpeg(data, colorspace="RGB")
            else:
                pixels = decoder.decode_jpeg(
                    data,
                    colorspace="RGB",
                    min_height=math.ceil(header.height / scale),
                    min_width=math.ceil(header.width / scale),
                )
            return pixels  # type: ignore[no-any-return]
        with _pillow().open(io.BytesIO(data)) as image:
            if scale > 1 and image.format == "JPEG":
                image.draft("RGB", (header.width // scale, header.height // scale))
            return np.asarray(image.convert("RGB"))
    except Exception as error:  # every decoder's error becomes one clear error
        raise ImageDecodeError(
            f"Cannot decode the image of {where}: {error}. The image is truncated or "
            "corrupt; rewrite this sample from its source, or drop it."
        ) from error
