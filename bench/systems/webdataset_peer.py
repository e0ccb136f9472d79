"""WebDataset 1.0 (tar shards via ``ShardWriter``; ``WebDataset`` pipeline + ``WebLoader``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from workloads import W1_COUNT, W2_BLOCKS, W4_BASE_COST_S, WORKLOADS

from systems.base import System, Unsupported, fresh_dir, time_stream, timed

MAX_SHARD_BYTES = 64_000_000
SHUFFLE_BUFFER = 1_000


def _to_entry(kind: str, i: int, sample: Any) -> dict[str, Any]:
    key = f"{i:08d}"
    if kind == "image":
        return {"__key__": key, "img": sample["image"], "cls": sample["label"]}
    if kind == "tokens":
        return {"__key__": key, "tok": sample.tobytes()}
    return {"__key__": key, "x": sample["x"].tobytes(), "cls": sample["y"]}


def _decode_image(sample: dict[str, Any]) -> tuple[bytes, int]:
    return sample["img"], int(sample["cls"])


def _decode_tokens(sample: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(sample["tok"], dtype=np.uint16)


def _decode_record(sample: dict[str, Any]) -> tuple[np.ndarray, int]:
    return np.frombuffer(sample["x"], dtype=np.float32), int(sample["cls"])


_DECODERS = {"image": _decode_image, "tokens": _decode_tokens, "records": _decode_record}


def _collate_tokens(samples: list[np.ndarray]) -> np.ndarray:
    return np.stack(samples)


class WebDatasetPeer(System):
    """WebDataset has no parallel writer: its ``optimize`` row is ``ShardWriter`` in one process."""

    name = "webdataset"

    def versions(self) -> dict[str, str]:
        import importlib.metadata

        return {"webdataset": importlib.metadata.version("webdataset")}

    def setup(self) -> None:
        super().setup()
        import webdataset  # noqa: F401

    def _write(self, workload: str, out: Path, skew: bool) -> None:
        import webdataset as wds

        spec = WORKLOADS[workload]
        src = self.source(workload)
        fresh_dir(out)
        count = W2_BLOCKS if spec.kind == "tokens" else spec.count
        with wds.ShardWriter(
            str(out / "shard-%06d.tar"), maxsize=MAX_SHARD_BYTES, maxcount=10**9, verbose=0
        ) as sink:
            for i in range(count):
                if skew:
                    time.sleep(W4_BASE_COST_S * (10 if i < W1_COUNT // 10 else 1))
                sink.write(_to_entry(spec.kind, i, src.sample(i)))

    def _written(self, out: Path, metrics: dict[str, Any]) -> dict[str, Any]:
        import tarfile

        count = 0
        for shard in sorted(out.glob("*.tar")):
            with tarfile.open(shard) as tar:
                keys = {member.name.split(".", 1)[0] for member in tar.getmembers()}
            count += len(keys)
        return {"metrics": metrics, "check": {"count": count}, "check_kind": "count"}

    def prepare(self, workload: str, out: Path) -> None:
        self._write(workload, out, skew=False)

    def write(self, workload: str, out: Path) -> dict[str, Any]:
        seconds, _ = timed(lambda: self._write(workload, out, skew=False))
        return self._written(out, {"seconds": seconds})

    def optimize(self, workload: str, out: Path) -> dict[str, Any]:
        seconds, _ = timed(lambda: self._write(workload, out, skew=workload == "W4"))
        return self._written(out, {"seconds": seconds})

    def random(self, workload: str, dataset: Path) -> dict[str, Any]:
        raise Unsupported("tar shards have no random access")

    def stream(
        self, workload: str, dataset: Path, shuffle: bool, num_workers: int
    ) -> dict[str, Any]:
        import webdataset as wds

        spec = WORKLOADS[workload]
        urls = [str(p) for p in sorted(dataset.glob("*.tar"))]

        def make() -> Any:
            pipeline = wds.WebDataset(
                urls, shardshuffle=len(urls) if shuffle else False, empty_check=False
            )
            if shuffle:
                pipeline = pipeline.shuffle(SHUFFLE_BUFFER)
            pipeline = pipeline.map(_DECODERS[spec.kind])
            if spec.kind == "tokens":
                pipeline = pipeline.batched(
                    spec.batch_size, collation_fn=_collate_tokens, partial=True
                )
            else:
                pipeline = pipeline.batched(spec.batch_size, partial=True)
            return wds.WebLoader(pipeline, batch_size=None, num_workers=num_workers)

        return time_stream(make, spec.kind, spec.count)


SYSTEM = WebDatasetPeer
