"""Run the benchmark of shared/BENCH.md: every system in its own child process, medians and ratios.

    python bench/run.py [--rows write,optimize,random,stream,decode,mixture,remote-stream,...]
                        [--workloads W1,...,W5] [--repeats 3]
                        [--num-workers 0,2,4] [--modes pipe,arena,thread]
                        [--systems ours,litdata,mosaic,webdataset,baseline,ours-noverify,
                                   ours-verifyall,s3fs-raw]

Builds the peers' venv if needed (``bench/peers.py``), generates the workloads once into
``$LITDATA_BENCH_DIR`` (default ``~/.cache/litdata-bench/data``), prepares each system's dataset
for the read rows, runs ``--repeats`` children per cell (``--num-workers`` and ``--modes`` keep
only those variants of the rows that have them; systems without worker modes run once per
worker count, shown in each mode's line) (systems interleaved within a repeat),
checks counts and checksums of everything that came back, prints Markdown tables and writes them
to ``bench/results/<date>-<rows>.md`` (raw per-repeat numbers go to a ``.json`` beside it).
The remote rows run against a moto S3 server this process starts and stops (``remote.py``).

Environment: ``LITDATA_BENCH_OURS_PYTHON`` (interpreter for ours and the baseline; default
``<repo>/.venv/bin/python`` if it exists, else this interpreter), ``LITDATA_BENCH_BEFORE`` and
``LITDATA_BENCH_BEFORE_PYTHON`` (the earlier checkout ``ours-before`` imports, and an
interpreter with it installed when its plugin entry points differ from ours; default ours'),
``LITDATA_BENCH_PEERS_VENV``, ``LITDATA_BENCH_DIR``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import peers  # noqa: E402
import remote  # noqa: E402
import workloads  # noqa: E402
from launch import (  # noqa: E402
    ALL_SYSTEMS,
    DATASET_OF,
    OURS_SYSTEMS,
    PEER_SYSTEMS,
    Settings,
    before_repo,
    ours_python,
    run_child,
)
from rows import BEFORE, MODES, ROWS, Row  # noqa: E402
from table import Cell, render  # noqa: E402


def check_status(
    result: dict[str, Any],
    expected: dict[str, dict[str, dict[str, int]]],
    workload: str,
    variant: dict[str, Any] | None = None,
) -> str:
    """``ok`` or a failure status for one child result."""
    if not result.get("ok"):
        if "unsupported" in result:
            return f"unsupported: {result['unsupported']}"
        return f"error: {result.get('error', '?')}"
    kind = result.get("check_kind")
    got = result.get("check", {})
    if kind == "mixture":
        problems = workloads.mixture_problems(got, (variant or {}).get("mix", "weighted"))
        return f"WRONG: {'; '.join(problems)}" if problems else "ok"
    if kind == "exact":  # each sample compared with the source's in the child
        if got.get("wrong") or got.get("count") != workloads.REMOTE_RANDOM_COUNT:
            return f"WRONG: {got.get('wrong')} of {got.get('count')} samples differ"
        return "ok"
    want = expected[workload]["random" if kind == "random" else "full"]
    if kind == "count" and got.get("count") != want["count"]:
        return f"WRONG: count {got.get('count')} != {want['count']}"
    if kind in ("full", "random") and got != want:
        return f"WRONG: checksum {got} != {want}"
    return "ok"


def prepare(settings: Settings, system: str, workload: str, row: Row) -> tuple[Path, str]:
    """Make sure ``system`` has ``row``'s ``workload`` dataset; return (dir, status)."""
    system = DATASET_OF.get(system, system)
    out = settings.root / "prepared" / system / f"{workload}{row.dataset_suffix}"
    marker = out / ".bench-prepared.json"
    if system == "baseline" and row.prepare_action == "prepare":
        return workloads.source_dir(workload, settings.root), "ok"
    reuse = system not in OURS_SYSTEMS or settings.reuse_ours or out in settings.rebuilt
    if marker.exists() and reuse:
        return out, "ok"
    if marker.exists():
        marker.unlink()
    print(f"  preparing {system} {workload}{row.dataset_suffix} ...", flush=True)
    result = run_child(
        settings,
        system,
        row.prepare_action,
        workload,
        extra=["--out", str(out)],
        label=f"{row.prepare_action}-{system}-{workload}",
    )
    if not result.get("ok"):
        status = check_status(result, {}, workload)
        return out, status
    settings.rebuilt.add(out)
    return out, "ok"


