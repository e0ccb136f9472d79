"""Shared adapter for the two systems with LitData's public API: ours and Lightning AI's LitData.

Which ``litdata`` is imported depends on the child's interpreter and ``PYTHONPATH`` (the parent
never lets both be importable in one process).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from workloads import W2_BLOCK, W2_BLOCKS, WORKLOADS, collate_images, optimize_fn, optimize_inputs

from systems.base import (
    System,
    Unsupported,
    fresh_dir,
    time_random,
    time_stream,
    timed,
    verify_iter,
)

CHUNK_BYTES = "64MB"
NUM_WORKERS = 2


def _index_count(out: Path, tokens: bool) -> dict[str, int]:
    index = json.loads((out / "index.json").read_text())
    if tokens:
        dims = sum(int(c.get("dim") or 0) for c in index["chunks"])
        return {"count": dims // W2_BLOCK}
    return {"count": sum(int(c["chunk_size"]) for c in index["chunks"])}


class LitDataAPI(System):
    """A system exposing ``litdata.optimize``, ``StreamingDataset`` and ``StreamingDataLoader``."""

    def _litdata(self) -> Any:
        import litdata

        return litdata

    def _tokens_loader(self, block_size: int | None = None) -> Any:
        litdata = self._litdata()
        loader = getattr(litdata, "TokensLoader", None)
        if loader is None:
            raise Unsupported("litdata.TokensLoader missing")
        return loader(block_size=block_size) if block_size else loader()

    def _item_loader(self, workload: str, block_size: int | None = None) -> Any:
        return self._tokens_loader(block_size) if WORKLOADS[workload].kind == "tokens" else None

    def setup(self) -> None:
        super().setup()
        litdata = self._litdata()
        for name in ("optimize", "StreamingDataset", "StreamingDataLoader", "TokensLoader"):
            getattr(litdata, name, None)  # resolve lazy attributes outside the timed region

    def versions(self) -> dict[str, str]:
        litdata = self._litdata()
        return {
            "litdata": getattr(litdata, "__version__", "?"),
            "litdata_file": str(litdata.__file__),
        }

    # -- writing -----------------------------------------------------------------------------

    def _optimize(self, workload: str, out: Path, ordered: bool = False) -> None:
        litdata = self._litdata()
        if not hasattr(litdata, "optimize"):
            raise Unsupported("litdata.optimize missing")
        fresh_dir(out)
        fn = functools.partial(optimize_fn, workload=workload, root=str(self.root))
        kwargs: dict[str, Any] = {}
        item_loader = self._item_loader(workload)
        if item_loader is not None:
            kwargs["item_loader"] = item_loader
        if ordered:
            # Global index i == source sample i, so the random-access row can check every sample.
            kwargs["keep_data_ordered"] = True
        litdata.optimize(
            fn=fn,
            inputs=optimize_inputs(workload),
            output_dir=str(out),
            chunk_bytes=CHUNK_BYTES,
            num_workers=NUM_WORKERS,
            verbose=False,
            **kwargs,
        )

    def prepare(self, workload: str, out: Path) -> None:
        self._optimize(workload, out, ordered=True)

    def optimize(self, workload: str, out: Path) -> dict[str, Any]:
        seconds, _ = timed(lambda: self._optimize(workload, out))
        return self._written(workload, out, {"seconds": seconds})

    def _written(self, workload: str, out: Path, metrics: dict[str, Any]) -> dict[str, Any]:
        """Verify a freshly written dataset (untimed): index counts, then a full checksum pass."""
        kind = WORKLOADS[workload].kind
        counted = _index_count(out, kind == "tokens")
        try:
            ds = self._open(workload, out)
            check = verify_iter(
                (ds[i] for i in range(len(ds))) if not hasattr(ds, "__iter__") else iter(ds), kind
            )
            return {"metrics": metrics, "check": check, "check_kind": "full"}
        except Unsupported:
            return {"metrics": metrics, "check": counted, "check_kind": "count"}

    # -- reading -----------------------------------------------------------------------------

    def _open(self, workload: str, dataset: Path, shuffle: bool = False) -> Any:
        litdata = self._litdata()
        if not hasattr(litdata, "StreamingDataset"):
            raise Unsupported("litdata.StreamingDataset missing")
        kwargs: dict[str, Any] = {}
        item_loader = self._item_loader(workload, W2_BLOCK)
        if item_loader is not None:
            kwargs["item_loader"] = item_loader
        if shuffle:
            kwargs["shuffle"] = True
        return litdata.StreamingDataset(str(dataset), **kwargs)

    def random(self, workload: str, dataset: Path) -> dict[str, Any]:
        return time_random(lambda: self._open(workload, dataset), workload)

    def stream(
        self, workload: str, dataset: Path, shuffle: bool, num_workers: int
    ) -> dict[str, Any]:
        litdata = self._litdata()
        if not hasattr(litdata, "StreamingDataLoader"):
            raise Unsupported("litdata.StreamingDataLoader missing")
        spec = WORKLOADS[workload]

        def make() -> Any:
            ds = self._open(workload, dataset, shuffle=shuffle)
            extra = {"collate_fn": collate_images} if spec.kind == "image" else {}
            return litdata.StreamingDataLoader(
                ds, batch_size=spec.batch_size, num_workers=num_workers, **extra
            )

        return time_stream(make, spec.kind, W2_BLOCKS if spec.kind == "tokens" else spec.count)
