"""Keyed lookup ``ds["id"]`` on a 1,000,000-sample dataset: ours vs LitData, in one run.

Each system writes the same keyed dataset with its own ``optimize(..., key_fn=...)`` (2
workers, ``chunk_bytes="64MB"``; samples ``{"uid": "id-0000042", "x": 42}``), once, under
``~/.cache/litdata-bench/data/keys/``. Then, per repeat, a fresh process of each system:

- opens the dataset and looks up one key: the *cold* lookup (the sidecar is opened, a chunk is
  read), timed from before ``StreamingDataset(...)`` to the sample;
- looks up ``--lookups`` random keys (seeded, the same for both): the *warm* p50 and p99;
- checks every sample it got against its key, and reports its peak RSS and what opening the
  dataset and the lookups added to its RSS (imports excluded).

    python bench/keys.py [--count 1000000] [--lookups 2000] [--repeats 3] [--out FILE]

Results are medians over repeats, printed and written as a markdown table (``--out``, default
``bench/results/<date>-keys.md``). Run from the repository root with the ours interpreter.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SEED = 7
RESULT = "KEYS_RESULT "


def sample(i: int) -> dict[str, Any]:
    """The ``optimize`` fn: one small keyed sample."""
    return {"uid": f"id-{i:07d}", "x": i}


def uid(item: dict[str, Any]) -> str:
    """The ``key_fn``."""
    return str(item["uid"])


def _rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def build(out: Path, count: int) -> dict[str, Any]:
    """Write the keyed dataset (child); return the seconds it took."""
    import litdata as ld

    start = time.perf_counter()
    ld.optimize(
        sample,
        list(range(count)),
        str(out),
        chunk_bytes="64MB",
        num_workers=2,
        key_fn=uid,
        verbose=False,
    )
    return {"build_s": time.perf_counter() - start}


def lookup(dataset: Path, count: int, lookups: int) -> dict[str, Any]:
    """Time a cold and ``lookups`` warm lookups (child)."""
    keys = random.Random(SEED).sample(range(count), lookups + 1)
    import litdata as ld

    streaming_dataset = ld.StreamingDataset  # imports torch: not part of a lookup
    before = _rss_mb()
    start = time.perf_counter()
    ds = streaming_dataset(str(dataset))
    got = ds[f"id-{keys[0]:07d}"]
    cold = time.perf_counter() - start
    wrong = int(got["x"] != keys[0])
    opened = _rss_mb()
    times = []
    for key in keys[1:]:
        t0 = time.perf_counter()
        got = ds[f"id-{key:07d}"]
        times.append(time.perf_counter() - t0)
        wrong += int(got["x"] != key)
    times.sort()
    return {
        "cold_ms": cold * 1e3,
        "p50_us": times[len(times) // 2] * 1e6,
        "p99_us": times[int(len(times) * 0.99)] * 1e6,
        "wrong": wrong,
        "rss_added_mb": _rss_mb() - before,
        "rss_after_open_mb": opened,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3,
    }


# -- the parent -------------------------------------------------------------------------------


def _python(system: str) -> tuple[str, dict[str, str]]:
    sys.path.insert(0, str(BENCH))
    import peers

    if system == "litdata":
        return str(peers.venv_python()), peers.peer_env()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return sys.executable, env


def _child(system: str, *args: str) -> dict[str, Any]:
    python, env = _python(system)
    result = subprocess.run(
        [python, str(Path(__file__).resolve()), "--child", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith(RESULT)]
    if result.returncode or not lines:
        raise RuntimeError(
            f"{system} {args[0]} failed:\n{result.stdout[-2000:]}{result.stderr[-4000:]}"
        )
    return dict(json.loads(lines[-1][len(RESULT) :]))


def _dataset(system: str, count: int) -> tuple[Path, float | None]:
    root = Path(os.environ.get("LITDATA_BENCH_DIR", Path.home() / ".cache/litdata-bench/data"))
    out = root / "keys" / f"{system}-{count}"
    if (out / "index.json").exists() and (out / "keys").exists() and system != "ours":
        return out, None
    if out.exists():
        shutil.rmtree(out)
    print(f"building {system} ({count:,} keyed samples) ...", flush=True)
    return out, float(_child(system, "build", str(out), str(count))["build_s"])


def _table(results: dict[str, list[dict[str, Any]]], built: dict[str, float | None]) -> str:
    metrics = [
        ("cold_ms", "cold lookup ms (open + first ds[key])"),
        ("p50_us", "warm p50 µs"),
        ("p99_us", "warm p99 µs"),
        ("rss_added_mb", "RSS added MB (open + lookups, after imports)"),
        ("peak_rss_mb", "peak RSS MB"),
    ]
    systems = list(results)
    lines = [
        f"| metric | {' | '.join(systems)} | ours / litdata |",
        "|---|" + "---:|" * (len(systems) + 1),
    ]
    for key, label in metrics:
        values = {
            system: statistics.median(run[key] for run in runs) for system, runs in results.items()
        }
        ratio = (
            values.get("ours", float("nan")) / values["litdata"]
            if values.get("litdata")
            else float("nan")
        )
        cells = " | ".join(f"{values[system]:,.1f}" for system in systems)
        lines.append(f"| {label} | {cells} | {ratio:.2f} |")
    wrong = {system: sum(run["wrong"] for run in runs) for system, runs in results.items()}
    lines.append(
        f"| wrong samples (all repeats) | {' | '.join(str(wrong[s]) for s in systems)} | |"
    )
    build_cells = " | ".join("-" if built[s] is None else f"{built[s]:.1f}" for s in systems)
    lines.append(f"| optimize with key_fn s (this run) | {build_cells} | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point (parent, or ``--child build|lookup ...``)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        action, path, count, *rest = argv[1:]
        if action == "build":
            result = build(Path(path), int(count))
        else:
            result = lookup(Path(path), int(count), int(rest[0]))
        print(RESULT + json.dumps(result), flush=True)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--lookups", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--systems", default="ours,litdata")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    systems = args.systems.split(",")
    datasets, built = {}, {}
    for system in systems:
        datasets[system], built[system] = _dataset(system, args.count)
    results: dict[str, list[dict[str, Any]]] = {system: [] for system in systems}
    for repeat in range(args.repeats):
        for system in systems:
            run = _child(
                system, "lookup", str(datasets[system]), str(args.count), str(args.lookups)
            )
            results[system].append(run)
            print(f"  repeat {repeat} {system}: {run}", flush=True)
    started = dt.datetime.now()
    text = (
        f"# keyed lookup, {args.count:,} samples, {args.lookups:,} warm lookups, "
        f"medians of {args.repeats} ({started:%Y-%m-%d %H:%M}, {os.cpu_count()} CPUs)\n\n"
        f"{_table(results, built)}\n"
    )
    print(text)
    out = args.out or BENCH / "results" / f"{started:%Y-%m-%d-%H%M}-keys.md"
    out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