def warm_cache(path: Path) -> None:
    """Read every file under ``path`` once, so a cell starts with its data in the page cache.

    This VM gives page cache back to the host within a minute (300 MB of a 330 MB file read
    went within 45 s), so without this a cell's first reads may or may not go to the disk.
    """
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        with open(file, "rb", buffering=0) as f:
            while f.read(1 << 23):
                pass


def record(cell: Cell, result: dict[str, Any], status: str, label: str) -> None:
    """Add one child's result to ``cell`` (or mark the cell failed) and print a progress line."""
    if status != "ok":
        cell.status = status
        print(f"  {label}: {status} (log: {result['log']})", flush=True)
        return
    metrics = result.get("metrics", {})
    added = {key: result[key] for key in ("peak_cache_mb", "requests") if key in result}
    cell.add({**metrics, "peak_pss_mb": result["peak_pss_mb"], **added})
    cell.note = result.get("note", cell.note)
    shown = {k: round(v, 2) for k, v in metrics.items() if isinstance(v, float)}
    more = "".join(
        f" {key}={result[key]:.0f}" for key in ("peak_cache_mb", "requests") if key in result
    )
    print(f"  {label}: {shown} pss={result['peak_pss_mb']:.0f}MB{more}", flush=True)


def run_row(
    settings: Settings, row: Row, expected: dict[str, Any]
) -> dict[tuple[str, str, str], Cell]:
    """Run every cell of ``row``; returns cells keyed by (workload, variant label, system)."""
    cells: dict[tuple[str, str, str], Cell] = {}
    systems = row_systems(settings, row)
    for workload in row_workloads(settings, row):
        datasets: dict[str, tuple[Path, str]] = {}
        if row.needs_dataset:
            for system in systems:
                datasets[system] = prepare(settings, system, workload, row)
        for variant in row.selected(settings.num_workers, settings.modes):
            vlabel = row.variant_label(variant)
            shown = variant_cells(
                cells, row, workload=workload, variant=variant, systems=systems, datasets=datasets
            )
            for rep in range(settings.repeats):
                for system in systems:
                    cell = cells[(workload, vlabel, system)]
                    if cell.status != "ok" or system in shown:
                        continue
                    if row.needs_dataset:
                        extra = ["--dataset", str(datasets[system][0])]
                        warm_cache(datasets[system][0])
                    else:
                        extra = ["--out", str(settings.root / "out" / system / workload)]
                        warm_cache(workloads.source_dir(workload, settings.root))
                    for key, value in variant.items():
                        if key != "mode" or system in OURS_SYSTEMS:
                            extra += [f"--{key.replace('_', '-')}", str(value)]
                    tag = "-".join(str(v) for v in variant.values())
                    label = f"{row.name}-{workload}-{tag}-{system}-r{rep}".replace("--", "-")
                    result = run_child(
                        settings, system, row.action, workload, extra=extra, label=label
                    )
                    status = check_status(result, expected, workload, variant)
                    record(cell, result, status, label)
    return {key: cell for key, cell in cells.items() if "-" not in key[1].split(", ")}


def variant_cells(
    cells: dict[tuple[str, str, str], Cell],
    row: Row,
    *,
    workload: str,
    variant: dict[str, Any],
    systems: list[str],
    datasets: dict[str, tuple[Path, str]],
) -> set[str]:
    """Add ``variant``'s cells; returns the systems it shows from an earlier line, not runs.

    A system without worker modes (all but ours) runs in the first mode's line of a worker
    count; the other modes' lines show that same cell (kept under a ``-`` mode until
    ``run_row`` returns).
    """
    vlabel = row.variant_label(variant)
    shown = set()
    for system in systems:
        if "mode" in variant and system not in OURS_SYSTEMS:
            plain = row.variant_label({**variant, "mode": "-"})
            if (workload, plain, system) in cells:
                cells[(workload, vlabel, system)] = cells[(workload, plain, system)]
                shown.add(system)
                continue
            cells[(workload, plain, system)] = cells.setdefault((workload, vlabel, system), Cell())
        cell = cells.setdefault((workload, vlabel, system), Cell())
        if row.needs_dataset and datasets[system][1] != "ok":
            cell.status = datasets[system][1]
    return shown


