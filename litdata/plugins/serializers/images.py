"""PIL images: ``pil`` (raw pixels, LitData's layout), ``jpeg`` and ``png`` (encoded bytes).

Pillow is imported only when an image is met (``pip install 'litdata[images]'``).
"""

from __future__ import annotations

import io
import struct
import sys
from typing import TYPE_CHECKING, Any, ClassVar

from litdata.core.imports import require
from litdata.engine.items.wrappers import Image, Jpeg, JpegArray, Pil

if TYPE_CHECKING:
    import torch
    from PIL.Image import Image as PILImage

__all__ = [
    "JPEGArraySerializer",
    "JPEGSerializer",
    "PILSerializer",
    "PNGSerializer",
    "decode_image_tensor",
    "raw_pil",
    "wrapped_image",
]

_PIL_HEADER = struct.Struct("<III")
#: The JPEG quality of ``jpeg`` leaves that do not choose one.
DEFAULT_QUALITY = 95


def _pil() -> Any:
    return require("PIL.Image", extra="images", purpose="Reading and writing images")


def _is_pil(item: Any, file_class: str | None = None) -> bool:
    """Whether ``item`` is a PIL image (opened from a file of class ``file_class``, if given)."""
    image_module = sys.modules.get("PIL.Image")
    if image_module is None or not isinstance(item, image_module.Image):
        return False
    return file_class is None or type(item).__name__ == file_class


def decode_image_tensor(data: bytes | memoryview) -> torch.Tensor:
    """Decode encoded image bytes into a ``uint8`` RGB tensor of shape ``(3, H, W)``.

    EXIF orientation is applied, as torchvision's decoder does for LitData.
    """
    import numpy as np
    import torch

    image_module = _pil()
    image_ops = require("PIL.ImageOps", extra="images", purpose="Decoding images")
    with image_module.open(io.BytesIO(data)) as image:
        rgb = image_ops.exif_transpose(image).convert("RGB")
        array = np.asarray(rgb)
    return torch.from_numpy(array.copy()).permute(2, 0, 1).contiguous()


def wrapped_image(wrapper: Image | Jpeg | Pil) -> tuple[PILImage, str | None]:
    """The PIL image an image wrapper describes, converted to its ``mode`` if it has one.

    Returns:
        The image, and the format of its source (``"JPEG"``...; ``None`` for pixel arrays).
    """
    image_module = _pil()
    if wrapper.image is not None:
        image = wrapper.image
    elif wrapper.array is not None:
        image = image_module.fromarray(wrapper.array)
    else:
        image = image_module.open(io.BytesIO(wrapper.read()))
    converted: PILImage = image.convert(wrapper.mode) if wrapper.mode else image
    return converted, image.format


