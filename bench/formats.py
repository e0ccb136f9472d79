"""Parquet streaming: ours vs LitData's ``ParquetLoader`` vs polars reading the files directly.

    python bench/formats.py [--rows 200000] [--repeats 1] [--workers 0,2] [--out FILE]

One folder of Parquet files (generated once, deterministically, under
``$LITDATA_BENCH_DIR/parquet-<rows>``; 8 files, row groups of 10,000 rows; columns ``id``
int64, ``text`` ~60-char string, ``score`` double, ``tags`` list of 0-3 strings) with an
``index.json`` (LitData's Parquet layout, which both libraries read). Each cell is one child
process of one system that imports its library, then is timed from building the dataset and
loader to the last batch (batch 256, samples collated as lists, no shuffle and shuffled):

- **ours**: ``StreamingDataset(folder, item_loader=ParquetLoader(), shuffle=...)`` +
  ``StreamingDataLoader`` (forked workers: safe here);
- **litdata** (0.2.76, the peers' venv, with pyarrow from ``~/.cache/litdata-bench/peer-pyarrow``):
  the same calls; it refuses forked workers with Parquet, so its workers are spawned;
- **polars**: ``polars.read_parquet`` of each file and ``iter_rows(named=True)``, in the main
  process or in N spawned processes each reading every N-th file (no shuffle, no batching).

samples/s counts every row of the epoch; peak memory is the PSS of the child's process tree
(``memory.PeakPss``). Every cell's ``id`` sum and row count are checked. ``ours vs X`` > 1 means
ours is better.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

FILES = 8
ROW_GROUP = 10_000
BATCH = 256
PREFIX = "FORMATS_RESULT "


def data_dir(rows: int) -> Path:
    base = Path(os.environ.get("LITDATA_BENCH_DIR", Path.home() / ".cache/litdata-bench/data"))
    return base / f"parquet-{rows}"


def generate(rows: int) -> Path:
    """Write the Parquet files and their index once (ours' ``index_parquet_dataset``)."""
    folder = data_dir(rows)
    if (folder / "index.json").exists():
        return folder
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    words = [f"word{i}" for i in range(500)]
    per_file = rows // FILES
    for number in range(FILES):
        ids = np.arange(number * per_file, (number + 1) * per_file, dtype=np.int64)
        picks = rng.integers(0, len(words), size=(per_file, 6))
        text = [" ".join(words[j] for j in row) for row in picks]
        tags = [[words[j] for j in row[: k % 4]] for k, row in enumerate(picks)]
        table = pa.table({"id": ids, "text": text, "score": ids / 7.0, "tags": tags})
        pq.write_table(table, folder / f"part-{number:05d}.parquet", row_group_size=ROW_GROUP)
    subprocess.run(
        [_ours_python(), "-c", f"import litdata; litdata.index_parquet_dataset({str(folder)!r})"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    return folder


def _ours_python() -> str:
    local = ROOT / ".venv" / "bin" / "python"
    return os.environ.get(
        "LITDATA_BENCH_OURS_PYTHON", str(local if local.exists() else sys.executable)
    )


def _peer_python() -> str:
    venv = os.environ.get(
        "LITDATA_BENCH_PEERS_VENV", str(Path.home() / ".cache/litdata-bench/peers-venv")
    )
    return str(Path(venv) / "bin" / "python")


# -- children ----------------------------------------------------------------------------------
def _identity(batch: list[Any]) -> list[Any]:
    return batch


def _stream_litdata_api(
    folder: str, workers: int, shuffle: bool, context: str | None
) -> tuple[int, int, float]:
    import litdata as ld
    from litdata.streaming.item_loader import ParquetLoader

    start = time.perf_counter()
    dataset = ld.StreamingDataset(folder, item_loader=ParquetLoader(), shuffle=shuffle)
    options: dict[str, Any] = {"multiprocessing_context": context} if workers and context else {}
    loader = ld.StreamingDataLoader(
        dataset, batch_size=BATCH, num_workers=workers, collate_fn=_identity, **options
    )
    count = total = 0
    for batch in loader:
        count += len(batch)
        total += sum(int(sample["id"]) for sample in batch)
    return count, total, time.perf_counter() - start


def _polars_files(paths: list[str]) -> tuple[int, int]:
    import polars as pl

    count = total = 0
    for path in paths:
        for sample in pl.read_parquet(path).iter_rows(named=True):
            count += 1
            total += sample["id"]
    return count, total


def _stream_polars(folder: str, workers: int) -> tuple[int, int, float]:
    import multiprocessing

    import polars  # noqa: F401  # imported before the timer, as the others' libraries are

    paths = sorted(str(p) for p in Path(folder).glob("*.parquet"))
    start = time.perf_counter()
    if not workers:
        count, total = _polars_files(paths)
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            parts = pool.map(_polars_files, [paths[w::workers] for w in range(workers)])
        count, total = sum(p[0] for p in parts), sum(p[1] for p in parts)
    return count, total, time.perf_counter() - start


def child(system: str, folder: str, workers: int, shuffle: bool) -> None:
    from memory import tree_pss_kib

    if system == "polars":
        count, total, seconds = _stream_polars(folder, workers)
    else:
        # Imports are not timed (ours imports torch and pyarrow lazily, LitData at once).
        import pyarrow.parquet  # noqa: F401

        from litdata import StreamingDataLoader, StreamingDataset  # noqa: F401

        context = "spawn" if system == "litdata" else None
        count, total, seconds = _stream_litdata_api(folder, workers, shuffle, context)
    own = tree_pss_kib(os.getpid()) * 1024 / 1e6
    print(PREFIX + json.dumps({"count": count, "total": total, "seconds": seconds, "pss": own}))


# -- parent ------------------------------------------------------------------------------------
def run_cell(system: str, folder: Path, workers: int, shuffle: bool) -> dict[str, Any]:
    from memory import PeakPss

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if system == "litdata":
        python = _peer_python()
        env["PYTHONPATH"] = os.environ.get(
            "LITDATA_PEER_PYARROW", str(Path.home() / ".cache/litdata-bench/peer-pyarrow")
        )
    else:
        python = _ours_python()
        if system == "ours":
            env["PYTHONPATH"] = str(ROOT)
    env["LITDATA_CACHE_DIR"] = str(Path.home() / ".cache/litdata-bench/tmp/formats-cache")
    command = [python, str(Path(__file__).resolve()), "--child", system, "--folder", str(folder)]
    command += ["--workers", str(workers)] + (["--shuffle"] if shuffle else [])
    for path in folder.glob("*.parquet"):  # page cache warm for every cell
        path.read_bytes()
    scratch = Path.home() / ".cache/litdata-bench/tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(command, env=env, cwd=scratch, stdout=subprocess.PIPE, text=True)
    with PeakPss(process.pid) as peak:
        out, _ = process.communicate(timeout=900)
    lines = [line for line in out.splitlines() if line.startswith(PREFIX)]
    if process.returncode or not lines:
        return {"error": f"exit {process.returncode}"}
    result = json.loads(lines[-1][len(PREFIX) :])
    result["peak_mb"] = max(peak.peak_mb, result["pss"])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--workers", default="0,2")
    parser.add_argument("--systems", default="ours,litdata,polars")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child")
    parser.add_argument("--folder")
    parser.add_argument("--shuffle", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.folder, int(args.workers), args.shuffle)
        return
    folder = generate(args.rows)
    # As run.py does: this machine sets PYTHONDONTWRITEBYTECODE=1, so an editable checkout would
    # otherwise compile every module from source in every child.
    subprocess.run([_ours_python(), "-m", "compileall", "-q", str(ROOT / "litdata")], check=True)
    expected = (args.rows // FILES * FILES, sum(range(args.rows // FILES * FILES)))
    systems = args.systems.split(",")
    lines = [
        f"Parquet streaming, {expected[0]:,} rows in {FILES} files ({folder}), batch {BATCH}, "
        f"median of {args.repeats}; samples/s (peak PSS MB)",
        "",
        "| workers | shuffle | " + " | ".join(systems) + " | ours vs litdata | ours vs polars |",
        "|---|---|" + "---|" * (len(systems) + 2),
    ]
    for workers in [int(w) for w in args.workers.split(",")]:
        for shuffle in (False, True):
            cells: dict[str, tuple[float, float] | str] = {}
            for system in systems:
                if system == "polars" and shuffle:
                    cells[system] = "n/a"
                    continue
                runs = [run_cell(system, folder, workers, shuffle) for _ in range(args.repeats)]
                bad = [r for r in runs if "error" in r or (r["count"], r["total"]) != expected]
                if bad:
                    cells[system] = bad[0].get("error", "WRONG")
                    continue
                rates = sorted(r["count"] / r["seconds"] for r in runs)
                peaks = sorted(r["peak_mb"] for r in runs)
                cells[system] = (rates[len(rates) // 2], peaks[len(peaks) // 2])
            shown = [
                f"{c[0]:,.0f} ({c[1]:,.0f})" if isinstance(c, tuple) else c
                for c in (cells[s] for s in systems)
            ]
            ratios = []
            for other in ("litdata", "polars"):
                mine, theirs = cells.get("ours"), cells.get(other)
                if isinstance(mine, tuple) and isinstance(theirs, tuple):
                    ratios.append(
                        f"{mine[0] / theirs[0]:.2f}x speed, {theirs[1] / mine[1]:.2f}x mem"
                    )
                else:
                    ratios.append("-")
            lines.append(
                f"| {workers} | {'on' if shuffle else 'off'} | " + " | ".join(shown + ratios) + " |"
            )
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
