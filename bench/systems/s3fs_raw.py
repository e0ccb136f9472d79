"""``s3fs-raw``: the remote rows' reference, the chunk objects read with s3fs and nothing else.

Runs under the ours interpreter without our package (``PYTHONPATH`` unset): an
``IterableDataset`` whose readers (the main process at 0 workers, each DataLoader worker at 2)
take every ``n``-th chunk object of the dataset (ours' chunk files) and fetch them with
``S3FileSystem.cat_file(path, max_concurrency=1)`` (one plain GET each; s3fs would otherwise
split objects over 50 MiB into a HEAD and ranged GETs, slower against moto, which builds the
whole object for every ranged GET), 2 at a time per reader (``max_pre_download``'s default),
yielding each chunk's size; nothing is decoded, written to disk or checked beyond its
length. What it measures is how fast the server hands out these objects to this many readers:
the server's own limit for the remote rows.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import torch

from systems.base import Remote, System, pss_now_mb

#: Chunks each reader fetches at once (LitData's and ours' ``max_pre_download`` default).
DEPTH = 2


def filesystem(options: dict[str, Any]) -> Any:
    """An s3fs filesystem for LitData-spelled ``options`` (boto3's names)."""
    import s3fs

    return s3fs.S3FileSystem(
        key=options["aws_access_key_id"],
        secret=options["aws_secret_access_key"],
        endpoint_url=options["endpoint_url"],
        client_kwargs={"region_name": options["region_name"]},
        skip_instance_cache=True,
        use_listings_cache=False,
    )


class RawChunks(torch.utils.data.IterableDataset[tuple[int, int, int]]):
    """The chunk objects of a dataset, fetched by each reader."""

    def __init__(self, remote: Remote, chunks: list[dict[str, Any]]) -> None:
        self.remote = remote
        self.chunks = chunks

    def __iter__(self) -> Iterator[tuple[int, int, int]]:
        """``(bytes fetched, bytes expected, items)`` per chunk of this reader."""
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
        mine = self.chunks[worker::workers]
        fs = filesystem(self.remote.storage_options)
        prefix = self.remote.url.removeprefix("s3://")
        pending: deque[tuple[dict[str, Any], Future[bytes]]] = deque()

        def fetch(chunk: dict[str, Any]) -> Future[bytes]:
            path = f"{prefix}/{chunk['filename']}"
            return pool.submit(fs.cat_file, path, max_concurrency=1)

        with ThreadPoolExecutor(DEPTH) as pool:
            todo = iter(mine)
            for chunk in todo:
                pending.append((chunk, fetch(chunk)))
                if len(pending) >= DEPTH:
                    break
            while pending:
                chunk, future = pending.popleft()
                data = future.result()
                following = next(todo, None)
                if following is not None:
                    pending.append((following, fetch(following)))
                yield len(data), int(chunk["chunk_bytes"]), int(chunk["chunk_size"])
                del data


class S3fsRaw(System):
    """Reads the chunk objects with s3fs at the loaders' concurrency; no decoding."""

    name = "s3fs-raw"

    def setup(self) -> None:
        super().setup()
        import s3fs  # noqa: F401  (outside the timed region, as every system's imports)

    def versions(self) -> dict[str, str]:
        import s3fs

        return {"s3fs": s3fs.__version__}

    def remote_stream(
        self, workload: str, remote: Remote, cache_dir: Path, num_workers: int
    ) -> dict[str, Any]:
        del cache_dir  # nothing is cached
        start = time.perf_counter()
        fs = filesystem(remote.storage_options)
        index = json.loads(fs.cat_file(f"{remote.url.removeprefix('s3://')}/index.json"))
        loader = torch.utils.data.DataLoader(
            RawChunks(remote, index["chunks"]), batch_size=None, num_workers=num_workers
        )
        first = None
        items = fetched = 0
        for got, expected, count in loader:
            if first is None:
                first = time.perf_counter() - start
            fetched += got
            if got == expected:
                items += count
        elapsed = time.perf_counter() - start
        return {
            "pss_end_mb": pss_now_mb(),
            "metrics": {
                "samples_per_s": items / elapsed,
                "epoch_s": elapsed,
                "first_batch_ms": (first or 0.0) * 1e3,
                "mb_per_s": fetched / 1e6 / elapsed,
            },
            "check": {"count": items},
            "check_kind": "count",
        }


SYSTEM = S3fsRaw