def row_systems(settings: Settings, row: Row) -> list[str]:
    """The selected systems that ``row`` runs, in ``--systems`` order."""
    return [system for system in settings.systems if system in row.systems]


def row_workloads(settings: Settings, row: Row) -> list[str]:
    """The workloads ``row`` runs: ``--workloads`` (those it has), or its defaults."""
    wanted = settings.workloads or row.defaults or row.workloads
    return [w for w in wanted if w in row.workloads]


def remote_dataset(settings: Settings, system: str, workload: str, row: Row) -> tuple[str, str]:
    """``(URL, status)`` of ``system``'s dataset on the S3 server, uploaded once per invocation.

    The files are those of the system's local prepared dataset (``prepare``), uploaded as they
    are; ``s3fs-raw`` reads ours' objects.
    """
    owner = DATASET_OF.get(system, system)
    local, status = prepare(settings, owner, workload, row)
    url = remote.url(owner, workload)
    if status != "ok" or url in settings.uploaded:
        return url, status
    assert settings.server is not None
    print(f"  uploading {local} to {url} ...", flush=True)
    try:
        remote.upload(settings.ours_python, settings.server.endpoint, local, url)
    except subprocess.CalledProcessError as error:
        return url, f"error: upload failed ({error})"
    settings.uploaded.add(url)
    return url, "ok"


def run_remote_row(
    settings: Settings, row: Row, expected: dict[str, Any]
) -> dict[tuple[str, str, str], Cell]:
    """Run a remote row; cells keyed by (workload, variant label, system) as in ``run_row``.

    ``remote-stream``: per repeat, system and worker count, a cold child (empty cache dir),
    then a warm one on the same cache dir (a new process after that full epoch).
    ``remote-random``: one child per repeat and system, with an empty cache dir.
    """
    assert settings.server is not None
    cells: dict[tuple[str, str, str], Cell] = {}
    systems = row_systems(settings, row)
    scratch = peers.scratch_dir() / "remote-cache"
    for workload in row_workloads(settings, row):
        urls = {system: remote_dataset(settings, system, workload, row) for system in systems}
        for variant in row.variants:
            for system in systems:
                cell = cells.setdefault((workload, row.variant_label(variant), system), Cell())
                if urls[system][1] != "ok":
                    cell.status = urls[system][1]
        groups: dict[int, list[dict[str, Any]]] = {}
        for variant in row.variants:  # cold before warm, per worker count
            groups.setdefault(int(variant.get("num_workers", 0)), []).append(variant)
        for workers, variants in groups.items():
            for rep in range(settings.repeats):
                for system in systems:
                    cache_dir = scratch / f"{row.name}-{workload}-{workers}-{system}-r{rep}"
                    shutil.rmtree(cache_dir, ignore_errors=True)
                    cache_dir.mkdir(parents=True)
                    for variant in variants:
                        vlabel = row.variant_label(variant)
                        cell = cells[(workload, vlabel, system)]
                        if cell.status != "ok":
                            continue
                        extra = [
                            "--url",
                            urls[system][0],
                            "--endpoint",
                            settings.server.endpoint,
                            "--cache-dir",
                            str(cache_dir),
                            "--request-log",
                            str(settings.server.log_path),
                            "--shuffle",
                            "1",
                        ]
                        for key, value in variant.items():
                            extra += [f"--{key.replace('_', '-')}", str(value)]
                        tag = "-".join(str(v) for v in variant.values()) or "cold"
                        label = f"{row.name}-{workload}-{tag}-{system}-r{rep}"
                        result = run_child(
                            settings,
                            system,
                            row.action,
                            workload,
                            extra=extra,
                            label=label,
                            watch_dir=cache_dir,
                        )
                        status = check_status(result, expected, workload)
                        record(cell, result, status, label)
                    shutil.rmtree(cache_dir, ignore_errors=True)
    return cells


