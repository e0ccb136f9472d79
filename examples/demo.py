"""The README demo: optimize a synthetic image+label dataset, read it back, say how fast.

Run it with ``make demo`` (which creates the virtualenv first), or ``python examples/demo.py``.
"""

from __future__ import annotations

import io
import random
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image as PILImage

import litdata as ld
from litdata.cli import main as verify

NUM_SAMPLES = 2_000
SIZE = 64


def synthetic_jpeg(index: int) -> bytes:
    """A small, distinct JPEG: a colour gradient that depends on ``index``."""
    y, x = np.mgrid[0:SIZE, 0:SIZE]
    pixels = np.stack([(x * 4 + index) % 256, (y * 4 + 2 * index) % 256, (x + y + index) % 256], -1)
    buffer = io.BytesIO()
    PILImage.fromarray(pixels.astype(np.uint8)).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def make_sample(index: int) -> dict[str, object]:
    """``optimize``'s function: one input (an index) becomes one image+label sample."""
    return {"image": ld.Image(bytes=synthetic_jpeg(index)), "label": index % 10}


def main() -> None:
    """Optimize, then read back, printing what happens."""
    workdir = Path(tempfile.mkdtemp(prefix="litdata-demo-"))
    try:
        print(
            f"litdata {ld.__version__}: optimizing {NUM_SAMPLES} synthetic {SIZE}x{SIZE} "
            f"JPEGs with 2 workers"
        )
        start = time.perf_counter()
        output = workdir / "dataset"
        ld.optimize(
            make_sample, range(NUM_SAMPLES), output, chunk_bytes="1MB", num_workers=2, verbose=False
        )
        seconds = time.perf_counter() - start
        files = sorted(path.name for path in output.iterdir())
        size = sum(path.stat().st_size for path in output.iterdir()) / 1e6
        print(
            f"  wrote {len(files) - 1} chunks + index.json ({size:.1f} MB) in {seconds:.2f} s, "
            f"worker start included ({NUM_SAMPLES / seconds:,.0f} samples/s)"
        )

        reader = ld.DatasetReader(output)
        first = reader[0]
        print(
            f"  sample 0: image {tuple(first['image'].shape)} {first['image'].dtype}, "
            f"label {first['label']}"
        )

        order = random.Random(0).sample(range(len(reader)), len(reader))
        start = time.perf_counter()
        samples = [reader[i] for i in order]
        seconds = time.perf_counter() - start
        labels = sorted(sample["label"] for sample in samples)
        assert labels == sorted(i % 10 for i in range(NUM_SAMPLES)), "read back the wrong labels"
        print(
            f"  read all {len(reader)} samples in random order (JPEGs decoded) in "
            f"{seconds:.2f} s ({len(reader) / seconds:,.0f} samples/s); every label checked"
        )
        start = time.perf_counter()
        dataset = ld.StreamingDataset(output, shuffle=True)
        loader = ld.StreamingDataLoader(dataset, batch_size=64, num_workers=2)
        streamed = sum(len(batch["label"]) for batch in loader)
        seconds = time.perf_counter() - start
        assert streamed == NUM_SAMPLES, "the loader did not deliver every sample once"
        print(
            f"  streamed one shuffled epoch with 2 workers (JPEGs decoded, batches of 64) in "
            f"{seconds:.2f} s ({streamed / seconds:,.0f} samples/s)"
        )
        print(f"  litdata verify {output.name}:", end=" ", flush=True)
        verify(["verify", str(output), "--quiet"])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
