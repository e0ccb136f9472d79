"""The ``remote-link`` rows' children: the workloads' samples, writing, reading, uploading.

``remote_link.py`` runs ``<python> bench/link_children.py ACTION SYSTEM JSON`` under each system's
interpreter (ours, or the peers' venv for LitData and Mosaic); the last stdout line starting with
``RESULT`` is the result. Only the standard library at import time (the parent imports the
workloads' table from here).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import sys
import time
from typing import Any

RESULT = "LINK_RESULT "
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
REGION = "us-east-1"
#: name: (samples, chunk bytes, batch size, kind)
WORKLOADS: dict[str, tuple[int, int, int, str]] = {
    "R1": (20_000, 64_000_000, 64, "image"),
    "R3": (200_000, 8_000_000, 256, "record"),
    "R4": (2_000, 256_000_000, 8, "blob"),
}
IMAGE = 16 << 10
BLOB = 1 << 20
PARALLEL_RANGES = 8


# -- samples (children) -------------------------------------------------------------------------
@functools.cache
def _noise() -> bytes:
    import numpy as np

    return bytes(np.random.default_rng(7).bytes(2 * BLOB))


def payload(i: int, size: int) -> bytes:
    """``size`` incompressible bytes for sample ``i``: its id, then noise from an offset."""
    start = (i * 4099) % BLOB
    return i.to_bytes(8, "little") + _noise()[start : start + size - 8]


def sample(i: int, kind: str) -> dict[str, Any]:
    """Sample ``i`` of a workload of ``kind``."""
    import numpy as np

    if kind == "image":
        return {"image": payload(i, IMAGE), "label": i}
    if kind == "blob":
        return {"data": payload(i, BLOB), "id": i}
    return {"x": np.full(16, i, dtype=np.float32), "y": i}


def sample_r1(i: int) -> dict[str, Any]:
    return sample(i, "image")


def sample_r3(i: int) -> dict[str, Any]:
    return sample(i, "record")


def sample_r4(i: int) -> dict[str, Any]:
    return sample(i, "blob")


FNS = {"image": sample_r1, "record": sample_r3, "blob": sample_r4}
MDS_COLUMNS = {
    "image": {"image": "bytes", "label": "int"},
    "record": {"x": "ndarray:float32:16", "y": "int"},
    "blob": {"data": "bytes", "id": "int"},
}


class Checker:
    """Counts samples and checks every one against its id."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.count = 0
        self.id_sum = 0
        self.wrong = 0

    def add(self, batch: Any) -> None:
        import numpy as np

        if self.kind == "record":
            ids = np.asarray(batch["y"]).astype(np.int64).ravel()
            x = np.asarray(batch["x"]).reshape(len(ids), -1)
            self.wrong += int((x[:, 0].astype(np.int64) != ids).sum())
        else:
            field, id_field = ("image", "label") if self.kind == "image" else ("data", "id")
            ids = np.asarray(batch[id_field]).astype(np.int64).ravel()
            size = IMAGE if self.kind == "image" else BLOB
            for value, i in zip(batch[field], ids, strict=True):
                self.wrong += int(bytes(value) != payload(int(i), size))
        self.count += len(ids)
        self.id_sum += int(ids.sum())


def _collate(batch: list[dict[str, Any]]) -> dict[str, Any]:
    """Lists of fields (bytes stay bytes; torch's default collate would stack arrays)."""
    import numpy as np

    out: dict[str, Any] = {}
    for key in batch[0]:
        values = [item[key] for item in batch]
        out[key] = np.stack(values) if isinstance(values[0], np.ndarray) else values
    return out


# -- children -----------------------------------------------------------------------------------
def child_prepare(system: str, workload: str, out: str, samples: int) -> dict[str, Any]:
    _, chunk_bytes, _, kind = WORKLOADS[workload]
    if os.path.exists(out):
        shutil.rmtree(out)
    if system == "mosaic":
        from streaming import MDSWriter

        with MDSWriter(columns=MDS_COLUMNS[kind], out=out, size_limit=chunk_bytes) as writer:
            for i in range(samples):
                writer.write(sample(i, kind))
    else:
        _optimize(kind, samples, out, chunk_bytes)
    return {"ok": True}


def _optimize(kind: str, samples: int, output: str, chunk_bytes: int, **options: Any) -> None:
    """The system's ``optimize`` of ``samples`` samples of ``kind`` (2 workers, quietly)."""
    import litdata as ld

    ld.optimize(
        fn=FNS[kind],
        inputs=list(range(samples)),
        output_dir=output,
        chunk_bytes=chunk_bytes,
        num_workers=2,
        verbose=False,
        **options,
    )


