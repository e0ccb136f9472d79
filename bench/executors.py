"""optimize on this machine with the local, dask and ray executors (2 workers each): W1 and W3.

    python bench/executors.py [--workloads W1,W3] [--repeats 3]

Each executor runs every workload (``chunk_bytes="64MB"``, ``num_workers=2``, shared-queue
order), each result is checked (sample count and an order-independent checksum, equal to
local's), and the table gives seconds (median of the repeats) with the ratio to local. Clusters
are started and warmed up (one untimed run, so that their workers have imported everything)
before the timing, which is reported apart: a Dask ``LocalCluster`` of 2 processes with 1
thread each, and ``ray.init(num_cpus=2)``. The per-task overhead of each cluster executor
comes from W3 run again with 16 times more tasks: the extra seconds times the 2 slots, over the
extra tasks. The table is printed and written to ``bench/results/<date>-executors.md``.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workloads import WORKLOADS, Checker, data_dir, ensure_data, optimize_fn, optimize_inputs

import litdata as ld

BENCH = Path(__file__).resolve().parent
WORKERS = 2
MANY = 16  # times more tasks, for the per-task overhead


@contextmanager
def _local() -> Iterator[dict[str, Any]]:
    yield {}


@contextmanager
def _dask() -> Iterator[dict[str, Any]]:
    from dask.distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=WORKERS, threads_per_worker=1, dashboard_address=None) as cluster,
        Client(cluster),
    ):
        yield {"address": cluster.scheduler_address}


@contextmanager
def _ray() -> Iterator[dict[str, Any]]:
    import ray

    path = os.pathsep.join(filter(None, [str(BENCH), os.environ.get("PYTHONPATH")]))
    ray.init(
        num_cpus=WORKERS,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    try:
        yield {}
    finally:
        ray.shutdown()


CLUSTERS: dict[str, Callable[[], Any]] = {"local": _local, "dask": _dask, "ray": _ray}


def _check(out: Path, kind: str) -> tuple[int, dict[str, int]]:
    """The dataset's writer ranks (tasks) and its checksum (order-independent)."""
    reader = ld.DatasetReader(out)
    checker = Checker(kind)
    for i in range(len(reader)):
        checker.add_sample(reader[i])
    ranks = {chunk.filename.split("-")[1] for chunk in reader.index.chunks}
    return len(ranks), checker.result()


def _optimize(name: str, options: dict[str, Any], workload: str, out: Path) -> float:
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    ld.optimize(
        functools.partial(optimize_fn, workload=workload, root=str(data_dir())),
        optimize_inputs(workload),
        str(out),
        chunk_bytes="64MB",
        num_workers=WORKERS,
        verbose=False,
        **({} if name == "local" else {"executor": name, "executor_options": options}),
    )
    return time.perf_counter() - start


def _run(name: str, workloads: list[str], repeats: int, scratch: Path) -> dict[str, Any]:
    """Times (median of ``repeats``), tasks, checksums, start-up and per-task overhead."""
    started = time.perf_counter()
    with CLUSTERS[name]() as options:
        if name != "local":  # workers import litdata and the workloads: not part of a run
            _optimize(name, {**options, "tasks_per_slot": 1}, "W3", scratch / name / "warm-up")
        startup = time.perf_counter() - started
        found: dict[str, Any] = {"startup": startup}
        for workload in workloads:
            out = scratch / name / workload
            times = [_optimize(name, options, workload, out) for _ in range(repeats)]
            tasks, check = _check(out, WORKLOADS[workload].kind)
            found[workload] = {"seconds": statistics.median(times), "tasks": tasks, "check": check}
        if name != "local" and "W3" in workloads:
            many = {**options, "tasks_per_slot": 4 * MANY}
            seconds = _optimize(name, many, "W3", scratch / name / "W3-many")
            tasks, _ = _check(scratch / name / "W3-many", "records")
            extra = tasks - found["W3"]["tasks"]
            found["overhead_ms"] = (seconds - found["W3"]["seconds"]) * WORKERS / extra * 1e3
            found["many"] = {"seconds": seconds, "tasks": tasks}
    return found


def _table(results: dict[str, dict[str, Any]], workloads: list[str]) -> str:
    local = results["local"]
    lines = [
        "| executor | start-up s | "
        + " | ".join(f"{w} s (x local) | {w} tasks" for w in workloads)
        + " | per-task overhead ms |",
        "|---|---:|" + "---:|---:|" * len(workloads) + "---:|",
    ]
    for name, found in results.items():
        cells = []
        for workload in workloads:
            seconds, base = found[workload]["seconds"], local[workload]["seconds"]
            ok = "" if found[workload]["check"] == local[workload]["check"] else " WRONG"
            cells += [f"{seconds:.2f} ({seconds / base:.2f}){ok}", str(found[workload]["tasks"])]
        overhead = f"{found['overhead_ms']:.1f}" if "overhead_ms" in found else "-"
        lines.append(f"| {name} | {found['startup']:.1f} | {' | '.join(cells)} | {overhead} |")
    return "\n".join(lines)


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workloads", default="W1,W3")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    workloads = args.workloads.split(",")
    ensure_data()
    scratch = Path.home() / ".cache" / "litdata-bench" / "tmp" / "executors"
    results = {name: _run(name, workloads, args.repeats, scratch) for name in CLUSTERS}
    shutil.rmtree(scratch, ignore_errors=True)
    table = _table(results, workloads)
    notes = [
        f"{name}: W3 with {found['many']['tasks']} tasks took {found['many']['seconds']:.2f} s"
        for name, found in results.items()
        if "many" in found
    ]
    text = f"{table}\n\n" + "\n".join(f"- {note}" for note in notes) + "\n"
    print(text)
    stamp = time.strftime("%Y-%m-%d-%H%M")
    (BENCH / "results" / f"{stamp}-executors.md").write_text(
        f"# optimize: local vs dask vs ray ({os.cpu_count()} CPUs, {WORKERS} workers, "
        f"median of {args.repeats}; python {sys.version.split()[0]})\n\n{text}"
    )


if __name__ == "__main__":
    main()
