"""Our package (``/work/main/litdata``), run with ``PYTHONPATH`` pointing at the repository."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rows import VISION_ENV
from vision_data import fused_transform, plain_transform
from workloads import WORKLOADS, optimize_fn, optimize_inputs

from systems.base import fresh_dir, timed
from systems.litdata_api import CHUNK_BYTES, LitDataAPI


class Ours(LitDataAPI):
    """Ours: ``write`` is ``litdata.processing.write.write_dataset(samples, output_dir, ...)``."""

    name = "ours"

    def import_s3_client(self) -> None:
        """The ``s3`` storage plugin: s3fs, aiobotocore, aiohttp (~0.26 s of imports)."""
        import litdata.plugins.storage.s3  # noqa: F401

    def _vision_transform(self) -> Any:
        """Fused ``litdata.vision.RandomResizedCrop``; the plain recipe for ``ours-plain``."""
        if os.environ.get(VISION_ENV) == "plain":
            return plain_transform
        return fused_transform()

    def write(self, workload: str, out: Path) -> dict[str, Any]:
        from litdata.processing.write import write_dataset

        fresh_dir(out)
        kwargs: dict[str, Any] = {}
        if WORKLOADS[workload].kind == "tokens":
            kwargs["item_loader"] = self._tokens_loader()
            root = str(self.root)
            samples: Any = (optimize_fn(i, workload, root) for i in optimize_inputs(workload))
        else:
            samples = self.source(workload).samples()
        seconds, _ = timed(
            lambda: write_dataset(samples, str(out), chunk_bytes=CHUNK_BYTES, **kwargs)
        )
        return self._written(workload, out, {"seconds": seconds})


SYSTEM = Ours
