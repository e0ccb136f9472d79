"""MosaicML Streaming (MDS shards; ``streaming.MDSWriter`` and ``streaming.StreamingDataset``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workloads import (
    MIX_BLOCKS,
    MIX_SEED,
    MIX_WEIGHTS,
    W1_COUNT,
    W2_BLOCK,
    W2_BLOCKS,
    W4_BASE_COST_S,
    WORKLOADS,
    collate_images,
)

from systems.base import System, fresh_dir, time_mixture, time_random, time_stream, timed

SIZE_LIMIT = 64_000_000

COLUMNS = {
    "image": {"image": "bytes", "label": "int"},
    "tokens": {"tokens": f"ndarray:uint16:{W2_BLOCK}"},
    "records": {"x": "ndarray:float32:16", "y": "int"},
}


class Mosaic(System):
    """Mosaic has no parallel optimize: its ``optimize`` row is ``MDSWriter`` in one process."""

    name = "mosaic"

    def versions(self) -> dict[str, str]:
        import streaming

        return {"mosaicml-streaming": streaming.__version__}

    def setup(self) -> None:
        super().setup()
        import streaming  # noqa: F401  (imports torch: keep it out of the timed region)
        from streaming.base.util import clean_stale_shared_memory

        clean_stale_shared_memory()

    def _write(self, workload: str, out: Path, skew: bool) -> None:
        import time

        from streaming import MDSWriter

        spec = WORKLOADS[workload]
        src = self.source(workload)
        fresh_dir(out)
        with MDSWriter(columns=COLUMNS[spec.kind], out=str(out), size_limit=SIZE_LIMIT) as writer:
            if spec.kind == "tokens":
                for i in range(W2_BLOCKS):
                    writer.write({"tokens": src.sample(i)})
            else:
                for i in range(spec.count):
                    if skew:
                        time.sleep(W4_BASE_COST_S * (10 if i < W1_COUNT // 10 else 1))
                    writer.write(src.sample(i))

    def _written(self, out: Path, metrics: dict[str, Any]) -> dict[str, Any]:
        import json

        index = json.loads((out / "index.json").read_text())
        count = sum(int(shard["samples"]) for shard in index["shards"])
        return {"metrics": metrics, "check": {"count": count}, "check_kind": "count"}

    def prepare(self, workload: str, out: Path) -> None:
        self._write(workload, out, skew=False)

    def write(self, workload: str, out: Path) -> dict[str, Any]:
        seconds, _ = timed(lambda: self._write(workload, out, skew=False))
        return self._written(out, {"seconds": seconds})

    def optimize(self, workload: str, out: Path) -> dict[str, Any]:
        seconds, _ = timed(lambda: self._write(workload, out, skew=workload == "W4"))
        return self._written(out, {"seconds": seconds})

    def _open(self, workload: str, dataset: Path, shuffle: bool = False) -> Any:
        from streaming import StreamingDataset

        return StreamingDataset(
            local=str(dataset), batch_size=WORKLOADS[workload].batch_size, shuffle=shuffle
        )

    def random(self, workload: str, dataset: Path) -> dict[str, Any]:
        tokens = WORKLOADS[workload].kind == "tokens"

        def get(ds: Any, i: int) -> Any:
            sample = ds[i]
            return sample["tokens"] if tokens else sample

        return time_random(lambda: self._open(workload, dataset), workload, get)

    def stream(
        self, workload: str, dataset: Path, shuffle: bool, num_workers: int
    ) -> dict[str, Any]:
        import torch

        spec = WORKLOADS[workload]

        def make() -> Any:
            ds = self._open(workload, dataset, shuffle=shuffle)
            extra = {"collate_fn": collate_images} if spec.kind == "image" else {}
            return torch.utils.data.DataLoader(
                ds, batch_size=spec.batch_size, num_workers=num_workers, **extra
            )

        return time_stream(make, spec.kind, spec.count)

    def prepare_mixture(self, out: Path) -> None:
        """Corpora A and B as two MDS datasets of 2,048-token blocks (W2's blocks, in order)."""
        from streaming import MDSWriter

        src = self.source("W2")
        first = {"A": 0, "B": MIX_BLOCKS["A"]}
        for corpus, start in first.items():
            fresh_dir(out / corpus)
            with MDSWriter(
                columns=COLUMNS["tokens"], out=str(out / corpus), size_limit=SIZE_LIMIT
            ) as writer:
                for i in range(start, start + MIX_BLOCKS[corpus]):
                    writer.write({"tokens": src.sample(i)})

    def mixture(self, dataset: Path, mix: str, num_workers: int) -> dict[str, Any]:
        """Two ``Stream``s; weighted = fixed counts: all of A plus B's 0.3 share of the epoch."""
        import torch
        from streaming import Stream, StreamingDataset

        def make() -> Any:
            if mix == "weighted":
                b_count = round(MIX_BLOCKS["A"] * MIX_WEIGHTS[1] / MIX_WEIGHTS[0])
                streams = [
                    Stream(local=str(dataset / "A"), choose=MIX_BLOCKS["A"]),
                    Stream(local=str(dataset / "B"), choose=b_count),
                ]
            else:
                streams = [Stream(local=str(dataset / corpus)) for corpus in ("A", "B")]
            batch_size = WORKLOADS["W2"].batch_size
            ds = StreamingDataset(
                streams=streams, batch_size=batch_size, shuffle=True, shuffle_seed=MIX_SEED
            )
            return torch.utils.data.DataLoader(ds, batch_size=batch_size, num_workers=num_workers)

        return time_mixture(make, self.root)


SYSTEM = Mosaic
