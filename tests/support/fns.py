"""Functions for optimize/map tests, importable by spawned worker processes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np


def record(i):
    return {"id": i, "x": np.full(3, i, dtype=np.float32), "name": f"n{i}"}


def record_or_none(i):
    return None if i % 3 == 0 else {"id": i}


def several(i):
    for k in range(i % 3):
        yield {"id": i, "k": k}


def fails_on_17(i):
    if i == 17:
        raise ValueError(f"input {i} is cursed")
    return {"id": i}


def dies_on_5(i):
    if i == 5:
        os._exit(3)
    return {"id": i}


def slow_record(i):
    time.sleep(0.02)
    return {"id": i}


def other_structure(i):
    return {"id": i, "extra": "field"}


def tokens(i):
    return np.arange(100 + i, dtype=np.uint16)


def write_file(i, output_dir):
    Path(output_dir, f"item-{i}.txt").write_text(f"value {i * 2}")


def returns_value(i, output_dir):
    return i


def file_size(path):
    """An optimize fn reading a local file (a remote input, downloaded first)."""
    with open(path, "rb") as handle:
        data = handle.read()
    return {"name": Path(path).name, "size": len(data), "first": data[0]}


def passes_url(url):
    """An optimize fn that receives the URL itself."""
    return {"url": url}


def copy_file(path, output_dir):
    """A map fn copying a downloaded input into its output folder."""
    Path(output_dir, Path(path).name + ".copy").write_bytes(Path(path).read_bytes())


def stuck_in_fn(item):
    """``(i, markers)``: say this worker is inside ``fn``, then take a minute."""
    _, markers = item
    Path(markers, f"worker-{os.getpid()}").touch()
    time.sleep(60)


def fails_loudly_on_go(item):
    """``(i, markers)``: once ``MARKERS/go`` exists, fail with a message bigger than a pipe.

    Reporting that failure fills the events pipe, so the worker blocks sending it until the
    driver reads it.
    """
    _, markers = item
    Path(markers, f"worker-{os.getpid()}").touch()
    while not Path(markers, "go").exists():
        time.sleep(0.02)
    raise ValueError("x" * (4 << 20))


def keyed(i):
    """A sample with a string id, for key_fn tests."""
    return {"uid": f"user-{i}", "value": i}


def uid(sample):
    return sample["uid"]


def value_key(sample):
    return int(sample["value"])


def constant_key(sample):
    return "same"


def bool_key(sample):
    return True


class DoubledDataset(__import__("litdata").StreamingDataset):
    """A subclass with a transform method (LitData's documented extension point)."""

    def transform(self, sample):
        return {**sample, "id": sample["id"] * 2}


class TaggedDataset(__import__("litdata").StreamingDataset):
    """A subclass overriding __getitem__, calling super()."""

    def __getitem__(self, index):
        sample = super().__getitem__(index)
        return {**sample, "tag": "seen"}


def waits_to_be_killed(item):
    """``(i, markers)``: ``{"id": i}``; but input 31 first waits to be killed (once).

    Until ``MARKERS/killed`` exists, input 31 names its process (``victim-<pid>``) and sleeps.
    """
    i, markers = item
    if i == 31 and not Path(markers, "killed").exists():
        Path(markers, f"victim-{os.getpid()}").touch()
        time.sleep(60)
    return {"id": i}


def noted(markers, fail_on, i):
    """``{"id": i}``, noting each input seen in ``markers``; fails on input ``fail_on``."""
    Path(markers, str(i)).touch()
    if i == fail_on:
        raise ValueError(f"input {i} is cursed")
    return {"id": i}


def fails_once(markers, i):
    """``{"id": i}``; input 13 raises the first time it is seen (noted in ``markers``)."""
    if i == 13 and not Path(markers, "failed").exists():
        Path(markers, "failed").touch()
        raise OSError("a transient error")
    return {"id": i}


class SquaringReader(__import__("litdata.processing.readers").processing.readers.BaseReader):
    """Reads input i as i * i (None for multiples of 5); regroups the inputs in reverse."""

    def remap_items(self, items, num_workers):
        return list(reversed(items))

    def read(self, item):
        return None if item % 5 == 0 else item * item


def notes_last(i, output_dir, is_last, device):
    """A map fn declaring LitData's optional arguments; writes them down."""
    Path(output_dir, f"{i}.txt").write_text(f"{is_last} {device}")


def file_sizes(paths):
    """An optimize fn reading several local files (remote inputs, downloaded first)."""
    return {"sizes": [Path(path).stat().st_size for path in paths]}
