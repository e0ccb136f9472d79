"""Bench: MDS shards and raw files, ours against the peers that read them, in one run.

    python bench/formats_mds.py                       # 8,000 MDS samples, 4,000 raw files
    python bench/formats_mds.py --samples 2000 --files 1000 --workers 0 --repeats 1

Two rows, each timed from building the dataset and loader to the last batch (one epoch,
batch 64, the same list-of-samples collate on both sides), samples/s and the peak PSS of the
reading process tree (sampled every 200 ms):

- ``mds``: one MDS dataset written by MosaicML Streaming's ``MDSWriter`` (``{"image": ~16 KB
  bytes, "label": int}``, 16 MB shards, uncompressed), read by ours
  (``StreamingDataset(dir)`` + ``StreamingDataLoader``) and by Mosaic
  (``streaming.StreamingDataset(local=dir)`` + torch ``DataLoader``). Target: ours >= 1.5x.
- ``raw``: a folder of ~16 KB files in 10 class folders, read by ours and by LitData 0.2.76
  (``StreamingRawDataset(dir)`` + torch ``DataLoader(shuffle=True)``), each listing the folder
  itself (a fresh cache dir per run). Target: ours >= 1.2x.
- ``raw-s3``: the same files uploaded to a moto S3 server on loopback (both libraries reach
  it through ``AWS_ENDPOINT_URL`` and the standard credential variables). Ours only: the
  peers' LitData lists S3 folders with s3fs, which its venv lacks. moto answers one request at
  a time (~150 small GETs/s here), so this row measures the server more than the reader.

Every child runs in its own process: ours under ``.venv`` with ``PYTHONPATH=<repo>``, the peers
under the peers' venv (``bench/peers.py``) from a directory outside the repository. Children
alternate (ours, peer, ours, peer...) and the median of ``--repeats`` is reported. Each child
checks that it saw every sample exactly once.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from memory import PeakPss  # noqa: E402
from remote import MotoServer  # noqa: E402

CACHE = Path(os.environ.get("LITDATA_BENCH_CACHE", Path.home() / ".cache" / "litdata-bench"))
DATA = CACHE / "data" / "formats"
PEER = Path(os.environ.get("LITDATA_BENCH_PEERS_VENV", CACHE / "peers-venv")) / "bin" / "python"
OURS = Path(os.environ.get("LITDATA_BENCH_OURS_PYTHON", REPO / ".venv" / "bin" / "python"))

WRITE_MDS = """
import sys, numpy as np
from streaming import MDSWriter
out, count = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
with MDSWriter(out=out, columns={"image": "bytes", "label": "int"}, size_limit=16 << 20) as w:
    for i in range(count):
        w.write({"image": rng.bytes(int(rng.integers(12000, 20000))), "label": i})
"""

COMMON = """
import json, sys, time
path, workers, cache = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def collate(batch):
    return batch
def finish(start, labels):
    seconds = time.perf_counter() - start
    assert sorted(labels) == list(range(len(labels))), "not every sample exactly once"
    print("RESULT " + json.dumps({"samples": len(labels), "seconds": seconds}))
"""

OURS_MDS = (
    COMMON
    + """
from litdata import StreamingDataLoader, StreamingDataset
start = time.perf_counter()
dataset = StreamingDataset(path, shuffle=True, cache_dir=cache)
loader = StreamingDataLoader(dataset, batch_size=64, num_workers=workers, collate_fn=collate)
finish(start, [s["label"] for batch in loader for s in batch])
"""
)

MOSAIC_MDS = (
    COMMON
    + """
from streaming import StreamingDataset
from streaming.base.util import clean_stale_shared_memory
from torch.utils.data import DataLoader
clean_stale_shared_memory()
start = time.perf_counter()
dataset = StreamingDataset(local=path, shuffle=True, batch_size=64)
loader = DataLoader(dataset, batch_size=64, num_workers=workers, collate_fn=collate)
finish(start, [s["label"] for batch in loader for s in batch])
"""
)

RAW = (
    COMMON
    + """
from torch.utils.data import DataLoader
from litdata import StreamingRawDataset
start = time.perf_counter()
dataset = StreamingRawDataset(path, cache_dir=cache, recompute_index=True)
loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=workers, collate_fn=collate)
labels = [int.from_bytes(item[:4], "little") for batch in loader for item in batch]
finish(start, labels)
"""
)


def _child(
    python: Path, code: str, *args: str, peer: bool, extra: dict[str, str] | None = None
) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(extra or {})
    if not peer:
        env["PYTHONPATH"] = str(REPO)
    scratch = Path(tempfile.mkdtemp(prefix="bench-formats-", dir=CACHE / "tmp"))
    env["TMPDIR"] = str(scratch)
    try:
        process = subprocess.Popen(
            [str(python), "-c", code, *args, str(scratch / "cache")],
            cwd=scratch,  # outside the repository: its litdata would shadow LitData
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        with PeakPss(process.pid) as peak:
            out, err = process.communicate(timeout=900)
        if process.returncode != 0:
            raise RuntimeError(f"child failed ({python}):\n{err[-3000:]}")
        line = next(x for x in reversed(out.splitlines()) if x.startswith("RESULT "))
        result: dict[str, Any] = json.loads(line[len("RESULT ") :])
        result["peak_mb"] = peak.peak_mb
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


UPLOAD = """
import os, sys, boto3
source, bucket = sys.argv[1], sys.argv[2]
client = boto3.client("s3")
client.create_bucket(Bucket=bucket)
for folder, _, names in os.walk(source):
    for name in names:
        if name == "index.json.zstd":  # LitData's list of the local folder, with local paths
            continue
        path = os.path.join(folder, name)
        client.upload_file(path, bucket, "raw/" + os.path.relpath(path, source))
