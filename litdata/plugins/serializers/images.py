"""PIL images: ``pil`` (raw pixels, LitData's layout), ``jpeg`` and ``png`` (encoded bytes).

What each image leaf is stored as, and streams back as:

- a PIL image opened from a JPEG file (or a ``Jpeg`` wrapper): ``jpeg``, a ``uint8`` RGB
  tensor ``(3, H, W)``;
- a PIL image opened from any other file (PNG, WebP, GIF, BMP...): ``image:<ext>``
  (:class:`~litdata.plugins.serializers.media.ImageSerializer`), the same tensor;
- a PIL image made in memory (``Image.new``, ``.convert()``...): ``pil``, a PIL image.

A field that mixes encoded files (JPEG and PNG, say) is recorded as ``image``, which decodes
any of them to that tensor: the encoded-image names widen to it (:func:`widen_image_format`),
within one writer and when the workers' indexes merge. Pillow is imported only when an image
is met (``pip install '<litdata clone>[images]'``).
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
    "source_bytes",
    "widen_image_format",
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


def _from_file(item: Any) -> bool:
    """Whether ``item`` is a PIL image decoded from an encoded file (it has a ``format``)."""
    return _is_pil(item) and bool(getattr(item, "format", None))


def _is_encoded_image_format(name: str) -> bool:
    base, _, _ = name.partition(":")
    return name == "jpeg" or base == "image"


def widen_image_format(recorded: str, other: str) -> str | None:
    """The ``data_format`` name that decodes leaves recorded as ``recorded`` and ``other``.

    ``jpeg``, ``image`` and ``image:<ext>`` payloads are all an encoded image file's bytes,
    decoded alike to a ``uint8`` RGB tensor, so any two of them widen to ``image``. Any other
    pair (``pil`` raw pixels, say) does not widen: ``None``.
    """
    if recorded == other:
        return recorded
    if _is_encoded_image_format(recorded) and _is_encoded_image_format(other):
        return "image"
    return None


def source_bytes(image: PILImage) -> tuple[bytes, str]:
    """An image's encoded bytes and their extension (``"jpg"``, ``"png"``...).

    The bytes of the file it was opened from when it is still there; otherwise the pixels
    encoded in the format it was decoded from (PNG when it has none).
    """
    fmt = (getattr(image, "format", None) or "PNG").lower()
    extension = "jpg" if fmt == "jpeg" else fmt
    original = _file_bytes(image)
    if original is not None:
        return original, extension
    if fmt == "jpeg" and image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format=fmt.upper())
    return buffer.getvalue(), extension


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
    """PIL images made in memory, as raw pixels: ``[u32 w][u32 h][u32 len(mode)] mode``."""

    name: ClassVar[str] = "pil"
    types: ClassVar[tuple[str, ...]] = (
        "PIL.Image.Image",
        "litdata.engine.items.wrappers.Pil",
    )
    priority: ClassVar[int] = 150

    def can_serialize(self, item: Any) -> bool:
        """Claims ``Pil`` wrappers and PIL images not decoded from a file (no ``format``)."""
        return isinstance(item, Pil) or (_is_pil(item) and not _from_file(item))

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
    """PIL JPEG files, stored as their original bytes; streamed back as a ``(3, H, W)`` tensor.

    A field whose first leaf was a JPEG file may hold other image files too: those are stored
    as their own bytes under ``image:<ext>``, and the field widens to ``image``.
    """

    name: ClassVar[str] = "jpeg"
    types: ClassVar[tuple[str, ...]] = (
        "PIL.JpegImagePlugin.JpegImageFile",
        "litdata.engine.items.wrappers.Jpeg",
    )
    priority: ClassVar[int] = 160

    def can_serialize(self, item: Any) -> bool:
        """Claims ``Jpeg`` wrappers and images opened from JPEG files."""
        return isinstance(item, Jpeg) or _is_pil(item, "JpegImageFile")

    def serialize(self, item: Any) -> tuple[bytes, str | None]:
        """The original JPEG bytes when available, else a (re-)encoded JPEG.

        An image decoded from a file of another format keeps its encoding: its bytes and
        ``image:<ext>``.
        """
        quality = DEFAULT_QUALITY
        if _from_file(item) and not _is_pil(item, "JpegImageFile"):
            data, extension = source_bytes(item)
            return data, f"image:{extension}"
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

    def widen(self, recorded: str, other: str) -> str | None:
        """``image`` for a field of JPEG and other image files (:func:`widen_image_format`)."""
        return widen_image_format(recorded, other)

    def setup(self, data_format: str) -> None:
        """Nothing to prepare."""


class PNGSerializer:
    """PNG files as PNG bytes, streamed back as PIL images: for datasets written that way.

    PNG files are written as ``image:png`` now (decoded to a tensor, like every encoded image
    file); pass ``serializers={"png": PNGSerializer()}`` to write this layout.
    """

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
            raise ValueError("JpegArray(images=[]) is empty: it needs a non-empty list of images")
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
