"""The README demo: write a dataset, inspect it, stream it, stop mid-epoch and resume exactly.

Run it with ``make demo`` (which creates a small virtualenv first), or
``python examples/demo.py [folder]``. It leaves its dataset in ``demo-dataset/`` (or
``folder``), for the README's ``litdata inspect`` and ``litdata verify`` lines.
"""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import numpy as np
from PIL import Image as PILImage

import litdata as ld
from litdata.cli import main as litdata_command

NUM_SAMPLES = 1_000
SIZE = 64
BATCH = 50
STOP_AFTER = 7  # batches read before the "crash"


def synthetic_image(index: int) -> bytes:
    """A small, distinct image file: a colour gradient; JPEG for odd indexes, PNG for even."""
    y, x = np.mgrid[0:SIZE, 0:SIZE]
    pixels = np.stack([(x * 4 + index) % 256, (y * 4 + 2 * index) % 256, (x + y + index) % 256], -1)
    buffer = io.BytesIO()
    PILImage.fromarray(pixels.astype(np.uint8)).save(buffer, format="JPEG" if index % 2 else "PNG")
    return buffer.getvalue()


def make_sample(index: int) -> dict[str, object]:
    """``optimize``'s function: one input (an index) becomes one image+label sample."""
    return {"id": index, "image": ld.Image(bytes=synthetic_image(index)), "label": index % 10}


def _loader(folder: Path) -> ld.StreamingDataLoader:
    dataset = ld.StreamingDataset(folder, shuffle=True, seed=42)
    return ld.StreamingDataLoader(dataset, batch_size=BATCH, num_workers=2)


def write(folder: Path) -> int:
    """Step 1: optimize the samples with two workers; return the number of chunks."""
    print(f"1. write: {NUM_SAMPLES:,} {SIZE}x{SIZE} images (JPEG and PNG) + labels, 2 workers")
    start = time.perf_counter()
    ld.optimize(
        make_sample,
        range(NUM_SAMPLES),
        folder,
        chunk_bytes="1MB",
        num_workers=2,
        mode="overwrite",
        verbose=False,
    )
    chunks = len(ld.DatasetReader(folder).index.chunks)
    seconds = time.perf_counter() - start
    print(f"   {chunks} chunk{'s' * (chunks != 1)} in {folder}/ in {seconds:.1f} s")
    return chunks


def inspect(folder: Path) -> None:
    """Step 2: what ``litdata inspect`` says about it."""
    print(f"2. inspect: litdata inspect {folder.name}")
    litdata_command(["inspect", str(folder), "--samples", "0"])


def stream_stop_and_resume(folder: Path) -> None:
    """Steps 3 and 4: stream a shuffled epoch, stop mid-way, resume with exactly the rest."""
    print(f"3. stream: a shuffled epoch, batches of {BATCH}, 2 workers; stop after {STOP_AFTER}")
    loader = _loader(folder)
    seen: list[int] = []
    state: dict[str, object] = {}
    expected_next: list[int] = []
    for number, batch in enumerate(loader):
        if number == STOP_AFTER:
            expected_next = batch["id"].tolist()  # what the loader would have given next
            break
        seen += batch["id"].tolist()
        state = loader.state_dict()  # saved with your checkpoint
    first = batch["image"]
    print(f"   {len(seen)} samples seen; a batch of images is {tuple(first.shape)} {first.dtype}")
    print("4. resume: a new loader, load_state_dict(state), the rest of the epoch")
    resumed = _loader(folder)
    resumed.load_state_dict(state)
    rest = [sample_id for batch in resumed for sample_id in batch["id"].tolist()]
    assert rest[:BATCH] == expected_next, "the resumed loader did not continue exactly"
    assert sorted(seen + rest) == list(range(NUM_SAMPLES)), "a sample was lost or repeated"
    print(
        f"   {len(rest)} more samples: the next batch is exactly the one the first loader would "
        f"have given, and the epoch has every sample once"
    )


def verify(folder: Path, chunks: int) -> None:
    """Step 5: ``litdata verify`` checks every chunk against its checksum."""
    print(f"5. verify: litdata verify {folder.name}")
    litdata_command(["verify", str(folder), "--quiet"])
    assert len(ld.DatasetReader(folder).index.chunks) == chunks


def main() -> None:
    """Tell the story, and leave the dataset for the README's command lines."""
    start = time.perf_counter()
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "demo-dataset").absolute()
    print(f"litdata {ld.__version__} demo")
    chunks = write(folder)
    inspect(folder)
    stream_stop_and_resume(folder)
    verify(folder, chunks)
    print(
        f"Done in {time.perf_counter() - start:.0f} s. The dataset stays in {folder.name}/: try "
        f"`litdata inspect {folder.name}`, `litdata verify {folder.name}`, `litdata cache du`."
    )


if __name__ == "__main__":
    main()
