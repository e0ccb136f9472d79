"""``nifti``: NIfTI volumes (``nifti:nii``, ``nifti:nii.gz``), read back as nibabel images.

nibabel is imported only when a volume is met (``pip install '<litdata clone>[nifti]'``).
"""

from __future__ import annotations

import gzip
import io
import os
import struct
import sys
from typing import Any, ClassVar

import numpy as np

from litdata.core.imports import require
from litdata.engine.items.wrappers import Nifti
from litdata.plugins.serializers._paths import extension_of, media_path

__all__ = ["NiftiSerializer"]

_EXTENSIONS = ("nii", "nii.gz")
_GZIP = b"\x1f\x8b"
#: ``sizeof_hdr``, the first field of a NIfTI header, tells NIfTI-1 from NIfTI-2.
_NIFTI1_HEADER, _NIFTI2_HEADER = 348, 540


def _nibabel() -> Any:
    return require("nibabel", extra="nifti", purpose="Writing and reading NIfTI volumes")


def _is_image(item: Any) -> bool:
    module = sys.modules.get("nibabel.spatialimages")
    return module is not None and isinstance(item, module.SpatialImage)


def _image_bytes(image: Any) -> bytes:
    try:
        return bytes(image.to_bytes())
    except Exception as error:
        raise TypeError(
            f"{type(image).__qualname__} cannot be stored as one NIfTI file ({error}); convert "
            f"it with nibabel.Nifti1Image(image.get_fdata(), image.affine)"
        ) from error


def _image_file(image: Any) -> tuple[bytes, str]:
    """The file a loaded image came from, as it is; else the image as an uncompressed file."""
    filename = image.get_filename() if hasattr(image, "get_filename") else None
    if filename and extension_of(filename) in _EXTENSIONS and os.path.isfile(filename):
        with open(filename, "rb") as handle:
            return handle.read(), f"nifti:{extension_of(filename)}"
    return _image_bytes(image), "nifti:nii"


#: NIfTI-1 and NIfTI-2 headers: (``bitpix``, ``dim``, ``vox_offset``) as struct formats/offsets.
_LAYOUTS = {
    _NIFTI1_HEADER: (("h", 72), ("8h", 40), ("f", 108)),
    _NIFTI2_HEADER: (("h", 14), ("8q", 16), ("q", 168)),
}


def _volume_size(header: bytes) -> int | None:
    """A NIfTI file's size from its header (offset of the voxels plus their bytes), if valid."""
    for order in "<>":
        if len(header) < _NIFTI1_HEADER:
            return None
        (size,) = struct.unpack_from(f"{order}i", header)
        layout = _LAYOUTS.get(size)
        if layout is None or len(header) < size:
            continue
        (bitpix,), dims, (offset,) = (
            struct.unpack_from(order + code, header, at) for code, at in layout
        )
        rank = dims[0]
        if not 0 < rank < len(dims) or bitpix <= 0 or offset < 0:
            return None
        voxels = 1
        for extent in dims[1 : rank + 1]:
            voxels *= max(int(extent), 0)
        return int(offset) + voxels * int(bitpix) // 8
    return None


def _gunzip(data: bytes) -> bytes:
    """A ``.nii.gz`` leaf, never inflated past the size its own header states.

    Raises:
        ValueError: The header is not NIfTI's, or the file inflates past the size it states
            (a decompression bomb in the dataset).
    """
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
        header = stream.read(_NIFTI2_HEADER)
        size = _volume_size(header)
        if size is None:
            raise ValueError("a .nii.gz leaf does not start with a NIfTI header")
        volume = header + stream.read(max(0, size - len(header)) + 1)
    if len(volume) > size:
        raise ValueError(
            f"a .nii.gz leaf inflates past the {size:,} bytes its header states: refused as "
            f"a decompression bomb"
        )
    return volume


class NiftiSerializer:
    """``Nifti`` wrappers, nibabel images and ``.nii``/``.nii.gz`` paths.

    Args:
        decode: ``False`` reads leaves back as the file's bytes (a nibabel image otherwise), as
            LitData's ``decode=False`` does; no nibabel needed then.
    """

    name: ClassVar[str] = "nifti"
    types: ClassVar[tuple[str, ...]] = (
        "litdata.engine.items.wrappers.Nifti",
        "builtins.str",
        "nibabel.spatialimages.SpatialImage",
    )
    priority: ClassVar[int] = 219

    def __init__(self, decode: bool = True) -> None:
        self.decode = decode

    def can_serialize(self, item: Any) -> bool:
        """Claims ``Nifti`` wrappers, nibabel images and existing NIfTI files."""
        if isinstance(item, Nifti) or _is_image(item):
            return True
        return not isinstance(item, dict) and media_path(item, _EXTENSIONS) is not None

    def serialize(self, item: Any) -> tuple[bytes, str]:
        """The file's bytes (gzipped or not, as given), or an image as an uncompressed file.

        Names are LitData 0.2.76's: a path ``*.nii.gz`` is ``nifti:nii.gz``, but a
        ``Nifti(path=*.nii.gz)`` is ``nifti:gz`` (the last suffix) and ``Nifti(bytes=...)`` is
        ``nifti:nii``; readers recognise gzip from the bytes, so every name reads back.
        """
        path = None if isinstance(item, dict) else media_path(item, _EXTENSIONS)
        if path is not None:
            with open(path, "rb") as handle:
                return handle.read(), f"nifti:{extension_of(path)}"
        if _is_image(item):
            return _image_file(item)
        if not isinstance(item, Nifti):
            raise TypeError(f"expected a Nifti or a nibabel image, got {type(item).__qualname__}")
        if item.image is not None:
            return _image_file(item.image)
        if item.array is not None:
            affine = np.eye(4) if item.affine is None else np.asarray(item.affine)
            image = _nibabel().Nifti1Image(np.asarray(item.array), affine)
            return _image_bytes(image), "nifti:nii"
        suffix = os.path.splitext(item.path)[1].lstrip(".").lower() if item.path else ""
        return item.read(), f"nifti:{suffix or 'nii'}"

    def deserialize(self, data: bytes | memoryview) -> Any:
        """A ``nibabel.Nifti1Image`` (``Nifti2Image`` for NIfTI-2 files), or the file's bytes."""
        raw = bytes(data)
        if not self.decode:
            return raw
        if raw.startswith(_GZIP):
            raw = _gunzip(raw)
        nibabel = _nibabel()
        (header_size,) = struct.unpack_from("<i", raw)
        if header_size not in (_NIFTI1_HEADER, _NIFTI2_HEADER):
            (header_size,) = struct.unpack_from(">i", raw)
        kind = nibabel.Nifti2Image if header_size == _NIFTI2_HEADER else nibabel.Nifti1Image
        return kind.from_bytes(raw)

    def setup(self, data_format: str) -> None:
        """Nothing to prepare: gzip is recognised from the bytes."""
