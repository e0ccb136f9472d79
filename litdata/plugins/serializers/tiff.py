"""``tifffile`` (and its alias ``tiff``): TIFF images, read back as numpy arrays.

LitData registers the serializer as ``tifffile`` but records ``Tiff`` wrappers as ``tiff``;
both names decode here. tifffile is imported only when an image is met
(``pip install '<litdata clone>[tiff]'``).
"""

from __future__ import annotations

import io
from typing import Any, ClassVar

import numpy as np

from litdata.core.imports import require
from litdata.engine.items.wrappers import Tiff
from litdata.plugins.serializers._paths import media_path

__all__ = ["TiffSerializer", "TifffileSerializer"]

_EXTENSIONS = ("tif", "tiff")


def _tifffile() -> Any:
    return require("tifffile", extra="tiff", purpose="Writing and reading TIFF images")


class TifffileSerializer:
    """``Tiff`` wrappers (recorded as ``tiff``) and ``.tif``/``.tiff`` paths (as ``tifffile``)."""

    name: ClassVar[str] = "tifffile"
    types: ClassVar[tuple[str, ...]] = ("litdata.engine.items.wrappers.Tiff", "builtins.str")
    priority: ClassVar[int] = 215

    def can_serialize(self, item: Any) -> bool:
        """Claims ``Tiff`` wrappers and existing TIFF files."""
        return isinstance(item, Tiff) or (
            not isinstance(item, dict) and media_path(item, _EXTENSIONS) is not None
        )

    def serialize(self, item: Any) -> tuple[bytes, str]:
        """The file's bytes, or pixels written as a TIFF."""
        if not isinstance(item, Tiff):
            path = None if isinstance(item, dict) else media_path(item, _EXTENSIONS)
            if path is None:
                raise TypeError(f"expected a Tiff or a TIFF path, got {type(item).__qualname__}")
            return Tiff(path=path).read(), "tifffile"
        pixels = item.array if item.array is not None else item.image
        if pixels is None:
            return item.read(), "tiff"
        buffer = io.BytesIO()
        _tifffile().imwrite(buffer, np.asarray(pixels))
        return buffer.getvalue(), "tiff"

    def deserialize(self, data: bytes | memoryview) -> np.ndarray:
        """The image as a numpy array."""
        return _tifffile().imread(io.BytesIO(bytes(data)))  # type: ignore[no-any-return]

    def setup(self, data_format: str) -> None:
        """Nothing to prepare."""


class TiffSerializer(TifffileSerializer):
    """Reads leaves LitData recorded as ``tiff``; writing goes through ``tifffile``."""

    name: ClassVar[str] = "tiff"
    types: ClassVar[tuple[str, ...]] = ()
    priority: ClassVar[int] = 1

    def can_serialize(self, item: Any) -> bool:
        """Claims nothing: ``tifffile`` writes TIFFs."""
        return False
