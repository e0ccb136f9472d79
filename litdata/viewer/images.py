"""Pictures the viewer draws on the server: bounded thumbnails, full views and heat maps.

Every image is decoded here with limits: the header is read first and an image of more than
:data:`MAX_PIXELS` pixels is refused before a pixel is decoded (a decompression bomb costs a
header read), and what is sent back is re-encoded (PNG, or JPEG for photographs) at most
:data:`THUMB_SIDE` or :data:`FULL_SIDE` pixels a side.
"""

from __future__ import annotations

import io
import warnings
from typing import Any

import numpy as np

__all__ = [
    "FULL_SIDE",
    "MAX_PIXELS",
    "THUMB_SIDE",
    "ImageRefused",
    "heat_map",
    "image_size",
    "picture",
    "sniff",
]

#: The most pixels an image may have to be drawn (40 megapixels; PIL's own bomb limit is 89).
MAX_PIXELS = 40_000_000
#: The longest side of a thumbnail in the sample grid.
THUMB_SIDE = 160
#: The longest side of the "full size" view (bounded too: it is sent to a browser).
FULL_SIDE = 2048

_COLOUR = 3
_CHANNELS = (1, 3, 4)
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image", "image/png"),
    (b"\xff\xd8\xff", "image", "image/jpeg"),
    (b"GIF87a", "image", "image/gif"),
    (b"GIF89a", "image", "image/gif"),
    (b"BM", "image", "image/bmp"),
    (b"II*\x00", "image", "image/tiff"),
    (b"MM\x00*", "image", "image/tiff"),
    (b"fLaC", "audio", "audio/flac"),
    (b"OggS", "audio", "audio/ogg"),
    (b"ID3", "audio", "audio/mpeg"),
    (b"\x1aE\xdf\xa3", "video", "video/webm"),
)


class ImageRefused(ValueError):
    """An image the viewer will not decode: too many pixels, or not an image at all."""


def sniff(data: bytes) -> tuple[str, str] | None:
    """The kind (``"image"``, ``"audio"``, ``"video"``) and MIME type of encoded media bytes."""
    head = bytes(data[:16])
    if head[:4] == b"RIFF" and head[8:12] in (b"WEBP", b"WAVE"):
        return ("image", "image/webp") if head[8:12] == b"WEBP" else ("audio", "audio/wav")
    if head[4:8] == b"ftyp":
        return "video", "video/mp4"
    for magic, kind, mime in _MAGIC:
        if head.startswith(magic):
            return kind, mime
    return None


def _open(data: bytes) -> Any:
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
    except Exception as error:  # PIL raises many types for bad input
        raise ImageRefused(f"not a decodable image ({type(error).__name__}: {error})") from None
    width, height = image.size
    if width * height > MAX_PIXELS:
        raise ImageRefused(
            f"{width}x{height} pixels is over the viewer's limit of {MAX_PIXELS:,} "
            f"(a decompression bomb, or an image too large to draw); not decoded"
        )
    return image


def image_size(value: Any) -> tuple[int, int]:
    """``(width, height)`` of an encoded image, a PIL image or an image-shaped array."""
    if isinstance(value, bytes | bytearray | memoryview):
        width, height = _open(bytes(value)).size
        return int(width), int(height)
    if hasattr(value, "size") and hasattr(value, "mode"):
        return int(value.size[0]), int(value.size[1])
    pixels = _hwc(np.asarray(value))
    return int(pixels.shape[1]), int(pixels.shape[0])


def _hwc(array: np.ndarray) -> np.ndarray:
    """An image-shaped array as height x width (x channels), channels last."""
    if array.ndim == _COLOUR and array.shape[0] in _CHANNELS and array.shape[-1] not in _CHANNELS:
        array = np.moveaxis(array, 0, -1)
    if array.ndim == _COLOUR and array.shape[-1] == 1:
        array = array[..., 0]
    return array


def _pil(value: Any) -> Any:
    from PIL import Image

    if isinstance(value, bytes | bytearray | memoryview):
        image = _open(bytes(value))
    elif hasattr(value, "size") and hasattr(value, "mode"):
        image = value
        if image.size[0] * image.size[1] > MAX_PIXELS:
            raise ImageRefused(f"{image.size[0]}x{image.size[1]} pixels is over the limit")
    else:
        pixels = _hwc(np.asarray(value))
        if pixels.size > MAX_PIXELS * 4:
            raise ImageRefused(f"an array of {pixels.size:,} values is over the limit")
        image = Image.fromarray(np.ascontiguousarray(pixels.astype(np.uint8, copy=False)))
    try:
        image.load()
    except Exception as error:  # truncated or corrupt pixel data
        raise ImageRefused(f"the image data is damaged ({type(error).__name__}: {error})") from None
    return image


def picture(value: Any, side: int) -> tuple[bytes, str]:
    """``value`` drawn at most ``side`` pixels a side: ``(encoded bytes, MIME type)``.

    Raises:
        ImageRefused: It is not an image, is damaged, or has too many pixels.
    """
    image = _pil(value)
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    image = image.copy()
    image.thumbnail((side, side))
    buffer = io.BytesIO()
    if image.mode in ("RGB", "L") and image.width * image.height > 64 * 64:
        image.save(buffer, format="JPEG", quality=85)
        return buffer.getvalue(), "image/jpeg"
    image.save(buffer, format="PNG")
    return buffer.getvalue(), "image/png"


def heat_map(array: np.ndarray, side: int) -> tuple[bytes, str]:
    """A 2-D numeric array as a grey-scale PNG (min black, max white), ``side`` at most."""
    from PIL import Image

    values = np.asarray(array, dtype=np.float64)
    step = max(1, -(-max(values.shape) // side))
    values = values[::step, ::step]
    finite = values[np.isfinite(values)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    scaled = np.nan_to_num((values - low) / (high - low or 1.0), nan=0.0) * 255
    image = Image.fromarray(scaled.clip(0, 255).astype(np.uint8))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue(), "image/png"
