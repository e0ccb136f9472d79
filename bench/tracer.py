"""What the pipeline tracer costs: streaming throughput with tracing not enabled, off, and on.

One dataset (``--count`` samples ``{"x": float32[16], "y": int}``, ``chunk_bytes="4MB"``,
written once under ``~/.cache/litdata-bench/data/tracer/``) is streamed for one epoch
(``StreamingDataLoader``, batch 256, shuffled) in a fresh process per measurement, under each
tracer setting:

- ``not enabled``: no ``enable_tracer`` call, no ``LITDATA_TRACE_*`` variables;
- ``off``: ``enable_tracer(level="off")``;
- ``batch``, ``chunk`` (the default level), ``sample``: ``enable_tracer(level=...)`` writing
  to a log file that is deleted after each measurement (its size is reported).

Each measurement reports samples/s (wall clock) and CPU nanoseconds per sample (the training
process and its DataLoader workers, from ``getrusage``): on a shared machine the wall clock
swings with other jobs, while CPU time per sample shows what tracing itself adds.

Settings are interleaved within each repeat (the order rotates from one repeat to the next),
so load on the shared machine hits all of them alike; results are medians over repeats.

    python bench/tracer.py [--count 400000] [--repeats 7] [--workers 0,2] [--out FILE]

Run from the repository root with the ours interpreter (``.venv/bin/python``).
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
RESULT = "TRACER_RESULT "
SETTINGS = ("not enabled", "off", "batch", "chunk", "sample")
BATCH = 256


def build(folder: Path, count: int) -> None:
    """Write the dataset (once per ``count``)."""
    import numpy as np

    import litdata as ld

    if (folder / "index.json").exists():
        return
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((count, 16), dtype=np.float32)
    samples = ({"x": xs[i], "y": i} for i in range(count))
    ld.write_dataset(samples, folder, chunk_bytes="4MB")


def child(data: str, setting: str, workers: int, log: str) -> dict[str, Any]:
    """Stream one epoch under ``setting``; return samples/s and the log's size."""
    import litdata as ld
    from litdata.observe import enable_tracer

    if setting != "not enabled":
        enable_tracer(level=setting, log_file=log)
    dataset = ld.StreamingDataset(data, shuffle=True, seed=1)
    loader = ld.StreamingDataLoader(dataset, batch_size=BATCH, num_workers=workers)
    cpu_before = cpu_seconds()
    start = time.perf_counter()
    samples = sum(len(batch["y"]) for batch in loader)  # the workers are joined at the end
    seconds = time.perf_counter() - start
    cpu = cpu_seconds() - cpu_before
    if samples != len(dataset):
        raise SystemExit(f"streamed {samples} samples, expected {len(dataset)}")
    size = os.path.getsize(log) if os.path.exists(log) else 0
    with open(log, "rb") if size else open(os.devnull, "rb") as handle:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
    return {
        "log_lines": lines,
        "rate": samples / seconds,
        "seconds": seconds,
        "cpu_ns_per_sample": cpu / samples * 1e9,
        "log_bytes": size,
    }


def event_cost_ns(events: int = 20_000, repeats: int = 5) -> float:
    """The median cost of writing one trace line (a ``read`` begin event), in nanoseconds."""
    from litdata.observe.tracer import LEVELS, Tracer

    costs = []
    with tempfile.TemporaryDirectory(prefix="litdata-tracer-bench-") as scratch:
        tracer = Tracer(str(Path(scratch) / "cost.log"), LEVELS["chunk"])
        for _ in range(repeats):
            start = time.perf_counter_ns()
            for number in range(events):
                tracer.begin("read", "read", chunk="chunk-0-12.bin", index=number, size=4096)
            costs.append((time.perf_counter_ns() - start) / events)
        tracer.close()
    return statistics.median(costs)


def measure(data: Path, setting: str, workers: int) -> dict[str, Any]:
    """Run one child process; return its result."""
    with tempfile.TemporaryDirectory(prefix="litdata-tracer-bench-") as scratch:
        log = str(Path(scratch) / "trace.log")
        env = {k: v for k, v in os.environ.items() if not k.startswith("LITDATA_TRACE")}
        env.pop("LITDATA_LOG_FILE", None)
        env["PYTHONPATH"] = str(REPO)
        command = [sys.executable, __file__, "--child", setting, "--data", str(data)]
        command += ["--workers", str(workers), "--log", log]
        return run_child(command, env, RESULT)


def main() -> None:
    """Measure every setting and worker count; print and save the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=400_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--workers", default="0,2")
    parser.add_argument("--out")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--log", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        emit(RESULT, child(args.data, args.child, int(args.workers), args.log))
        return
    data = Path.home() / ".cache" / "litdata-bench" / "data" / "tracer" / str(args.count)
    build(data, args.count)
    counts = [int(n) for n in args.workers.split(",")]
    runs: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for repeat in range(args.repeats):
        order = SETTINGS[repeat % len(SETTINGS) :] + SETTINGS[: repeat % len(SETTINGS)]
        for workers in counts:
            for setting in order:
                runs.setdefault((workers, setting), []).append(measure(data, setting, workers))
        print(f"repeat {repeat + 1}/{args.repeats} done", file=sys.stderr, flush=True)
    line_ns = event_cost_ns()
    stamp = dt.datetime.now(dt.timezone.utc)
    lines = [
        f"# tracer cost, {args.count:,} samples, batch {BATCH}, shuffled, medians of "
        f"{args.repeats} interleaved repeats ({stamp:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs)",
        "",
        "CPU ns/sample counts the CPU time of the training process and its DataLoader workers:",
        "it is what tracing adds, and it varies far less than wall-clock throughput when other",
        "jobs share the machine. *Lines x cost* is the tracer's own work: trace lines per",
        f"sample times the measured cost of one line ({line_ns:,.0f} ns, median of a tight loop),",
        "relative to the CPU time per sample without tracing; it does not move with the load.",
        "",
        "| workers | tracer | CPU ns/sample (median) | vs not enabled | samples/s (median) "
        "| vs not enabled | samples/s min-max | lines/sample | lines x cost | log MB |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for workers in counts:
        base = statistics.median(r["rate"] for r in runs[workers, "not enabled"])
        base_cpu = statistics.median(r["cpu_ns_per_sample"] for r in runs[workers, "not enabled"])
        for setting in SETTINGS:
            rates = [r["rate"] for r in runs[workers, setting]]
            median = statistics.median(rates)
            cpu = statistics.median(r["cpu_ns_per_sample"] for r in runs[workers, setting])
            log_mb = statistics.median(r["log_bytes"] for r in runs[workers, setting]) / 1e6
            per_sample = statistics.median(r["log_lines"] for r in runs[workers, setting])
            per_sample /= args.count
            own = per_sample * line_ns / base_cpu
            lines.append(
                f"| {workers} | {setting} | {cpu:,.0f} | {cpu / base_cpu:.3f} | {median:,.0f} | "
                f"{median / base:.3f} | {min(rates):,.0f}-{max(rates):,.0f} | "
                f"{per_sample:.4f} | {own:.2%} | {log_mb:.2f} |"
            )
    table = "\n".join(lines) + "\n"
    print(table)
    out = Path(args.out) if args.out else BENCH / "results" / f"{stamp:%Y-%m-%d-%H%M}-tracer.md"
    out.write_text(table)
    out.with_suffix(".json").write_text(
        json.dumps({f"{w}/{s}": v for (w, s), v in runs.items()}, indent=1)
    )


if __name__ == "__main__":
    main()
