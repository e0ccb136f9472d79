"""A training process that stops consuming its loader and waits to be killed (test_orphans.py).

``python orphan_trainer.py DATA MARKERS CONTEXT MODE`` streams ``DATA`` with a
``StreamingDataLoader`` (2 workers, ``CONTEXT`` start method, a transform making float tensors),
takes one batch, writes ``MARKERS/ready`` and sleeps. Each worker writes ``MARKERS/worker-<pid>``
when it starts. ``MODE`` is where the workers are when the test kills this process:

- ``full``: blocked writing batches into the result pipe, which nobody reads any more;
- ``slow``: inside a transform that takes a minute for every sample after a worker's first
  batch (writing ``MARKERS/decoding-<pid>``);
- ``thread``: as ``full``, but the workers were started by a thread that has ended since.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from functools import partial
from pathlib import Path

import torch

import litdata as ld

#: 60 samples of 4,096 float32s: a batch just under 1 MiB, which travels through the pipe.
BATCH = 60
FEATURES = 4096

_made = 0  # samples this worker has transformed


def floats(sample: dict) -> torch.Tensor:
    """A float tensor per sample."""
    return torch.full((FEATURES,), float(sample["id"]))


def slow_floats(markers: str, sample: dict) -> torch.Tensor:
    """``floats``, taking a minute per sample after the worker's first batch."""
    global _made  # noqa: PLW0603
    _made += 1
    if _made > BATCH:
        Path(markers, f"decoding-{os.getpid()}").touch()
        time.sleep(60)
    return floats(sample)


def mark(markers: str, worker_id: int) -> None:
    """``worker_init_fn``: say which process this worker is."""
    Path(markers, f"worker-{os.getpid()}").write_text(str(worker_id))


def main() -> None:
    data, markers, context, mode = sys.argv[1:]
    transform = partial(slow_floats, markers) if mode == "slow" else floats
    dataset = ld.StreamingDataset(data, transform=transform)
    loader = ld.StreamingDataLoader(
        dataset,
        batch_size=BATCH,
        num_workers=2,
        multiprocessing_context=context,
        worker_init_fn=partial(mark, markers),
        # Batches through the pipe, so that workers block on it when nobody reads; through
        # the arena (``slow``) they would wait for work instead, holding their slots.
        transport="arena" if mode == "slow" else "pipe",
    )
    batches = iter(loader)
    if mode == "thread":
        starter = threading.Thread(target=next, args=(batches,))
        starter.start()
        starter.join()
    else:
        next(batches)
    Path(markers, "ready").touch()
    time.sleep(600)


if __name__ == "__main__":
    main()