def child_stream(
    system: str,
    *,
    workload: str,
    url: str,
    endpoint: str,
    cache: str,
    workers: int,
    samples: int,
    stages: bool = False,
    no_cache: bool = False,
) -> dict[str, Any]:
    _, _, batch_size, kind = WORKLOADS[workload]
    import tempfile

    stages_file = os.path.join(tempfile.gettempdir(), f"cpu-stages-{os.getpid()}.jsonl")
    if stages:  # ours counts CPU per stage of its read path (LITDATA_CPU_STAGES)
        os.environ["LITDATA_CPU_STAGES"] = stages_file
    options = {"endpoint_url": endpoint, **CREDENTIALS, "region_name": REGION}
    if system == "mosaic":
        os.environ.update(
            S3_ENDPOINT_URL=endpoint,
            AWS_ACCESS_KEY_ID=CREDENTIALS["aws_access_key_id"],
            AWS_SECRET_ACCESS_KEY=CREDENTIALS["aws_secret_access_key"],
            AWS_DEFAULT_REGION=REGION,
        )
        import streaming
        import torch.utils.data
        from streaming.base.util import clean_stale_shared_memory

        clean_stale_shared_memory()

        def make() -> Any:
            ds = streaming.StreamingDataset(
                remote=url, local=cache, shuffle=True, batch_size=batch_size
            )
            return torch.utils.data.DataLoader(
                ds, batch_size=batch_size, num_workers=workers, collate_fn=_collate
            )
    else:
        import litdata as ld

        _allow_http_obstore()
        _import_clients(ld)
        # "local": ours on the local copy the datasets were uploaded from (no link, no cache)
        remote: dict[str, Any] = (
            {} if system == "local" else {"storage_options": options, "cache_dir": cache}
        )
        if no_cache:
            remote["max_cache_size"] = 0

        def make() -> Any:
            ds = ld.StreamingDataset(url, shuffle=True, **remote)
            return ld.StreamingDataLoader(
                ds, batch_size=batch_size, num_workers=workers, collate_fn=_collate
            )

    checker = Checker(kind)
    checking = 0.0  # the bench's own check of every sample, not the system's work
    cpu = _cpu_s()
    start = time.perf_counter()
    first = None
    for batch in make():
        if first is None:
            first = time.perf_counter() - start
        began = time.thread_time()
        checker.add(batch)
        checking += time.thread_time() - began
    seconds = time.perf_counter() - start
    cpu = _cpu_s() - cpu
    expected_sum = samples * (samples - 1) // 2
    ok = checker.count == samples and checker.id_sum == expected_sum and not checker.wrong
    return {
        "ok": ok,
        "epoch_s": seconds,
        "first_batch_s": first or 0.0,
        "cpu_s": cpu - checking,
        "check_cpu_s": checking,
        "count": checker.count,
        "wrong": checker.wrong,
        "stages": _stage_totals(stages_file) if stages else {},
    }


def _stage_totals(path: str) -> dict[str, float]:
    """CPU seconds per stage of ours' read path, all its processes together (none for others)."""
    try:
        from litdata.core import cpu_stages
    except ImportError:  # a checkout from before the counters
        return {}
    cpu_stages.flush()  # the training process's; its workers wrote theirs as they ended
    return cpu_stages.read_totals(path)


def _cpu_s() -> float:
    """CPU seconds of this process and of its children that ended (the loader's workers are
    joined when an epoch ends), user and system."""
    import resource

    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def _import_clients(ld: Any) -> None:
    """Resolve the lazy API and import the S3 client stacks before the clock starts."""
    ld.StreamingDataset, ld.StreamingDataLoader  # noqa: B018
    import importlib.util

    for name in ("s3fs", "boto3", "litdata.plugins.storage.s3", "litdata.streaming.downloader"):
        with contextlib.suppress(ImportError):
            if importlib.util.find_spec(name) is not None:
                importlib.import_module(name)


def _allow_http_obstore() -> None:
    """LitData 0.2.76's obstore client refuses ``http://`` endpoints unless told ``allow_http``."""
    try:
        import obstore  # noqa: F401

        from litdata.streaming import downloader
    except ImportError:
        return
    options = getattr(downloader, "_OBSTORE_CLIENT_OPTIONS", None)
    if isinstance(options, dict):
        options["allow_http"] = "true"


