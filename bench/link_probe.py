"""Per-request times of the S3 server behind the link proxy: is a slow row the server's, the
proxy's or the reader's?

Starts the server (``moto`` or ``seaweedfs``) and the link proxy as ``remote_link.py`` does,
uploads ours' R1, then times ranged GETs of one 64 MB object (boto3, 1, 8 and 16 at once, and
8 with ``If-Match``) straight to the server, through the proxy with no limits and through the
default link, and streams one R1 epoch of ours per worker count through the default link,
printing the proxy's log of each request (when it arrived, when its answer's head left).

    python bench/link_probe.py [--server seaweedfs] [--workers 0,2] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
for _path in (str(BENCH), str(REPO / "tests")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import peers  # noqa: E402
import remote  # noqa: E402
import remote_link  # noqa: E402
from link_children import _s3_client  # noqa: E402
from support.link_proxy import DEFAULT_LINK, OPEN_LINK, LinkProxy  # noqa: E402

SAMPLES = 20_000


def ranged(endpoint: str, key: str, count: int, size: int, etag: str | None = None) -> str:
    """``count`` ranged GETs covering the object at once: wall time and each one's first byte."""
    client = _s3_client(endpoint)
    step = -(-size // count)

    def get(number: int) -> tuple[float, int]:
        began = time.perf_counter()
        extra = {"IfMatch": etag} if etag else {}
        last = min(size, (number + 1) * step) - 1
        answer = client.get_object(
            Bucket="bench", Key=key, Range=f"bytes={number * step}-{last}", **extra
        )
        first = time.perf_counter() - began
        return first, len(answer["Body"].read())

    with ThreadPoolExecutor(count) as pool:
        began = time.perf_counter()
        results = list(pool.map(get, range(count)))
        wall = time.perf_counter() - began
    firsts = ", ".join(f"{first * 1000:.0f}" for first, _ in results)
    moved = sum(length for _, length in results)
    return f"{wall:.3f} s, {moved / wall / 1e6:.0f} MB/s; first byte (ms): {firsts}"


def epoch(proxy: LinkProxy, root: Path, workers: int) -> list[str]:
    """One R1 epoch of ours through the proxy: its result and the proxy's log of it."""
    cache = root / "cache-probe"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir()
    arguments = remote_link.child_arguments(
        "ours", "R1", workers, SAMPLES, endpoint=proxy.endpoint, local_copies={}
    )
    arguments["cache"] = str(cache)
    command = [
        str(REPO / ".venv/bin/python"),
        str(BENCH / "link_children.py"),
        "stream",
        "ours",
        json.dumps(arguments),
    ]
    proxy.reset_log()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    found = [line for line in done.stdout.splitlines() if line.startswith("LINK_RESULT")]
    result: dict[str, Any] = json.loads(found[-1].split(" ", 1)[1]) if found else {}
    lines = [
        f"{workers} workers: epoch {result.get('epoch_s', 0):.2f} s, first batch "
        f"{result.get('first_batch_s', 0):.2f} s, ok {result.get('ok')}",
        "",
        "| connection | object | range | arrived s | answered s | first byte s | bytes |",
        "|---:|---|---|---:|---:|---:|---:|",
    ]
    log = sorted(proxy.log, key=lambda entry: entry.started)
    start = log[0].started if log else 0.0
    lines.extend(
        f"| {entry.connection} | {entry.path.rsplit('/', 1)[-1]} | {entry.range or '-'} | "
        f"{entry.started - start:.3f} | {entry.answered - start:.3f} | "
        f"{entry.answered - entry.started:.3f} | {entry.bytes_out} |"
        for entry in log[:48]
    )
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=("moto", "seaweedfs"), default="seaweedfs")
    parser.add_argument("--workers", default="0,2")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    options = remote_link.parse(["--workloads", "R1", "--systems", "ours", "--no-upload"])
    root = peers.scratch_dir() / "remote-link"
    root.mkdir(parents=True, exist_ok=True)
    python = REPO / ".venv/bin/python"
    lines = [f"# link probe: {args.server} behind the link proxy, R1", ""]
    with (
        remote_link._server(args.server, root, python) as endpoint,
        LinkProxy(endpoint, OPEN_LINK, cache_bytes=remote_link.COPY_BYTES) as proxy,
    ):
        local = remote_link.prepare(root, "ours", "R1", SAMPLES, options)
        remote.upload(str(python), endpoint, local, "s3://bench/ours/R1")
        size = remote_link._bytes(local)
        remote_link.warm_copies(proxy, "s3://bench/ours/R1", size, options, ())
        client = _s3_client(endpoint)
        listed = client.list_objects_v2(Bucket="bench", Prefix="ours/R1/")["Contents"]
        chunk = next(item for item in listed if item["Key"].endswith(".bin"))
        key, length = chunk["Key"], int(chunk["Size"])
        etag = client.head_object(Bucket="bench", Key=key)["ETag"]
        lines += [f"Ranged GETs covering {key} ({length:,} bytes):", ""]
        for label, where in (("server", endpoint), ("proxy, no limits", proxy.endpoint)):
            for count in (1, 8, 16):
                lines.append(f"- {label}, {count} at once: {ranged(where, key, count, length)}")
            tagged = ranged(where, key, 8, length, etag)
            lines.append(f"- {label}, 8 at once with If-Match: {tagged}")
        proxy.settings = DEFAULT_LINK
        for count in (8, 16):
            got = ranged(proxy.endpoint, key, count, length)
            lines.append(f"- proxy, default link, {count} at once: {got}")
        lines.append("")
        for workers in (int(w) for w in args.workers.split(",")):
            lines += epoch(proxy, root, workers)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
