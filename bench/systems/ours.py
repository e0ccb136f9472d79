"""Our package (``/work/main/litdata``), run with ``PYTHONPATH`` pointing at the repository."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from workloads import W2_BLOCK, WORKLOADS, optimize_fn, optimize_inputs

from systems.base import Unsupported, fresh_dir, timed
from systems.litdata_api import CHUNK_BYTES, LitDataAPI


class Ours(LitDataAPI):
    """Ours: ``write`` is ``litdata.core.writer.write_dataset(samples, output_dir, ...)``."""

    name = "ours"

    def _tokens_loader(self, block_size: int | None = None) -> Any:
        try:
            return super()._tokens_loader(block_size)
        except Unsupported:
            from litdata.core.item_loaders import TokensLoader

            return TokensLoader(block_size=block_size)

    def _open(self, workload: str, dataset: Path, shuffle: bool = False) -> Any:
        """``litdata.StreamingDataset``; while that is missing, ``litdata.DatasetReader``."""
        import litdata

        if hasattr(litdata, "StreamingDataset") or shuffle:
            return super()._open(workload, dataset, shuffle)
        self.note = "read via litdata.DatasetReader (StreamingDataset missing)"
        kwargs: dict[str, Any] = {}
        if WORKLOADS[workload].kind == "tokens":
            kwargs["item_loader"] = self._tokens_loader(W2_BLOCK)
        return litdata.DatasetReader(str(dataset), **kwargs)

    def _write_dataset(self) -> Any:
        try:
            from litdata.core.writer import write_dataset
        except ImportError as exc:
            raise Unsupported(f"litdata.core.writer.write_dataset not importable ({exc})") from exc
        return write_dataset

    def write(self, workload: str, out: Path) -> dict[str, Any]:
        write_dataset = self._write_dataset()
        fresh_dir(out)
        kwargs: dict[str, Any] = {}
        if WORKLOADS[workload].kind == "tokens":
            if "item_loader" not in inspect.signature(write_dataset).parameters:
                raise Unsupported(
                    "write_dataset has no item_loader parameter (TokensLoader layout)"
                )
            kwargs["item_loader"] = self._tokens_loader()
            root = str(self.root)
            samples: Any = (optimize_fn(i, workload, root) for i in optimize_inputs(workload))
        else:
            samples = self.source(workload).samples()
        seconds, _ = timed(
            lambda: write_dataset(samples, str(out), chunk_bytes=CHUNK_BYTES, **kwargs)
        )
        return self._written(workload, out, {"seconds": seconds})

    def prepare(self, workload: str, out: Path) -> None:
        """Prefer ``optimize`` (as users do); fall back to ``write_dataset`` while it is missing."""
        try:
            super().prepare(workload, out)
        except Unsupported:
            self.write(workload, out)


SYSTEM = Ours
