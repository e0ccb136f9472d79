"""The memmap baseline: plain ``.npy``/``.bin`` files read by a map-style torch Dataset."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from vision_data import plain_transform
from workloads import (
    IMAGE_KINDS,
    W1_COUNT,
    W2_BLOCK,
    W2_BLOCKS,
    W3_DIM,
    W4_BASE_COST_S,
    WORKLOADS,
    collate_images,
    decode_jpeg,
    source_dir,
)

from systems.base import System, fresh_dir, time_random, time_stream, timed


class MemmapDataset:
    """Map-style dataset over the plain files (opened lazily: each DataLoader worker maps them)."""

    def __init__(self, directory: Path, kind: str) -> None:
        self.directory = Path(directory)
        self.kind = kind
        self._arrays: dict[str, np.ndarray] | None = None
        self.length = (
            W2_BLOCKS if kind == "tokens" else int(np.load(self._y_path(), mmap_mode="r").shape[0])
        )

    def _y_path(self) -> Path:
        return self.directory / ("labels.npy" if self.kind in IMAGE_KINDS else "y.npy")

    def _open(self) -> dict[str, np.ndarray]:
        d = self.directory
        if self.kind in IMAGE_KINDS:
            return {
                "images": np.memmap(d / "images.bin", dtype=np.uint8, mode="r"),
                "offsets": np.load(d / "offsets.npy"),
                "labels": np.load(d / "labels.npy"),
            }
        if self.kind == "tokens":
            return {"tokens": np.memmap(d / "tokens.bin", dtype=np.uint16, mode="r")}
        return {"x": np.load(d / "x.npy", mmap_mode="r"), "y": np.load(d / "y.npy", mmap_mode="r")}

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, i: int) -> Any:
        if self._arrays is None:
            self._arrays = self._open()
        a = self._arrays
        if self.kind in IMAGE_KINDS:
            start, end = a["offsets"][i], a["offsets"][i + 1]
            image = {"image": a["images"][start:end].tobytes(), "label": int(a["labels"][i])}
            return decode_jpeg(image) if self.kind == "jpeg" else image
        if self.kind == "tokens":
            return torch.from_numpy(np.array(a["tokens"][i * W2_BLOCK : (i + 1) * W2_BLOCK]))
        return {"x": torch.from_numpy(np.array(a["x"][i])), "y": int(a["y"][i])}


class FolderDataset:
    """W6's file-folder baseline: a map-style Dataset over ``files/NNNNN.jpg``, Pillow recipe."""

    def __init__(self, directory: Path) -> None:
        self.files = sorted((Path(directory) / "files").glob("*.jpg"))
        self.labels = np.load(Path(directory) / "labels.npy")

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> Any:
        sample = {"image": self.files[i].read_bytes(), "label": int(self.labels[i])}
        return plain_transform(sample)


class Baseline(System):
    """``write`` writes the plain files from the samples; reads use :class:`MemmapDataset`."""

    name = "baseline"

    def _write(self, workload: str, out: Path, skew: bool) -> None:
        spec = WORKLOADS[workload]
        src = self.source(workload)
        fresh_dir(out)
        if spec.kind == "image":
            offsets = np.zeros(spec.count + 1, dtype=np.int64)
            labels = np.zeros(spec.count, dtype=np.int64)
            with open(out / "images.bin", "wb") as f:
                for i in range(spec.count):
                    if skew:
                        time.sleep(W4_BASE_COST_S * (10 if i < W1_COUNT // 10 else 1))
                    sample = src.sample(i)
                    f.write(sample["image"])
                    offsets[i + 1] = offsets[i] + len(sample["image"])
                    labels[i] = sample["label"]
            np.save(out / "offsets.npy", offsets)
            np.save(out / "labels.npy", labels)
        elif spec.kind == "tokens":
            with open(out / "tokens.bin", "wb") as f:
                for i in range(W2_BLOCKS):
                    f.write(src.sample(i).tobytes())
        else:
            x = np.empty((spec.count, W3_DIM), dtype=np.float32)
            y = np.empty(spec.count, dtype=np.int64)
            for i in range(spec.count):
                sample = src.sample(i)
                x[i] = sample["x"]
                y[i] = sample["y"]
            np.save(out / "x.npy", x)
            np.save(out / "y.npy", y)

    def _written(self, workload: str, out: Path, metrics: dict[str, Any]) -> dict[str, Any]:
        kind = WORKLOADS[workload].kind
        ds = MemmapDataset(out, kind)
        return {"metrics": metrics, "check": {"count": len(ds)}, "check_kind": "count"}

    def prepare(self, workload: str, out: Path) -> None:
        """Nothing to do: the baseline reads the generated source files directly."""

    def dataset_dir(self, workload: str) -> Path:
        """The baseline's dataset is the workload's source directory."""
        return source_dir(workload, self.root)

    def write(self, workload: str, out: Path) -> dict[str, Any]:
        seconds, _ = timed(lambda: self._write(workload, out, skew=False))
        return self._written(workload, out, {"seconds": seconds})

    def optimize(self, workload: str, out: Path) -> dict[str, Any]:
        seconds, _ = timed(lambda: self._write(workload, out, skew=workload == "W4"))
        return self._written(workload, out, {"seconds": seconds})

    def random(self, workload: str, dataset: Path) -> dict[str, Any]:
        kind = WORKLOADS[workload].kind
        return time_random(lambda: MemmapDataset(self.dataset_dir(workload), kind), workload)

    def stream(
        self, workload: str, dataset: Path, shuffle: bool, num_workers: int
    ) -> dict[str, Any]:
        spec = WORKLOADS[workload]

        def make() -> Any:
            directory = self.dataset_dir(workload)
            vision = spec.kind == "vision"
            ds = FolderDataset(directory) if vision else MemmapDataset(directory, spec.kind)
            extra = {"collate_fn": collate_images} if spec.kind == "image" else {}
            return torch.utils.data.DataLoader(
                ds, batch_size=spec.batch_size, shuffle=shuffle, num_workers=num_workers, **extra
            )

        return time_stream(make, spec.kind, spec.count)


SYSTEM = Baseline
