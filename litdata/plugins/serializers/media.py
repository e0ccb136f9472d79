"""The media wrappers' serializers: ``image`` (``image:<ext>``) and ``file`` (``file:<ext>``)."""

from __future__ import annotations

import io
import os
import sys
from typing import TYPE_CHECKING, Any, ClassVar

from litdata.engine.items.wrappers import File, Image, Text
from litdata.plugins.serializers._paths import extension_of, media_path
from litdata.plugins.serializers.images import (
    decode_image_tensor,
    source_bytes,
    widen_image_format,
    wrapped_image,
)

if TYPE_CHECKING:
    import torch

__all__ = ["FileSerializer", "ImageSerializer", "TextSerializer"]

IMAGE_EXTENSIONS = frozenset({"jpg", "jpeg", "png", "webp", "bmp", "gif"})
_MAGIC = ((b"\xff\xd8\xff", "jpg"), (b"\x89PNG", "png"), (b"GIF8", "gif"), (b"BM", "bmp"))


def _is_pil(item: Any) -> bool:
    image_module = sys.modules.get("PIL.Image")
    return image_module is not None and isinstance(item, image_module.Image)


def _is_image_file(item: Any) -> bool:
    """A PIL image decoded from a file of a format other than JPEG (PNG, WebP, GIF...)."""
    return _is_pil(item) and getattr(item, "format", None) not in (None, "JPEG")


def _is_image_path(item: Any) -> bool:
    return not isinstance(item, dict) and media_path(item, IMAGE_EXTENSIONS) is not None


def _sniff(data: bytes) -> str:
    for magic, extension in _MAGIC:
        if data.startswith(magic):
            return extension
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return "jpg"


def _encode(wrapper: Image) -> tuple[bytes, str]:
    image, source_format = wrapped_image(wrapper)
    fmt = (wrapper.format or source_format or "png").lower().replace("jpg", "jpeg")
    if fmt == "jpeg" and image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    options = {"quality": wrapper.quality} if wrapper.quality and fmt in ("jpeg", "webp") else {}
    buffer = io.BytesIO()
    image.save(buffer, format=fmt.upper(), **options)
    return buffer.getvalue(), "jpg" if fmt == "jpeg" else fmt


class ImageSerializer:
    """Encoded image files, streamed back as ``uint8`` RGB tensors ``(3, H, W)``.

    Claims ``Image`` wrappers, paths to image files and PIL images decoded from a PNG, WebP,
    GIF, BMP... file (JPEG files are ``jpeg``'s). The name records the encoding
    (``image:png``); a field of several encodings is recorded as ``image``.
    """

    name: ClassVar[str] = "image"
    types: ClassVar[tuple[str, ...]] = (
        "litdata.engine.items.wrappers.Image",
        "builtins.str",
        "PIL.ImageFile.ImageFile",
    )
    priority: ClassVar[int] = 220

    def can_serialize(self, item: Any) -> bool:
        """Claims ``Image`` wrappers, image files' paths and PIL images of non-JPEG files."""
        return isinstance(item, Image) or _is_image_file(item) or _is_image_path(item)

    def serialize(self, item: Any) -> tuple[bytes, str]:
        """Encoded image bytes; the name records the encoding, e.g. ``image:jpg``.

        A PIL image keeps the bytes of its file; one made in memory is encoded as PNG.
        """
        if _is_pil(item):  # a JPEG file or an image made in memory too, in a mixed field
            data, extension = source_bytes(item)
            return data, f"image:{extension}"
        if _is_image_path(item):
            item = Image(path=os.fspath(item))
        if not isinstance(item, Image):
            raise TypeError(f"expected an Image or an image path, got {type(item).__qualname__}")
        if item.needs_encoding:
            data, extension = _encode(item)
        else:
            data = item.read()
            extension = extension_of(item.path) or _sniff(data)
        return data, f"image:{'jpg' if extension == 'jpeg' else extension}"

    def deserialize(self, data: bytes | memoryview) -> torch.Tensor:
        """A ``uint8`` RGB tensor of shape ``(3, H, W)``."""
        return decode_image_tensor(data)

    def widen(self, recorded: str, other: str) -> str | None:
        """``image`` for a field of several encodings (``widen_image_format``)."""
        return widen_image_format(recorded, other)

    def setup(self, data_format: str) -> None:
        """Nothing to prepare: the bytes say how they are encoded."""


class FileSerializer:
    """``File`` wrappers, stored as the file's bytes; streamed back as ``bytes``."""

    name: ClassVar[str] = "file"
    types: ClassVar[tuple[str, ...]] = ("litdata.engine.items.wrappers.File",)
    priority: ClassVar[int] = 214

    def can_serialize(self, item: Any) -> bool:
        """Claims ``File`` wrappers only."""
        return isinstance(item, File)

    def serialize(self, item: Any) -> tuple[bytes, str]:
        """The bytes; the name records the extension, e.g. ``file:txt``."""
        if not isinstance(item, File):
            raise TypeError(f"expected a File, got {type(item).__qualname__}")
        extension = extension_of(item.path)
        return item.read(), f"file:{extension}" if extension else "file"

    def deserialize(self, data: bytes | memoryview) -> bytes:
        """The file's bytes."""
        return bytes(data)

    def setup(self, data_format: str) -> None:
        """Nothing to prepare."""


class TextSerializer:
    """``Text`` wrappers, stored as UTF-8; streamed back as ``str``."""

    name: ClassVar[str] = "text"
    types: ClassVar[tuple[str, ...]] = ("litdata.engine.items.wrappers.Text",)
    priority: ClassVar[int] = 212

    def can_serialize(self, item: Any) -> bool:
        """Claims ``Text`` wrappers only (plain ``str`` goes to the ``str`` serializer)."""
        return isinstance(item, Text)

    def serialize(self, item: Any) -> tuple[bytes, str]:
        """The UTF-8 text, or the referenced bytes as they are; the leaf is ``text``."""
        if not isinstance(item, Text):
            raise TypeError(f"expected a Text, got {type(item).__qualname__}")
        if item.text is not None:
            return item.text.encode("utf-8"), self.name
        if item.path is None and item.bytes is None:
            raise TypeError("Text() needs text=, path= or bytes=")
        return item.read(), self.name

    def deserialize(self, data: bytes | memoryview) -> str:
        """The decoded text."""
        return str(data, "utf-8")

    def setup(self, data_format: str) -> None:
        """Nothing to prepare."""
