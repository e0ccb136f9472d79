"""``RandomResizedCrop`` fused with decoding: choose the box, decode only what it needs, resize.

The box is drawn from the header's size, the image is decoded at the smallest DCT scale that
still covers the box at the output size, and only the box's region where the decoder allows
it (``decoding``); OpenCV (bilinear, GIL released) resizes the box to the output and flips it:
a plain resize when the box lies on whole pixels, one affine warp when a reduced scale puts its
edges between pixels. Inside a ``StreamingDataset`` the
draws come from the sample's key (dataset seed, epoch, index: ``streaming.epoch.sample_key``), so an
epoch's crops are the same whatever the workers, after a resume, and in ``loader.replay``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from litdata.core.imports import require
from litdata.streaming.epoch.sample_key import current
from litdata.vision.boxes import Box, Draws, Uniforms, fresh_uniforms, sample_box
from litdata.vision.decoding import (
    DEFAULT_MAX_PIXELS,
    Decoded,
    ImageDecodeError,
    decode_for_box,
    read_header,
)

__all__ = ["RandomResizedCrop"]

_OUTSIDE = "an image transformed outside a streaming dataset"
_ENCODED = (bytes, bytearray, memoryview)
_DIMS = 3  # height, width, channels (or channels, height, width)


@functools.cache
def _cv2() -> Any:
    """OpenCV, set to one thread per process on first use.

    Its parallel loops split each small warp over threads that spin while they wait: measured
    on W6 with 2 cores, 2.0 CPU s per 1,000 crops instead of 1.0 and, beside another busy
    process, a seventh of the throughput. Loader workers (threads or processes) are the
    parallelism; call ``cv2.setNumThreads(n)`` afterwards to choose otherwise.
    """
    cv2 = require("cv2", extra="vision", purpose="Resizing crops")
    cv2.setNumThreads(1)
    return cv2


def resize_box(decoded: Decoded, box: Box, size: tuple[int, int]) -> npt.NDArray[np.uint8]:
    """``box`` (in full-size pixels) of ``decoded`` resized to ``size`` (height, width), flipped.

    The result is ``(3, height, width)`` uint8, contiguous, flipped where the box says so.

    At full scale the box is a slice and OpenCV's bilinear ``resize`` maps it onto the output
    (pixel centres aligned, as torchvision's crop then resize); at a reduced scale one bilinear
    warp places the box's fractional edges exactly.
    """
    height, width = size
    cv2 = _cv2()
    pixels = decoded.pixels
    if decoded.scale_x == decoded.scale_y == 1.0:
        top, left = box.top - decoded.top, box.left - decoded.left
        part = pixels[top : top + box.height, left : left + box.width]
        out = cv2.resize(part, (width, height), interpolation=cv2.INTER_LINEAR)
        if box.flip:
            out = cv2.flip(out, 1)
    else:
        out = _warp(pixels, box, decoded, size)
    planes = np.empty((3, height, width), dtype=np.uint8)
    cv2.split(out, [planes[0], planes[1], planes[2]])  # into place: 6x faster than a transpose
    return planes


def _warp(
    pixels: npt.NDArray[np.uint8], box: Box, decoded: Decoded, size: tuple[int, int]
) -> npt.NDArray[np.uint8]:
    """One bilinear warp of the box (fractional in ``pixels``), the flip folded into it."""
    height, width = size
    step_x = box.width * decoded.scale_x / width
    step_y = box.height * decoded.scale_y / height
    left = box.left * decoded.scale_x - decoded.left
    top = box.top * decoded.scale_y - decoded.top
    if box.flip:  # output column c samples source column left + (width - 1 - c + 0.5) * step
        row_x = [-step_x, 0.0, left + (width - 0.5) * step_x - 0.5]
    else:
        row_x = [step_x, 0.0, left + 0.5 * step_x - 0.5]
    matrix = np.array([row_x, [0.0, step_y, top + 0.5 * step_y - 0.5]])
    cv2 = _cv2()
    return cv2.warpAffine(  # type: ignore[no-any-return]
        pixels,
        matrix,
        (width, height),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REPLICATE,
    )


class RandomResizedCrop:
    """Decode, crop a random box, resize it and flip it, as one step of a dataset's transform.

    ``transform=ld.vision.RandomResizedCrop(224)`` takes encoded image bytes (JPEG fastest;
    PNG and others are decoded in full), a decoded image (a ``(3, H, W)`` uint8 tensor as
    ``ld.Image``/``ld.Jpeg`` leaves stream back, a PIL image or an ``(H, W, 3)`` array) or a
    sample dict whose ``field`` holds one of those; it returns a ``(3, size, size)`` uint8
    tensor (the dict with that field replaced). The box follows torchvision's
    ``RandomResizedCrop`` (area in ``scale``, aspect ratio in ``ratio``, then a horizontal
    flip with probability ``flip``).

    Args:
        size: The output's side, or ``(height, width)``.
        scale: The box's area as a fraction of the image's, lower and upper bound.
        ratio: The box's width / height, lower and upper bound.
        flip: The probability of a horizontal flip (0 for none).
        field: The key of the image in a dict sample.
        seed: Mixed into the draws, so two crops of one pipeline differ; outside a streaming
            dataset it seeds this transform's own generator (None: from the OS).
        max_pixels: Images declaring more pixels are refused before decoding.
    """

    def __init__(
        self,
        size: int | tuple[int, int],
        scale: tuple[float, float] = (0.08, 1.0),
        ratio: tuple[float, float] = (3 / 4, 4 / 3),
        flip: float = 0.5,
        *,
        field: str = "image",
        seed: int | None = None,
        max_pixels: int = DEFAULT_MAX_PIXELS,
    ) -> None:
        self.size = (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))
        if min(self.size) <= 0:
            raise ValueError(f"RandomResizedCrop needs a positive size, got {size!r}.")
        if not 0 < scale[0] <= scale[1] or not 0 < ratio[0] <= ratio[1]:
            raise ValueError(
                f"RandomResizedCrop needs 0 < low <= high for scale and ratio, got "
                f"scale={scale!r}, ratio={ratio!r}."
            )
        self.scale, self.ratio, self.flip = scale, ratio, float(flip)
        self.field, self.seed, self.max_pixels = field, seed, max_pixels
        self._own: Uniforms | None = None

    def __repr__(self) -> str:
        return (
            f"RandomResizedCrop(size={self.size}, scale={self.scale}, ratio={self.ratio}, "
            f"flip={self.flip})"
        )

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_own": None}  # a worker starts its own generator

    def _uniforms(self) -> tuple[Uniforms, str]:
        """The draws for the current sample, and where it is (for errors)."""
        key = current()
        if key is not None:
            return Draws(key.seed, key.epoch, key.index, self.seed or 0), key.where()
        if self._own is None:
            self._own = fresh_uniforms(self.seed)
        return self._own, _OUTSIDE

    def box(self, width: int, height: int, uniforms: Uniforms) -> Box:
        """The crop box of an image of ``width`` x ``height`` for these draws."""
        return sample_box(
            width, height, uniforms, scale=self.scale, ratio=self.ratio, flip=self.flip
        )

    def __call__(self, sample: Any) -> Any:
        """The crop of ``sample`` (an image, or a dict with the image in ``field``)."""
        if isinstance(sample, Mapping):
            if self.field not in sample:
                raise KeyError(
                    f"RandomResizedCrop(field={self.field!r}) got a sample with the fields "
                    f"{sorted(sample)}; pass field= the name of the image's field."
                )
            return {**sample, self.field: self.crop(sample[self.field])}
        return self.crop(sample)

    def crop(self, image: Any) -> Any:
        """The crop of one image (encoded bytes or decoded pixels) as a ``(3, h, w)`` tensor."""
        import torch

        uniforms, where = self._uniforms()
        if isinstance(image, _ENCODED) or (
            isinstance(image, np.ndarray) and image.ndim == 1 and image.dtype == np.uint8
        ):
            data = bytes(image) if isinstance(image, bytearray | np.ndarray) else image
            header = read_header(data, where, self.max_pixels)
            box = self.box(header.width, header.height, uniforms)
            decoded = decode_for_box(
                data, header, box, self.size, where, max_pixels=self.max_pixels
            )
        else:
            decoded = Decoded(_decoded(image, where))
            box = self.box(decoded.pixels.shape[1], decoded.pixels.shape[0], uniforms)
        return torch.from_numpy(resize_box(decoded, box, self.size))


def _decoded(image: Any, where: str) -> npt.NDArray[np.uint8]:
    """Decoded pixels as ``(H, W, 3)`` uint8: from a CHW tensor, a PIL image or an HWC array.

    Raises:
        ImageDecodeError: It is none of those.
    """
    if hasattr(image, "convert") and hasattr(image, "size"):  # a PIL image
        return np.asarray(image.convert("RGB"))
    array = image.numpy() if hasattr(image, "numpy") else image
    if isinstance(array, np.ndarray) and array.dtype == np.uint8 and array.ndim == _DIMS:
        if array.shape[0] in (1, 3) and array.shape[2] not in (1, 3):
            array = array.transpose(1, 2, 0)  # CHW, as ld.Image leaves stream back
        if array.shape[2] == 1:
            array = np.repeat(array, 3, axis=2)
        return np.ascontiguousarray(array)
    raise ImageDecodeError(
        f"RandomResizedCrop got {type(image).__name__} for {where}: it takes encoded image "
        "bytes, a (3, H, W) uint8 tensor, a PIL image or an (H, W, 3) uint8 array."
    )
