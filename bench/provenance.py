"""What the provenance log costs: streaming throughput without and with ``provenance_dir``.

One dataset (``--count`` samples ``{"x": float32[16], "y": int}``, ``chunk_bytes="4MB"``,
written once under ``~/.cache/litdata-bench/data/provenance/``) is streamed for one epoch
(``StreamingDataLoader``, batch 256, shuffled) in a fresh process per measurement, read alone
(``single``) or as a two-dataset mixture of its two halves (``mixture``, weights 0.5/0.5),
without and with ``provenance_dir=`` (a temporary folder; the log's size is reported).

Each measurement reports samples/s (wall clock) and CPU nanoseconds per sample (the training
process and its DataLoader workers, from ``getrusage``). Settings are interleaved within each
repeat; results are medians over repeats.

    python bench/provenance.py [--count 200000] [--repeats 5] [--workers 0,2] [--out FILE]

Run from the repository root with the ours interpreter (``.venv/bin/python``), under
``flock /tmp/litdata-cpu.lock`` on a shared machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from children import cpu_seconds, emit, run_child

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULT = "PROVENANCE_RESULT "
SETTINGS = ("without", "provenance_dir")
KINDS = ("single", "mixture")
BATCH = 256


def build(folder: Path, count: int) -> None:
    """Write the dataset (once per ``count``)."""
    import numpy as np

    import litdata as ld

    if (folder / "index.json").exists():
        return
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((count, 16), dtype=np.float32)
    ld.write_dataset(({"x": xs[i], "y": i} for i in range(count)), folder, chunk_bytes="4MB")


def child(data: str, kind: str, setting: str, workers: int, logs: str) -> dict[str, Any]:
    """Stream one epoch; return samples/s, CPU ns/sample and the log's size."""
    import litdata as ld

    dataset: Any = ld.StreamingDataset(data, shuffle=True, seed=1)
    if kind == "mixture":
        half = len(dataset) // 2
        halves = [dataset.subset(range(half)), dataset.subset(range(half, len(dataset)))]
        dataset = ld.CombinedStreamingDataset(halves, weights=[0.5, 0.5], iterate_over_all=False)
    options = {"provenance_dir": logs} if setting == "provenance_dir" else {}
    loader = ld.StreamingDataLoader(dataset, batch_size=BATCH, num_workers=workers, **options)
    cpu_before = cpu_seconds()
    start = time.perf_counter()
    samples = sum(len(batch["y"]) for batch in loader)  # the workers are joined at the end
    seconds = time.perf_counter() - start
    cpu = cpu_seconds() - cpu_before
    size = sum(path.stat().st_size for path in Path(logs).glob("*.ids"))
    return {
        "samples": samples,
        "rate": samples / seconds,
        "cpu_ns_per_sample": cpu / samples * 1e9,
        "log_bytes": size,
    }


def measure(data: Path, kind: str, setting: str, workers: int) -> dict[str, Any]:
    """Run one child process; return its result."""
    with tempfile.TemporaryDirectory(prefix="litdata-provenance-bench-") as logs:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        command = [sys.executable, __file__, "--child", setting, "--kind", kind]
        command += ["--data", str(data), "--workers", str(workers), "--logs", logs]
        return run_child(command, env, RESULT)


def main() -> None:
    """Measure every kind, setting and worker count; print and save the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", default="0,2")
    parser.add_argument("--out")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--kind", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--logs", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = child(args.data, args.kind, args.child, int(args.workers), args.logs)
        emit(RESULT, result)
        return
    data = Path.home() / ".cache" / "litdata-bench" / "data" / "provenance" / str(args.count)
    build(data, args.count)
    counts = [int(n) for n in args.workers.split(",")]
    runs: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for repeat in range(args.repeats):
        order = SETTINGS if repeat % 2 == 0 else SETTINGS[::-1]
        for kind in KINDS:
            for workers in counts:
                for setting in order:
                    result = measure(data, kind, setting, workers)
                    runs.setdefault((kind, workers, setting), []).append(result)
        print(f"repeat {repeat + 1}/{args.repeats} done", file=sys.stderr, flush=True)
    stamp = dt.datetime.now(dt.timezone.utc)
    lines = [
        f"# provenance log cost, {args.count:,} samples, batch {BATCH}, shuffled, medians of "
        f"{args.repeats} interleaved repeats ({stamp:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs)",
        "",
        "| dataset | workers | setting | CPU ns/sample | vs without | samples/s | vs without "
        "| samples/s min-max | log bytes/sample |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in KINDS:
        for workers in counts:
            base = runs[kind, workers, "without"]
            base_rate = statistics.median(r["rate"] for r in base)
            base_cpu = statistics.median(r["cpu_ns_per_sample"] for r in base)
            for setting in SETTINGS:
                rows = runs[kind, workers, setting]
                rates = [r["rate"] for r in rows]
                rate = statistics.median(rates)
                cpu = statistics.median(r["cpu_ns_per_sample"] for r in rows)
                per_sample = statistics.median(r["log_bytes"] / r["samples"] for r in rows)
                lines.append(
                    f"| {kind} | {workers} | {setting} | {cpu:,.0f} | {cpu / base_cpu:.3f} | "
                    f"{rate:,.0f} | {rate / base_rate:.3f} | {min(rates):,.0f}-{max(rates):,.0f} "
                    f"| {per_sample:.1f} |"
                )
    table = "\n".join(lines) + "\n"
    print(table)
    out = Path(args.out) if args.out else BENCH / "results" / f"{stamp:%Y-%m-%d-%H%M}-provenance.md"
    out.write_text(table)
    out.with_suffix(".json").write_text(
        json.dumps({f"{k}/{w}/{s}": v for (k, w, s), v in runs.items()}, indent=1)
    )


if __name__ == "__main__":
    main()
