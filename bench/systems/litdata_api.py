"""Shared adapter for the two systems with LitData's public API: ours and Lightning AI's LitData.

Which ``litdata`` is imported depends on the child's interpreter and ``PYTHONPATH`` (the parent
never lets both be importable in one process).
"""

from __future__ import annotations

import functools
import inspect
import os
from pathlib import Path
from typing import Any

from rows import ENCRYPTION_ENV
from vision_data import plain_transform
from workloads import (
    MIX_SEED,
    MIX_WEIGHTS,
    W2_BLOCK,
    W2_BLOCKS,
    WORKLOADS,
    collate_images,
    decode_jpeg,
    mixture_inputs,
    optimize_fn,
    optimize_inputs,
)

from systems.base import (
    Remote,
    System,
    Unsupported,
    fresh_dir,
    time_mixture,
    time_random,
    time_remote_random,
    time_stream,
    timed,
    verify_iter,
)

CHUNK_BYTES = "64MB"
NUM_WORKERS = 2
PASSWORD = "bench password"  # noqa: S105  # protects nothing: benchmark data
KEY_FILE = "fernet-key.json"


class LitDataAPI(System):
    """A system exposing ``litdata.optimize``, ``StreamingDataset`` and ``StreamingDataLoader``."""

    def _litdata(self) -> Any:
        import litdata

        return litdata

    def _encryption(self, dataset: Path, new: bool = False) -> dict[str, Any]:
        """``{"encryption": key}`` for the ``*-fernet`` systems (key saved beside), else ``{}``."""
        level = os.environ.get(ENCRYPTION_ENV)
        if not level:
            return {}
        from litdata.utilities.encryption import FernetEncryption

        if new:
            key = FernetEncryption(PASSWORD, level=level)
            key.save(str(dataset.parent / f"{dataset.name}-{KEY_FILE}"))
            return {"encryption": key}
        return {
            "encryption": FernetEncryption.load(
                str(dataset.parent / f"{dataset.name}-{KEY_FILE}"), PASSWORD
            )
        }

    def _tokens_loader(self, block_size: int | None = None) -> Any:
        loader = self._litdata().TokensLoader
        return loader(block_size=block_size) if block_size else loader()

    def _item_loader(self, workload: str, block_size: int | None = None) -> Any:
        return self._tokens_loader(block_size) if WORKLOADS[workload].kind == "tokens" else None

    def setup(self) -> None:
        super().setup()
        litdata = self._litdata()
        for name in (
            "optimize",
            "StreamingDataset",
            "StreamingDataLoader",
            "TokensLoader",
            "CombinedStreamingDataset",
        ):
            getattr(litdata, name)  # resolve lazy attributes outside the timed region

    def versions(self) -> dict[str, str]:
        litdata = self._litdata()
        return {
            "litdata": getattr(litdata, "__version__", "?"),
            "litdata_file": str(litdata.__file__),
        }

    # -- writing -----------------------------------------------------------------------------

    def _optimize(
        self,
        workload: str,
        out: Path,
        ordered: bool = False,
        inputs: list[int] | None = None,
    ) -> None:
        fresh_dir(out)
        fn = functools.partial(optimize_fn, workload=workload, root=str(self.root))
        kwargs: dict[str, Any] = {}
        item_loader = self._item_loader(workload)
        if item_loader is not None:
            kwargs["item_loader"] = item_loader
        if ordered:
            # Global index i == source sample i, so the random-access row can check every sample.
            kwargs["keep_data_ordered"] = True
        kwargs.update(self._encryption(out, new=True))
        self._litdata().optimize(
            fn=fn,
            inputs=optimize_inputs(workload) if inputs is None else inputs,
            output_dir=str(out),
            chunk_bytes=CHUNK_BYTES,
            num_workers=NUM_WORKERS,
            verbose=False,
            **kwargs,
        )

    def prepare(self, workload: str, out: Path) -> None:
        self._optimize(workload, out, ordered=True)

    def prepare_mixture(self, out: Path) -> None:
        """Corpora A and B, each written by ``optimize(..., item_loader=TokensLoader())``."""
        for corpus in ("A", "B"):
            self._optimize("W2", out / corpus, inputs=mixture_inputs(corpus))

    def optimize(self, workload: str, out: Path) -> dict[str, Any]:
        seconds, _ = timed(lambda: self._optimize(workload, out))
        return self._written(workload, out, {"seconds": seconds})

    def _written(self, workload: str, out: Path, metrics: dict[str, Any]) -> dict[str, Any]:
        """Verify a freshly written dataset (untimed): a full checksum pass over it."""
        check = verify_iter(iter(self._open(workload, out)), WORKLOADS[workload].kind)
        return {"metrics": metrics, "check": check, "check_kind": "full"}

    # -- reading -----------------------------------------------------------------------------

    def _open(self, workload: str, dataset: Path, shuffle: bool = False) -> Any:
        kwargs: dict[str, Any] = {}
        item_loader = self._item_loader(workload, W2_BLOCK)
        if item_loader is not None:
            kwargs["item_loader"] = item_loader
        if shuffle:
            kwargs["shuffle"] = True
        if WORKLOADS[workload].kind == "jpeg":
            kwargs["transform"] = decode_jpeg
        if WORKLOADS[workload].kind == "vision":
            kwargs["transform"] = self._vision_transform()
        kwargs.update(self._encryption(dataset))
        return self._litdata().StreamingDataset(str(dataset), **kwargs)

    def _vision_transform(self) -> Any:
        """W6's transform: the plain Pillow recipe (ours overrides it with the fused one)."""
        return plain_transform

    def random(self, workload: str, dataset: Path) -> dict[str, Any]:
        return time_random(lambda: self._open(workload, dataset), workload)

    def _worker_options(self, mode: str | None) -> dict[str, Any]:
        """The loader's options for a worker ``mode``: ``pipe``, ``arena`` or ``thread``.

        ``pipe`` and ``arena`` are the ``transport=`` of process workers, ``thread`` is
        ``worker_mode="thread"``; a checkout without ``transport`` has only the pipe.

        Raises:
            Unsupported: This checkout's loader has no such mode.
        """
        if mode is None:
            return {}
        loader = self._litdata().StreamingDataLoader
        takes = inspect.signature(loader.__init__).parameters
        if mode == "thread":
            if "worker_mode" not in takes:
                raise Unsupported("this checkout's StreamingDataLoader has no worker_mode")
            return {"worker_mode": "thread"}
        if "transport" not in takes:
            if mode == "pipe":
                return {}  # process workers without a transport option pickle through a pipe
            raise Unsupported(f"this checkout's StreamingDataLoader has no transport={mode!r}")
        return {"transport": mode}

    def stream(
        self,
        workload: str,
        dataset: Path,
        shuffle: bool,
        num_workers: int,
        mode: str | None = None,
    ) -> dict[str, Any]:
        litdata = self._litdata()
        spec = WORKLOADS[workload]
        options = self._worker_options(mode) if num_workers else {}
        if spec.kind == "image":
            options["collate_fn"] = collate_images

        def make() -> Any:
            ds = self._open(workload, dataset, shuffle=shuffle)
            return litdata.StreamingDataLoader(
                ds, batch_size=spec.batch_size, num_workers=num_workers, **options
            )

        return time_stream(make, spec.kind, W2_BLOCKS if spec.kind == "tokens" else spec.count)

    # -- remote ------------------------------------------------------------------------------

    def _open_remote(
        self, workload: str, remote: Remote, cache_dir: Path, shuffle: bool = False
    ) -> Any:
        kwargs: dict[str, Any] = {
            "cache_dir": str(cache_dir),
            "storage_options": remote.storage_options,
        }
        item_loader = self._item_loader(workload, W2_BLOCK)
        if item_loader is not None:
            kwargs["item_loader"] = item_loader
        if shuffle:
            kwargs["shuffle"] = True
        return self._litdata().StreamingDataset(remote.url, **kwargs)

    def import_s3_client(self) -> None:
        """Import the S3 client stack before the timer starts (as ``setup`` does the rest)."""

    def remote_stream(
        self, workload: str, remote: Remote, cache_dir: Path, num_workers: int
    ) -> dict[str, Any]:
        litdata = self._litdata()
        spec = WORKLOADS[workload]
        self.import_s3_client()

        def make() -> Any:
            ds = self._open_remote(workload, remote, cache_dir, shuffle=True)
            extra = {"collate_fn": collate_images} if spec.kind == "image" else {}
            return litdata.StreamingDataLoader(
                ds, batch_size=spec.batch_size, num_workers=num_workers, **extra
            )

        return time_stream(make, spec.kind, W2_BLOCKS if spec.kind == "tokens" else spec.count)

    def remote_random(self, workload: str, remote: Remote, cache_dir: Path) -> dict[str, Any]:
        self.import_s3_client()
        return time_remote_random(
            lambda: self._open_remote(workload, remote, cache_dir),
            workload,
            self.source(workload),
            remote.request_log,
        )

    def mixture(self, dataset: Path, mix: str, num_workers: int) -> dict[str, Any]:
        """``CombinedStreamingDataset`` of shuffled A and B through ``StreamingDataLoader``."""
        litdata = self._litdata()

        def make() -> Any:
            parts = [self._open("W2", dataset / corpus, shuffle=True) for corpus in ("A", "B")]
            if mix == "weighted":
                kwargs: dict[str, Any] = {"weights": list(MIX_WEIGHTS), "iterate_over_all": False}
            else:
                kwargs = {"iterate_over_all": True}
            combined = litdata.CombinedStreamingDataset(parts, seed=MIX_SEED, **kwargs)
            return litdata.StreamingDataLoader(
                combined, batch_size=WORKLOADS["W2"].batch_size, num_workers=num_workers
            )

        return time_mixture(make, self.root)
