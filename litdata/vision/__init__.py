"""Vision pipelines at the decode limit: crops decided before decoding, decoded at reduced size.

``ld.vision.RandomResizedCrop(224)`` is torchvision's ``RandomResizedCrop`` plus a horizontal
flip, fused with decoding (see docs/vision.md); ``bound_resolution`` stores images at a bounded
size at ``optimize`` time.
"""

from __future__ import annotations

from litdata.vision.bounded import bound_resolution
from litdata.vision.boxes import Box, Draws, sample_box
from litdata.vision.crop import RandomResizedCrop
from litdata.vision.decoding import DEFAULT_MAX_PIXELS, ImageDecodeError
from litdata.vision.encoded import ENCODED, EncodedJpeg

__all__ = [
    "DEFAULT_MAX_PIXELS",
    "ENCODED",
    "Box",
    "Draws",
    "EncodedJpeg",
    "ImageDecodeError",
    "RandomResizedCrop",
    "bound_resolution",
    "sample_box",
]
