"""Media wrappers (LitData's): mark a sample leaf as a file, text, image or tensor.

``Image(path=...)`` keeps the file's encoded bytes; ``Image(array=...)`` or ``Image(image=...)``
encodes pixels (PNG by default, or ``format``/``quality``). ``File(path=...)`` stores any
file's bytes. Wrappers are leaves of a sample, not containers.
"""

from __future__ import annotations

import builtins
import os
from dataclasses import dataclass
from typing import Any

__all__ = ["File", "Image", "Jpeg", "Pil", "Tensor", "Text"]


@dataclass
class _MediaRef:
    path: str | os.PathLike[str] | None = None
    bytes: builtins.bytes | bytearray | None = None

    def __post_init__(self) -> None:
        if self.path is not None:
            self.path = os.fspath(self.path)
        if self.bytes is not None and not isinstance(self.bytes, builtins.bytes | bytearray):
            raise TypeError(f"bytes= must be bytes or bytearray, got {type(self.bytes).__name__}")

    def read(self) -> builtins.bytes:
        """The referenced bytes (reading the file at ``path`` if needed)."""
        if self.bytes is not None:
            return builtins.bytes(self.bytes)
        if self.path is None:
            raise ValueError(f"{type(self).__name__}() needs path= or bytes=")
        with open(self.path, "rb") as handle:
            return handle.read()


@dataclass
class File(_MediaRef):
    """A file stored as its bytes; it streams back as ``bytes``."""


@dataclass
class Text(_MediaRef):
    """Text stored as UTF-8 (``text=``, or the bytes of ``path``/``bytes``); read as ``str``.

    Attributes:
        text: The text itself.
    """

    text: str | None = None


@dataclass
class _Pixels(_MediaRef):
    """An image given as a file (``path``/``bytes``), as pixels, or as a PIL image.

    Attributes:
        array: Pixels (``HxW`` or ``HxWxC``).
        image: A PIL image.
        mode: A PIL mode to convert to first (e.g. ``"RGB"``).
    """

    array: Any = None
    image: Any = None
    mode: str | None = None

    @property
    def needs_encoding(self) -> bool:
        """Whether pixels must be encoded (rather than stored as the given bytes)."""
        return any(value is not None for value in (self.array, self.image, self.mode))


@dataclass
class Image(_Pixels):
    """An image stored as encoded bytes; it streams back as a ``uint8`` RGB tensor ``(3, H, W)``.

    Attributes:
        format: The encoding (``"jpeg"``, ``"png"``, ``"webp"``...); PNG for arrays by default.
        quality: JPEG/WebP quality.
    """

    format: str | None = None
    quality: int | None = None

    @property
    def needs_encoding(self) -> bool:
        """Whether pixels must be encoded (rather than stored as the given bytes)."""
        return super().needs_encoding or self.format is not None or self.quality is not None


@dataclass
class Jpeg(_Pixels):
    """A JPEG image; streams back as a ``uint8`` RGB tensor ``(3, H, W)``.

    Given only ``path``/``bytes``, the bytes are stored as they are; otherwise (pixels, a
    ``mode`` or a ``quality``) the pixels are (re-)encoded.

    Attributes:
        quality: The JPEG quality; the ``jpeg`` serializer's default (95) when not given.
    """

    quality: int | None = None

    @property
    def needs_encoding(self) -> bool:
        """Whether pixels must be encoded (rather than stored as the given bytes)."""
        return super().needs_encoding or self.quality is not None


@dataclass
class Pil(_Pixels):
    """An image stored as raw pixels (LitData's ``pil`` layout); streams back as a PIL image."""


@dataclass
class Tensor(_MediaRef):
    """An array stored as a tensor; streams back as a ``torch.Tensor``.

    A 1-D array (or raw ``path``/``bytes`` with a ``dtype``) is stored without a header, as
    token streams are.

    Attributes:
        array: A numpy array or tensor.
        dtype: The dtype of raw ``path``/``bytes`` data (a numpy or torch dtype, or its name).
    """

    array: Any = None
    dtype: Any = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.array is None and self.dtype is None:
            raise TypeError(
                "Tensor() needs array=, or path=/bytes= with dtype= (e.g. dtype='int16') to "
                "say how to read the raw data."
            )

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape."""
        if self.array is None:
            raise ValueError("Tensor.shape needs array=")
        return tuple(self.array.shape)