def raw_pil(data: bytes | memoryview) -> PILImage:
    """The PIL image of ``[u32 w][u32 h][u32 len(mode)] mode pixels`` (LitData's ``pil``).

    The pixels' size is checked against the header before Pillow allocates the image: a
    header may claim 65,535 x 65,535 RGBA (17 GB) in 20 bytes.

    Raises:
        ValueError: The header is short, the mode unknown, or the pixels are not the
            ``width x height`` of that mode the header states.
    """
    image_module = _pil()
    if len(data) < _PIL_HEADER.size:
        raise ValueError(f"a raw PIL value of {len(data)} bytes has no 12-byte header")
    width, height, mode_size = _PIL_HEADER.unpack_from(data)
    start = _PIL_HEADER.size
    try:
        mode = bytes(data[start : start + mode_size]).decode("ascii")
        probe = image_module.new(mode, (8, 1))  # the bytes of 8 pixels of that mode
    except (UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"a raw PIL value names an unknown mode ({error})") from None
    row = -(-width * len(probe.tobytes()) // 8)
    pixels = len(data) - start - mode_size
    if pixels != row * height:
        raise ValueError(
            f"a raw PIL value says {width} x {height} {mode} ({row * height:,} bytes) but holds "
            f"{pixels:,} bytes of pixels; nothing was allocated for it"
        )
    raw = bytes(data[start + mode_size :])
    return image_module.frombytes(mode, (width, height), raw)  # type: ignore[no-any-return]


def _file_bytes(image: PILImage) -> bytes | None:
    filename = getattr(image, "filename", None)
    if filename:
        try:
            with open(filename, "rb") as handle:
                return handle.read()
        except OSError:
            return None
    return None


class PILSerializer:
    """PIL images other than JPEG files, as raw pixels: ``[u32 w][u32 h][u32 len(mode)] mode``."""

    name: ClassVar[str] = "pil"
    types: ClassVar[tuple[str, ...]] = (
        "PIL.Image.Image",
        "litdata.engine.items.wrappers.Pil",
    )
    priority: ClassVar[int] = 150

    def can_serialize(self, item: Any) -> bool:
        """Claims ``Pil`` wrappers and PIL images that are neither JPEG nor PNG files."""
        return isinstance(item, Pil) or (
            _is_pil(item) and type(item).__name__ not in ("JpegImageFile", "PngImageFile")
        )

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """Header, mode, then ``tobytes()``."""
        if isinstance(item, Pil):
            item, _ = wrapped_image(item)
        if not _is_pil(item):
            raise TypeError(f"expected a PIL image, got {type(item).__qualname__}")
        mode = item.mode.encode("ascii")
        return _PIL_HEADER.pack(item.width, item.height, len(mode)) + mode + item.tobytes(), None

    def deserialize(self, data: bytes | memoryview) -> PILImage:
        """The PIL image."""
        return raw_pil(data)

    def setup(self, data_format: str) -> None:
        """Nothing to prepare."""


class JPEGSerializer:
    """PIL JPEG files, stored as their original bytes; streamed back as a ``(3, H, W)`` tensor."""

    name: ClassVar[str] = "jpeg"
    types: ClassVar[tuple[str, ...]] = (
        "PIL.JpegImagePlugin.JpegImageFile",
        "litdata.engine.items.wrappers.Jpeg",
    )
    priority: ClassVar[int] = 160

    def can_serialize(self, item: Any) -> bool:
        """Claims ``Jpeg`` wrappers and images opened from JPEG files."""
        return isinstance(item, Jpeg) or _is_pil(item, "JpegImageFile")

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """The original JPEG bytes when available, else a (re-)encoded JPEG."""
        quality = DEFAULT_QUALITY
        if isinstance(item, Jpeg):
            if not item.needs_encoding:
                return item.read(), None
            if item.quality is not None:
                quality = item.quality
            item, _ = wrapped_image(item)
        elif not _is_pil(item):
            raise TypeError(f"expected a PIL image, got {type(item).__qualname__}")
        else:
            original = _file_bytes(item)
            if original is not None:
                return original, None
        buffer = io.BytesIO()
        item.convert("RGB" if item.mode not in ("RGB", "L") else item.mode).save(
            buffer, format="JPEG", quality=quality
        )
        return buffer.getvalue(), None

    def deserialize(self, data: bytes | memoryview) -> torch.Tensor:
        """A ``uint8`` RGB tensor of shape ``(3, H, W)``."""
        return decode_image_tensor(data)

    def setup(self, data_format: str) -> None:
        """Nothing to prepare."""


class PNGSerializer:
    """PIL PNG files, stored losslessly as PNG bytes; streamed back as PIL images."""

    name: ClassVar[str] = "png"
    types: ClassVar[tuple[str, ...]] = ("PIL.PngImagePlugin.PngImageFile",)
    priority: ClassVar[int] = 155

    def can_serialize(self, item: Any) -> bool:
        """Claims images opened from PNG files."""
        return _is_pil(item, "PngImageFile")

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """The source file's bytes when available, else a PNG encoding of the pixels."""
        if not _is_pil(item):
            raise TypeError(f"expected a PIL image, got {type(item).__qualname__}")
        original = _file_bytes(item)
        if original is not None:
            return original, None
        buffer = io.BytesIO()
        item.save(buffer, format="PNG")
        return buffer.getvalue(), None

    def deserialize(self, data: bytes | memoryview) -> PILImage:
        """The decoded PIL image (loaded, so no file stays open)."""
        image = _pil().open(io.BytesIO(bytes(data)))
        image.load()
        return image  # type: ignore[no-any-return]

    def setup(self, data_format: str) -> None:
        """Nothing to prepare."""


def _jpeg_bytes(image: Any, quality: int | None) -> bytes:
    """One image of a ``JpegArray`` as JPEG bytes (JPEG files and bytes are kept as they are)."""
    if isinstance(image, bytes | bytearray):
        return (
            bytes(image)
            if quality is None
            else JPEGSerializer().serialize(Jpeg(bytes=image, quality=quality))[0]
        )
    if _is_pil(image, "JpegImageFile") and quality is None:
        return JPEGSerializer().serialize(image)[0]
    wrapper = Jpeg(image=image, quality=quality) if _is_pil(image) else None
    if wrapper is None:
        wrapper = Jpeg(array=image, quality=quality)
    return JPEGSerializer().serialize(wrapper)[0]


class JPEGArraySerializer:
    """Several JPEG images as one leaf (``JpegArray``), LitData's ``jpeg_array`` layout.

    Layout: ``[u32 n][u32 size per image][JPEG bytes...]``. Plain lists of images are
    containers of ``jpeg`` leaves in litdata; wrap them in ``JpegArray`` to store one leaf.
    """

    name: ClassVar[str] = "jpeg_array"
    types: ClassVar[tuple[str, ...]] = ("litdata.engine.items.wrappers.JpegArray",)
    priority: ClassVar[int] = 145

    def can_serialize(self, item: Any) -> bool:
        """Claims ``JpegArray`` wrappers."""
        return isinstance(item, JpegArray)

    def serialize(self, item: Any) -> tuple[bytes, None]:
        """Count, sizes, then each image's JPEG bytes."""
        quality = None
        if isinstance(item, JpegArray):
            item, quality = item.images, item.quality
        if not isinstance(item, list | tuple):
            raise TypeError(f"expected a JpegArray, got {type(item).__qualname__}")
        if not item:
            raise ValueError("JpegArray(images=[]) is empty: it needs at least one image")
        encoded = [_jpeg_bytes(image, quality) for image in item]
        sizes = struct.pack(f"<{len(encoded) + 1}I", len(encoded), *map(len, encoded))
        return sizes + b"".join(encoded), None

    def deserialize(self, data: bytes | memoryview) -> list[torch.Tensor]:
        """A list of ``uint8`` RGB tensors ``(3, H, W)``."""
        (count,) = struct.unpack_from("<I", data)
        sizes = struct.unpack_from(f"<{count}I", data, 4)
        position = 4 * (count + 1)
        images = []
        for size in sizes:
            images.append(decode_image_tensor(data[position : position + size]))
            position += size
        return images

    def setup(self, data_format: str) -> None:
        """Nothing to prepare."""
