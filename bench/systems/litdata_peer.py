"""Lightning AI's LitData 0.2.76 (runs under the peers' venv)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workloads import WORKLOADS, optimize_fn, optimize_inputs

from systems.base import fresh_dir, timed
from systems.litdata_api import CHUNK_BYTES, LitDataAPI


class LitDataPeer(LitDataAPI):
    """LitData: ``write`` is ``streaming.writer.BinaryWriter`` + ``merge()``, one process."""

    name = "litdata"

    def _litdata(self) -> Any:
        import litdata

        if "site-packages" not in Path(litdata.__file__).parts:
            raise RuntimeError(f"expected Lightning AI's LitData, imported {litdata.__file__}")
        return litdata

    def import_s3_client(self) -> None:
        """LitData's S3 downloader and boto3 (~0.2 s of imports)."""
        import boto3  # noqa: F401

        import litdata.streaming.downloader  # noqa: F401

    def write(self, workload: str, out: Path) -> dict[str, Any]:
        from litdata.streaming.writer import BinaryWriter

        fresh_dir(out)
        root = str(self.root)
        tokens = WORKLOADS[workload].kind == "tokens"

        source = self.source(workload)

        def run() -> None:
            writer = BinaryWriter(
                str(out), chunk_bytes=CHUNK_BYTES, item_loader=self._item_loader(workload)
            )
            for i in optimize_inputs(workload):
                writer[i] = optimize_fn(i, workload, root) if tokens else source.sample(i)
            writer.done()
            writer.merge()

        seconds, _ = timed(run)
        return self._written(workload, out, {"seconds": seconds})


SYSTEM = LitDataPeer