def parse_args(argv: list[str] | None) -> Settings:
    """Parse the command line into :class:`Settings`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=",".join(ROWS))
    parser.add_argument(
        "--workloads", default=None, help="restrict to these workloads (default: each row's own)"
    )
    parser.add_argument("--systems", default=",".join(ALL_SYSTEMS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per child")
    parser.add_argument(
        "--reuse-ours", action="store_true", help="reuse ours' prepared datasets (default: rebuild)"
    )
    parser.add_argument("--results-dir", default=str(BENCH / "results"))
    parser.add_argument(
        "--num-workers", default=None, help="only these worker counts (e.g. 0,2; default all)"
    )
    parser.add_argument(
        "--modes", default=None, help=f"only these worker modes of ours (among {','.join(MODES)})"
    )
    args = parser.parse_args(argv)
    rows = [r for r in args.rows.split(",") if r]
    unknown = [r for r in rows if r not in ROWS]
    systems = [s for s in args.systems.split(",") if s]
    modes = [m for m in args.modes.split(",") if m] if args.modes else None
    if modes and any(m not in MODES for m in modes):
        parser.error(f"modes must be among {list(MODES)}")
    if unknown or any(s not in ALL_SYSTEMS for s in systems):
        parser.error(f"rows must be among {list(ROWS)}, systems among {list(ALL_SYSTEMS)}")
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Settings(
        rows=rows,
        workloads=[w for w in args.workloads.split(",") if w] if args.workloads else None,
        systems=systems,
        repeats=args.repeats,
        root=workloads.data_dir(),
        timeout=args.timeout,
        ours_python=ours_python(),
        reuse_ours=args.reuse_ours,
        log_dir=peers.CACHE_ROOT / "logs" / stamp,
        results_dir=Path(args.results_dir),
        num_workers=[int(n) for n in args.num_workers.split(",")] if args.num_workers else None,
        modes=modes,
    )


def compile_ours(settings: Settings) -> None:
    """Write our package's bytecode once, as ``pip install`` does for the peers.

    An editable checkout run under ``PYTHONDONTWRITEBYTECODE=1`` would otherwise compile every
    module from source in every child (~5-8 ms of first-batch latency the peers never pay).
    """
    roots = [REPO] + ([Path(before_repo())] if BEFORE in settings.systems else [])
    for root in roots:
        subprocess.run(
            [settings.ours_python, "-m", "compileall", "-q", str(root / "litdata")], check=True
        )


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    settings = parse_args(argv)
    settings.log_dir.mkdir(parents=True, exist_ok=True)
    if OURS_SYSTEMS & set(settings.systems):
        compile_ours(settings)
    if PEER_SYSTEMS & set(settings.systems):
        print(f"peers venv: {peers.build()}", flush=True)
    workloads.ensure_data(settings.root)
    expected = workloads.expected_checks(settings.root)
    started = dt.datetime.now()
    sections = [
        f"# litdata bench {started:%Y-%m-%d %H:%M}",
        "",
        f"Machine: {os.cpu_count()} CPUs, {platform.python_version()}; repeats: {settings.repeats} "
        f"(medians); ours: `{settings.ours_python}`; peers: `{peers.venv_python()}`; "
        f"logs: `{settings.log_dir}`.",
        "",
    ]
    raw: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        if any(ROWS[name].remote for name in settings.rows):
            settings.server = stack.enter_context(
                remote.MotoServer(
                    Path(settings.ours_python).parent,
                    settings.log_dir,
                    peers.scratch_dir() / "moto",
                )
            )
            print(f"S3 server: {settings.server.endpoint} (log {settings.server.log_path})")
        for name in settings.rows:
            row = ROWS[name]
            print(f"== row {name}", flush=True)
            cells = (run_remote_row if row.remote else run_row)(settings, row, expected)
            table = render(row, cells, row_systems(settings, row))
            print("\n" + table + "\n", flush=True)
            sections += [table, ""]
            raw[name] = {
                "|".join(k): {"status": c.status, "values": c.values} for k, c in cells.items()
            }
        settings.server = None
    settings.results_dir.mkdir(parents=True, exist_ok=True)
    base = settings.results_dir / f"{started:%Y-%m-%d-%H%M}-{'-'.join(settings.rows)}"
    base.with_suffix(".md").write_text("\n".join(sections))
    base.with_suffix(".json").write_text(json.dumps(raw, indent=1, sort_keys=True))
    print(f"wrote {base.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
