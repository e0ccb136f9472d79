"""W6 stored at a bounded resolution: bytes and decode cost against the images as they are.

Bounds the first ``--count`` W6 photos with ``ld.vision.bound_resolution`` (short side at most
``--max-side`` px, JPEG quality ``--quality``) and measures, on one thread (CPU seconds of
this thread per 1,000 images, robust to a shared machine): the bytes stored, a full decode
(simplejpeg), the fused crop (``RandomResizedCrop(224)``) with its region decoder and without
(``LITDATA_VISION_REGION=0``: whole images at a DCT scale) and the plain Pillow recipe.

    PYTHONPATH=. .venv/bin/python bench/vision_bounded.py --out bench/results/DATE-vision-bounded.md
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def cpu_per_1k(fn: Callable[[bytes], Any], images: list[bytes], repeats: int = 3) -> float:
    """The best of ``repeats`` passes: CPU seconds of this thread per 1,000 images."""
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        for data in images:
            fn(data)
        best = min(best, time.thread_time() - start)
    return best * 1000 / len(images)


def without_region(fn: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    """``fn`` run with the region decoder turned off (``LITDATA_VISION_REGION=0``)."""
    import os

    from litdata.vision import region

    def run(data: bytes) -> Any:
        os.environ["LITDATA_VISION_REGION"] = "0"
        region._library.cache_clear()
        try:
            return fn(data)
        finally:
            del os.environ["LITDATA_VISION_REGION"]
            region._library.cache_clear()

    return run


def main() -> None:
    """Measure and write the table."""
    import simplejpeg
    from vision_data import plain_transform
    from workloads import Source

    import litdata as ld

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--max-side", type=int, default=256)
    parser.add_argument("--quality", type=int, default=90)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    source = Source("W6")
    originals = [source.image(i) for i in range(args.count)]
    start = time.thread_time()
    bounded = [
        ld.vision.bound_resolution(d, args.max_side, quality=args.quality) for d in originals
    ]
    encode_ms = (time.thread_time() - start) * 1000 / args.count
    crop = ld.vision.RandomResizedCrop(224, seed=0)
    steps: dict[str, Callable[[bytes], Any]] = {
        "full decode (simplejpeg)": lambda d: simplejpeg.decode_jpeg(d, colorspace="RGB"),
        "fused RandomResizedCrop(224)": crop,
        "fused, whole images (no region decoder)": without_region(crop),
        "plain Pillow recipe": lambda d: plain_transform({"image": d, "label": 0}),
    }
    rows = [
        f"| | as stored (W6) | short side <= {args.max_side}, q{args.quality} | saving |",
        "|---|---:|---:|---:|",
    ]
    size_a = sum(map(len, originals)) / len(originals) / 1e3
    size_b = sum(map(len, bounded)) / len(bounded) / 1e3
    rows.append(f"| mean KB per image | {size_a:.1f} | {size_b:.1f} | {size_a / size_b:.2f}x |")
    for name, fn in steps.items():
        a, b = cpu_per_1k(fn, originals), cpu_per_1k(fn, bounded)
        rows.append(f"| {name}, CPU s / 1k img | {a:.2f} | {b:.2f} | {a / b:.2f}x |")
    text = (
        f"# W6 at a bounded resolution ({args.count} images, one thread, best of 3)\n\n"
        + "\n".join(rows)
        + f"\n\nbound_resolution itself: {encode_ms:.1f} ms CPU per image (at optimize time).\n"
    )
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
