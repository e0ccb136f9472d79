"""Decoding only the part of a JPEG that a crop box covers (``region.c`` through ctypes).

``region.c`` is compiled when litdata is installed (``hatch_build.py``: a C compiler and
libjpeg-turbo's headers, ``libjpeg62-turbo-dev`` on Debian) into ``_ldregion.so`` beside this
file. ctypes releases the GIL for each call, so thread workers decode side by side. Where the
library was not built, or ``LITDATA_VISION_REGION=0`` is set (to compare), ``available()`` is
false and crops decode whole images (simplejpeg).
"""

from __future__ import annotations

import ctypes
import functools
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from litdata.core import config

__all__ = ["LIBRARY", "JpegHeader", "RegionError", "available", "decode_region", "jpeg_header"]

#: Where the compiled decoder lives (built by hatch_build.py at install time).
LIBRARY = Path(__file__).with_name("_ldregion.so")
_LOG = logging.getLogger(__name__)
_MESSAGE = 200  # bytes for libjpeg's message
_ALIGN = 64  # the columns start at an iMCU boundary up to 32 scaled pixels before the box
_TOO_LARGE = -2
_COLOURSPACES = {1: "Gray", 2: "RGB", 3: "YCbCr", 4: "CMYK", 5: "YCCK"}  # libjpeg's J_COLOR_SPACE


class RegionError(ValueError):
    """libjpeg refused the data: its message, or that the image is larger than allowed."""

    def __init__(self, message: str, *, too_large: bool = False) -> None:
        super().__init__(message)
        self.too_large = too_large


@dataclass(frozen=True)
class JpegHeader:
    """A JPEG's size, colour space (``"YCbCr"``, ``"Gray"``...) and whether it is progressive."""

    width: int
    height: int
    colourspace: str
    progressive: bool


@functools.cache
def _library() -> ctypes.CDLL | None:
    """The compiled decoder, or None where it was not built (or cannot load here)."""
    if not config.flag("LITDATA_VISION_REGION", True) or not LIBRARY.exists():
        return None
    try:
        library = ctypes.CDLL(str(LIBRARY))
    except OSError as error:  # e.g. built against a libjpeg this machine lacks
        _LOG.warning(
            "litdata's region decoder %s cannot load (%s); crops decode whole images",
            LIBRARY,
            error,
        )
        return None
    pointer, size, number = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
    library.ld_jpeg_header.argtypes = [pointer, ctypes.c_ulong, pointer, pointer, size]
    library.ld_jpeg_region.argtypes = [
        pointer,
        ctypes.c_ulong,
        number,
        ctypes.c_long,
        number,
        number,
        number,
        number,
        pointer,
        size,
        pointer,
        pointer,
        size,
    ]
    library.ld_jpeg_header.restype = library.ld_jpeg_region.restype = number
    return library


def available() -> bool:
    """Whether the region decoder was built and loads."""
    return _library() is not None


def _address(data: bytes | memoryview) -> tuple[npt.NDArray[np.uint8], int]:
    """``data`` as an array (kept alive by the caller) and the address of its first byte."""
    array = np.frombuffer(data, dtype=np.uint8)
    return array, array.ctypes.data


def jpeg_header(data: bytes | memoryview) -> JpegHeader:
    """The header of a JPEG, read by libjpeg-turbo (no pixel decoded).

    Raises:
        RegionError: libjpeg cannot read the header, or the decoder is not built.
    """
    library = _library()
    if library is None:
        raise RegionError("litdata's region decoder is not built")
    array, address = _address(data)
    info = (ctypes.c_int * 5)()
    message = ctypes.create_string_buffer(_MESSAGE)
    if library.ld_jpeg_header(address, array.size, info, message, _MESSAGE) != 0:
        raise RegionError(message.value.decode(errors="replace"))
    return JpegHeader(info[0], info[1], _COLOURSPACES.get(info[2], "unknown"), bool(info[3]))


def decode_region(
    data: bytes | memoryview,
    scale: int,
    columns: tuple[int, int],
    rows: tuple[int, int],
    max_pixels: int,
) -> tuple[npt.NDArray[np.uint8], int, int]:
    """Rows ``rows`` and at least columns ``columns`` of the image decoded at ``1/scale``.

    Args:
        data: The JPEG's bytes (baseline; RGB, YCbCr or grey).
        scale: The DCT scale's denominator: 1, 2, 4 or 8.
        columns: First and end column, in pixels of the scaled image.
        rows: First and end row, in pixels of the scaled image.
        max_pixels: Images declaring more pixels are refused before decoding.

    Returns:
        ``(pixels, left, top)``: the ``(H, W, 3)`` uint8 RGB pixels and where their first pixel
        lies in the scaled image (``left`` may be before ``columns[0]``: an iMCU boundary).

    Raises:
        RegionError: The data is corrupt or truncated, or the image is larger than allowed.
    """
    library = _library()
    if library is None:
        raise RegionError("litdata's region decoder is not built")
    if not (0 <= columns[0] < columns[1] and 0 <= rows[0] < rows[1]):
        raise RegionError(f"the region {columns} x {rows} is not inside the image")
    array, address = _address(data)
    count = rows[1] - rows[0]
    out = np.empty(count * (columns[1] - columns[0] + _ALIGN) * 3, dtype=np.uint8)
    place = (ctypes.c_int * 4)()
    message = ctypes.create_string_buffer(_MESSAGE)
    status = library.ld_jpeg_region(
        address,
        array.size,
        scale,
        max_pixels,
        columns[0],
        rows[0],
        columns[1],
        rows[1],
        out.ctypes.data,
        out.size,
        place,
        message,
        _MESSAGE,
    )
    if status != 0:
        raise RegionError(message.value.decode(errors="replace"), too_large=status == _TOO_LARGE)
    width, height, left, top = place
    return out[: width * height * 3].reshape(height, width, 3), left, top