def _s3_client(endpoint: str) -> Any:
    """A boto3 S3 client at ``endpoint`` with connections for ``PARALLEL_RANGES`` requests."""
    import boto3
    from botocore.config import Config

    config = Config(max_pool_connections=PARALLEL_RANGES * 2, retries={"mode": "standard"})
    return boto3.client(
        "s3", endpoint_url=endpoint, region_name=REGION, config=config, **CREDENTIALS
    )


def child_limit(url: str, endpoint: str) -> dict[str, Any]:
    """Every object under ``url`` with ``PARALLEL_RANGES`` ranged GETs at once, in turn."""
    from concurrent.futures import ThreadPoolExecutor

    client = _s3_client(endpoint)
    bucket, _, prefix = url.removeprefix("s3://").partition("/")
    listed = client.list_objects_v2(Bucket=bucket, Prefix=prefix + "/")["Contents"]
    total = 0
    cpu = _cpu_s()
    start = time.perf_counter()
    with ThreadPoolExecutor(PARALLEL_RANGES) as pool:
        for item in listed:
            size = int(item["Size"])
            step = max(1, -(-size // PARALLEL_RANGES))

            def get(first: int, key: str = item["Key"], size: int = size, step: int = step) -> int:
                last = min(size, first + step) - 1
                body = client.get_object(Bucket=bucket, Key=key, Range=f"bytes={first}-{last}")
                return len(body["Body"].read())

            total += sum(pool.map(get, range(0, size, step)))
    seconds = time.perf_counter() - start
    cpu = _cpu_s() - cpu
    return {"ok": True, "epoch_s": seconds, "first_batch_s": 0.0, "bytes": total, "cpu_s": cpu}


def child_upload_limit(url: str, endpoint: str, source: str) -> dict[str, Any]:
    """Every file of ``source`` put under ``url``: multipart, ``PARALLEL_RANGES`` parts at once.

    The files are read before the clock starts: this is what the link (and the server behind
    it) take in, with nothing made on the way.
    """
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path

    client = _s3_client(endpoint)
    bucket, _, prefix = url.removeprefix("s3://").partition("/")
    files = [p for p in sorted(Path(source).iterdir()) if p.is_file() and p.name[0] != "."]
    payloads = [(f"{prefix}/{p.name}", p.read_bytes()) for p in files]
    smallest = 5 << 20  # S3's least part but the last
    start = time.perf_counter()
    with ThreadPoolExecutor(PARALLEL_RANGES) as pool:
        for key, data in payloads:
            step = max(smallest, -(-len(data) // PARALLEL_RANGES))
            if len(data) <= step:
                client.put_object(Bucket=bucket, Key=key, Body=data)
                continue
            upload = client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]

            def put(
                number: int, key: str = key, data: bytes = data, step: int = step, job: str = upload
            ) -> Any:
                body = data[(number - 1) * step : number * step]
                answer = client.upload_part(
                    Bucket=bucket, Key=key, UploadId=job, PartNumber=number, Body=body
                )
                return {"PartNumber": number, "ETag": answer["ETag"]}

            parts = list(pool.map(put, range(1, -(-len(data) // step) + 1)))
            client.complete_multipart_upload(
                Bucket=bucket, Key=key, UploadId=upload, MultipartUpload={"Parts": parts}
            )
    seconds = time.perf_counter() - start
    total = sum(len(data) for _, data in payloads)
    return {"ok": True, "epoch_s": seconds, "first_batch_s": 0.0, "bytes": total}


def child_upload(
    system: str, workload: str, url: str, endpoint: str, samples: int
) -> dict[str, Any]:
    _, chunk_bytes, _, kind = WORKLOADS[workload]
    options = {"endpoint_url": endpoint, **CREDENTIALS, "region_name": REGION}
    start = time.perf_counter()
    _optimize(kind, samples, url, chunk_bytes, storage_options=options)
    return {"ok": True, "epoch_s": time.perf_counter() - start, "first_batch_s": 0.0}


def child_main(argv: list[str]) -> int:
    action, system, arguments = argv[0], argv[1], json.loads(argv[2])
    if action == "prepare":
        result = child_prepare(system, **arguments)
    elif action == "stream" and system == "limit":
        result = child_limit(arguments["url"], arguments["endpoint"])
    elif action == "stream":
        result = child_stream(system, **arguments)
    elif system == "limit":
        result = child_upload_limit(arguments["url"], arguments["endpoint"], arguments["source"])
    else:
        result = child_upload(system, **arguments)
    print(RESULT + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(child_main(sys.argv[1:]))