"""


def _s3_env(endpoint: str) -> dict[str, str]:
    """Both libraries reach the moto server through the standard AWS variables."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }


def prepare(samples: int, files: int) -> tuple[Path, Path]:
    """The MDS dataset and the raw folder (written once, kept between runs)."""
    mds = DATA / f"mds-{samples}"
    if not (mds / "index.json").exists():
        shutil.rmtree(mds, ignore_errors=True)
        subprocess.run(
            [str(PEER), "-c", WRITE_MDS, str(mds), str(samples)],
            check=True,
            cwd=CACHE,
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )
    raw = DATA / f"raw-{files}"
    complete = DATA / f"raw-{files}.complete"  # outside the folder: it would be a file to read
    if not complete.exists():
        shutil.rmtree(raw, ignore_errors=True)
        rng = __import__("random").Random(0)
        for index in range(files):
            folder = raw / f"class{index % 10}"
            folder.mkdir(parents=True, exist_ok=True)
            body = index.to_bytes(4, "little") + rng.randbytes(rng.randint(12000, 20000))
            (folder / f"{index:06d}.bin").write_bytes(body)
        complete.write_text("")
    return mds, raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=8000)
    parser.add_argument("--files", type=int, default=4000)
    parser.add_argument("--workers", default="0,2")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-s3", action="store_true", help="skip the raw-s3 row")
    args = parser.parse_args()
    (CACHE / "tmp").mkdir(parents=True, exist_ok=True)
    # The peers are installed with their .pyc files; our checkout under PYTHONDONTWRITEBYTECODE
    # would otherwise compile every module in every child (as bench/run.py does too).
    subprocess.run([str(OURS), "-m", "compileall", "-q", str(REPO / "litdata")], check=True)
    mds, raw = prepare(args.samples, args.files)
    rows: list[tuple[str, str, str, str, str | None, int]] = [
        ("mds", "Mosaic 0.13", str(mds), OURS_MDS, MOSAIC_MDS, args.samples),
        ("raw", "LitData 0.2.76", str(raw), RAW, RAW, args.files),
    ]
    server = None
    extra: dict[str, str] = {}
    if not args.no_s3:
        server = MotoServer(OURS.parent, CACHE / "tmp", CACHE / "tmp" / "moto")
        server.start()
        extra = _s3_env(server.endpoint)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        subprocess.run(
            [str(OURS), "-c", UPLOAD, str(raw), "bench-raw"], check=True, env={**env, **extra}
        )
        # LitData lists S3 folders with s3fs, which the peers' venv does not have: ours only.
        rows.append(("raw-s3", "(LitData: no s3fs)", "s3://bench-raw/raw", RAW, None, args.files))
    lines = [
        f"{time.strftime('%Y-%m-%d %H:%M')} UTC, {os.cpu_count()} CPUs (shared with other jobs), "
        f"median of {args.repeats}",
        "",
        "| row | workers | ours samples/s | peer | peer samples/s | ratio | ours peak MB | "
        "peer peak MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, peer_name, path, ours_code, peer_code, count in rows:
        for workers in [int(w) for w in args.workers.split(",")]:
            ours, theirs = [], []
            for _ in range(args.repeats):
                ours.append(_child(OURS, ours_code, path, str(workers), peer=False, extra=extra))
                if peer_code is not None:
                    theirs.append(
                        _child(PEER, peer_code, path, str(workers), peer=True, extra=extra)
                    )
            assert all(r["samples"] == count for r in ours + theirs)
            rate = statistics.median(r["samples"] / r["seconds"] for r in ours)
            peak = statistics.median(r["peak_mb"] for r in ours)
            peer_rate, ratio, peer_peak = "n/a", "n/a", "n/a"
            if theirs:
                their_rate = statistics.median(r["samples"] / r["seconds"] for r in theirs)
                peer_rate, ratio = f"{their_rate:,.0f}", f"{rate / their_rate:.2f}x"
                peer_peak = f"{statistics.median(r['peak_mb'] for r in theirs):,.0f}"
            lines.append(
                f"| {name} | {workers} | {rate:,.0f} | {peer_name} | {peer_rate} | {ratio} | "
                f"{peak:,.0f} | {peer_peak} |"
            )
            print(lines[-1], flush=True)
    if server is not None:
        server.stop()
    table = "\n".join(lines)
    print(table)
    out = HERE / "results" / f"{time.strftime('%Y-%m-%d-%H%M')}-formats-mds-raw.md"
    out.write_text(f"# formats: MDS and raw files\n\n{table}\n")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
