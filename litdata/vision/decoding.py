"""Decoding only what a crop needs: the header first, then the box's region at the smallest scale.

A crop decodes its image at the largest of the DCT scales 1/8, 1/4, 1/2 that still gives the
box at least the output's size. Baseline JPEGs in RGB, YCbCr or grey decode only the rows and
iMCU columns the box covers (``region``: libjpeg-turbo, built at install time); where that
decoder is missing, and for progressive JPEGs, simplejpeg decodes the whole image at that scale;
everything else (CMYK/YCCK JPEGs, PNG, WebP...) Pillow decodes in full. Sizes are checked
against a pixel budget before any pixel is decoded, and every failure is an
``ImageDecodeError`` naming the sample.
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
from litdata.vision import region
from litdata.vision.boxes import Box

__all__ = [
    "DEFAULT_MAX_PIXELS",
    "Decoded",
    "Header",
    "ImageDecodeError",
    "decode_for_box",
    "read_header",
]

#: Images declaring more pixels than this are refused before decoding (about 8,200 x 8,200).
DEFAULT_MAX_PIXELS = 1 << 26
_JPEG = b"\xff\xd8"
_SCALES = (8, 4, 2)  # DCT scale denominators libjpeg-turbo decodes fastest
_FAST_COLORSPACES = ("Gray", "YCbCr", "RGB")


class ImageDecodeError(LitdataError, ValueError):
    """An image that cannot be decoded, or declares more pixels than allowed."""


@dataclass(frozen=True)
class Header:
    """What the header says: the size, and how the image can be decoded.

    ``fast``: a JPEG decoder can decode it at a reduced DCT scale; ``region``: the region
    decoder can decode only a box of it.
    """

    width: int
    height: int
    fast: bool
    region: bool = False


@dataclass(frozen=True)
class Decoded:
    """Decoded ``(H, W, 3)`` uint8 pixels, and where they lie in the image.

    ``pixels[0, 0]`` is pixel ``(left, top)`` of the image decoded at ``scale_x`` x ``scale_y``
    of its full size.
    """

    pixels: npt.NDArray[np.uint8]
    left: int = 0
    top: int = 0
    scale_x: float = 1.0
    scale_y: float = 1.0


def _simplejpeg() -> Any:
    return require("simplejpeg", extra="vision", purpose="Decoding JPEGs at reduced size")


def _pillow() -> Any:
    return require("PIL.Image", extra="vision", purpose="Decoding images")


def read_header(data: bytes | memoryview, where: str, max_pixels: int) -> Header:
    """The image's size from its header (no pixel decoded), checked against ``max_pixels``.

    Raises:
        ImageDecodeError: The header cannot be read, or the image is larger than allowed.
    """
    header = _jpeg_header(data) if bytes(data[:2]) == _JPEG else None
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


def _jpeg_header(data: bytes | memoryview) -> Header | None:
    """A JPEG's header as libjpeg-turbo reads it, or None where it cannot (Pillow reads it)."""
    if region.available():
        try:
            found = region.jpeg_header(data)
        except region.RegionError:
            return None
        fast = found.colourspace in _FAST_COLORSPACES
        return Header(found.width, found.height, fast, fast and not found.progressive)
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
    data: bytes | memoryview,
    header: Header,
    box: Box,
    size: tuple[int, int],
    where: str,
    *,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> Decoded:
    """The pixels ``box`` needs for an output of ``size`` (height, width), decoded sparingly.

    At a reduced DCT scale where the box allows it, and only the box's region where the
    decoder can.

    Raises:
        ImageDecodeError: The image data is truncated or corrupt, or larger than allowed.
    """
    scale = reduction(box.width, box.height, size[1], size[0]) if header.fast else 1
    try:
        if header.region:
            return _region(data, header, box, scale, max_pixels)
        if header.fast:
            pixels = _simplejpeg().decode_jpeg(
                data,
                colorspace="RGB",
                min_height=math.ceil(header.height / scale),
                min_width=math.ceil(header.width / scale),
            )
        else:  # CMYK/YCCK JPEGs, PNG, WebP...: in full (``scale`` is 1)
            with _pillow().open(io.BytesIO(data)) as image:
                pixels = np.asarray(image.convert("RGB"))
    except region.RegionError as error:
        if error.too_large:
            raise ImageDecodeError(
                f"The image of {where}: {error}, more than the {max_pixels:,} allowed "
                "(max_pixels=); it was not decoded. Raise max_pixels if such images are "
                "expected, or drop the sample."
            ) from error
        raise _corrupt(where, error) from error
    except Exception as error:  # every decoder's error becomes one clear error
        raise _corrupt(where, error) from error
    return Decoded(
        pixels, scale_x=pixels.shape[1] / header.width, scale_y=pixels.shape[0] / header.height
    )


def _region(
    data: bytes | memoryview, header: Header, box: Box, scale: int, max_pixels: int
) -> Decoded:
    """The rows and columns of the image at ``1/scale`` that ``box`` covers.

    One column more on each side: libjpeg-turbo upsamples the colour of a cropped region's
    edge columns from the region alone, so without it the box's first and last columns would
    differ from a full decode's (with it, the box's pixels are the full decode's, bit for bit).
    One row more above and below at reduced scales, where the box's edges fall between pixels.
    """
    width, height = math.ceil(header.width / scale), math.ceil(header.height / scale)
    rows_margin = 0 if scale == 1 else 1
    columns = (
        max(0, box.left // scale - 1),
        min(width, -(-(box.left + box.width) // scale) + 1),
    )
    rows = (
        max(0, box.top // scale - rows_margin),
        min(height, -(-(box.top + box.height) // scale) + rows_margin),
    )
    pixels, left, top = region.decode_region(data, scale, columns, rows, max_pixels)
    return Decoded(pixels, left, top, width / header.width, height / header.height)


def _corrupt(where: str, error: Exception) -> ImageDecodeError:
    """The error for image data that no decoder accepts."""
    return ImageDecodeError(
        f"Cannot decode the image of {where}: {error}. The image is truncated or "
        "corrupt; rewrite this sample from its source, or drop it."
    )
