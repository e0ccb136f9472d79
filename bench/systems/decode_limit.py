"""The decode limit of W6: the fastest installed decoder, full decode from RAM, one thread.

Not a loader: the JPEG bytes are read into memory first (untimed), each candidate decoder
(simplejpeg, Pillow, OpenCV) decodes the first 500 images once (untimed, to pick the
fastest), then the fastest decodes ``LIMIT_IMAGES`` images in full on one thread, timed by
this thread's CPU clock. The cell's images/s is that rate times the cores a loader with this
many workers can use (``max(1, min(workers, cores))``): the ceiling for any system that
decodes every image in full on those cores.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from systems.base import System, Unsupported, cpu_count

LIMIT_IMAGES = 5_000
_PICK = 500


def _decoders() -> dict[str, Callable[[bytes], Any]]:
    """The full decoders installed here, by name."""
    found: dict[str, Callable[[bytes], Any]] = {}
    try:
        import simplejpeg

        found["simplejpeg"] = lambda data: simplejpeg.decode_jpeg(data, colorspace="RGB")
    except ImportError:
        pass
    try:
        import cv2

        cv2.setNumThreads(1)
        found["opencv"] = lambda data: cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    except ImportError:
        pass
    from PIL import Image

    def pillow(data: bytes) -> Any:
        with Image.open(io.BytesIO(data)) as image:
            return np.asarray(image.convert("RGB"))

    found["pillow"] = pillow
    return found


def _rate(decode: Callable[[bytes], Any], images: list[bytes]) -> float:
    """Images per CPU second of this thread."""
    start = time.thread_time()
    for data in images:
        decode(data)
    return len(images) / (time.thread_time() - start)


class DecodeLimit(System):
    """One thread's full-decode rate times the cores: the ceiling of a full-decode pipeline."""

    name = "decode-limit"

    def stream(
        self, workload: str, dataset: Path, shuffle: bool, num_workers: int
    ) -> dict[str, Any]:
        if workload != "W6":
            raise Unsupported("the decode limit is defined for W6's JPEGs")
        source = self.source(workload)
        images = [source.image(i) for i in range(LIMIT_IMAGES)]
        decoders = _decoders()
        picked = {name: _rate(fn, images[:_PICK]) for name, fn in decoders.items()}
        best = max(picked, key=lambda name: picked[name])
        one_thread = _rate(decoders[best], images)
        cores = max(1, min(num_workers, cpu_count()))
        self.note = (
            f"{best} full decode, {one_thread:.0f} img/s on one thread x {cores} core(s);"
            f" picked from {', '.join(f'{k} {v:.0f}' for k, v in picked.items())} img/s"
        )
        return {
            "metrics": {
                "samples_per_s": one_thread * cores,
                "cpu_s_per_1k": 1000 / one_thread,
                "first_batch_ms": 256 / (one_thread * cores) * 1e3,
                "one_thread_per_s": one_thread,
            },
            "check": {"decoded": LIMIT_IMAGES},
            "check_kind": "none",  # nothing streamed: the decoders' own errors would show
        }


SYSTEM = DecodeLimit
