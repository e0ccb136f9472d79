"""The ``scale`` row: opening datasets of 10^4-10^6 chunks, ours vs LitData vs Mosaic.

Each dataset holds ``chunks`` chunks of 10 samples ``{"x": int32[4], "y": int}``, generated
directly in the writer's layout: one real chunk written by our ``write_dataset`` is hard-linked
under every chunk name, and ``index.json`` is LitData's (no checksums), so ours and LitData read
the very same files (ours also gets the ``index.compact`` our writers publish beside it).
MosaicML Streaming reads its own shards, made the same way from one shard its ``MDSWriter``
wrote (``bench/scale_mosaic.py``). Per system, size and repeat, fresh processes (imports done
before the clock starts) measure:

- ``open``: ``StreamingDataset(path)`` + ``len`` + one ``ds[i]``; then the p50 of 1,000 random
  ``ds[i]`` (each checked), the peak RSS and what opening added to it;
- ``first batch`` with 0 and 2 workers: from building dataset and loader (ours and LitData
  ``StreamingDataLoader``, Mosaic torch's ``DataLoader``; shuffled, batch 64) to the first
  batch; with 2 workers the PSS of the main process and of each worker then;
- ``plan``: the shuffled epoch's plan for 64x8 and 512x8 simulated readers (ranks x workers), a
  pure function here: ours ``worker_plan`` (one reader's share); LitData its shuffler's
  ``get_chunks_and_intervals_per_workers``; Mosaic its ``generate_work``, which arranges every
  reader's share at once (its nodes' first processes each do);
- ours only: the open in a later process (``index.json``'s digest remembered), and the first
  open of a dataset without ``index.compact`` (LitData's), which builds it into the cache.

    python bench/scale.py [--sizes 10000,100000,1000000] [--systems ours,litdata,mosaic]
        [--repeats 1] [--peer-max-chunks 1000000] [--out FILE]

Writes ``bench/results/<date>-scale.md`` (or ``--out``) and ``...-scale.png`` (open time
against chunks, log-log). Above ``--peer-max-chunks`` only ours is measured.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from children import emit, run_child

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULT = "SCALE_RESULT "
PER_CHUNK = 10
#: Chunk names hard-linked to one file (under the filesystem's limit).
LINKS = 50_000
BATCH = 64
#: The systems measured in the peers' venv, and their names in the table.
PEERS = {"litdata": "LitData", "mosaic": "Mosaic"}
TOPOLOGIES = {"plan_64x8_ms": (64, 8), "plan_512x8_ms": (512, 8)}
#: The largest dataset whose first open without a compact index is measured.
BUILD_MAX_CHUNKS = 1_000_000
#: Seconds a plan may take before it is reported as at least that (LitData's at 10^6 chunks).
PLAN_LIMIT_S = 120


def _too_long(signum: int, frame: Any) -> None:
    raise TimeoutError


def plan_ms(plan: Callable[[], Any]) -> float:
    """The milliseconds ``plan()`` takes; ``PLAN_LIMIT_S`` (at least) when stopped there."""
    signal.signal(signal.SIGALRM, _too_long)
    start = time.perf_counter()
    signal.alarm(PLAN_LIMIT_S)
    try:
        plan()
    except TimeoutError:
        return PLAN_LIMIT_S * 1e3
    finally:
        signal.alarm(0)
    return (time.perf_counter() - start) * 1e3


def _rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _pss_mb(pid: int) -> float:
    sys.path.insert(0, str(BENCH))
    import memory

    return memory.pss_kib(pid) / 1e3


def _right(item: Any, index: int) -> bool:
    position = index % PER_CHUNK
    return int(item["y"]) == position and [int(v) for v in item["x"]] == [position] * 4


# -- children -----------------------------------------------------------------------------------


def measure_open(make: Callable[[], Any]) -> dict[str, Any]:
    """Time ``make()`` (the dataset) + ``len`` + one ``ds[i]``; then 1,000 random ``ds[i]``
    (each checked) and the memory; returns the measurements and, under ``"dataset"``, the
    dataset (removed before the result is emitted)."""
    before = _rss_mb()
    start = time.perf_counter()
    ds = make()
    count = len(ds)
    first = ds[count // 2]
    opened = time.perf_counter() - start
    wrong = int(not _right(first, count // 2))
    rss_open = _rss_mb() - before
    indices = random.Random(3).sample(range(count), 1000)
    times = []
    for index in indices:
        t0 = time.perf_counter()
        item = ds[index]
        times.append(time.perf_counter() - t0)
        wrong += int(not _right(item, index))
    times.sort()
    return {
        "items": count,
        "open_s": opened,
        "getitem_p50_us": times[len(times) // 2] * 1e6,
        "rss_added_by_open_mb": rss_open,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3,
        "wrong": wrong,
        "dataset": ds,
    }


def child_open(path: str, system: str) -> dict[str, Any]:
    """Open, len, one ds[i]; random ds[i] p50; memory; plan times."""
    import litdata as ld

    streaming_dataset = ld.StreamingDataset
    result = measure_open(lambda: streaming_dataset(path))
    del result["dataset"]
    result.update(_plans(path, system))
    return result


def _plans(path: str, system: str) -> dict[str, float]:
    import litdata as ld

    ds = ld.StreamingDataset(path, shuffle=True, drop_last=True)
    return {
        key: plan_ms(partial(_plan, ds, system, ranks, workers))
        for key, (ranks, workers) in TOPOLOGIES.items()
    }


def _plan(ds: Any, system: str, ranks: int, workers: int) -> None:
    """One reader's share of a shuffled epoch for ``ranks`` x ``workers`` readers."""
    if system == "ours":
        from litdata.streaming.epoch.plan import Topology, worker_plan

        topology = Topology(ranks, workers, BATCH)
        worker_plan(
            ds._regions.sizes,
            topology,
            topology.total_workers - 1,
            seed=42,
            epoch=1,
            drop_last=True,
            strategy=ds.strategy,
        )
        return
    from litdata.utilities.env import (  # type: ignore[import-not-found]  # LitData's
        _DistributedEnv,
        _WorkerEnv,
    )

    cache = ds._create_cache(worker_env=_WorkerEnv.detect())
    shuffler = ds._create_shuffler(cache)
    environment = _DistributedEnv(ranks, ranks - 1, max(1, ranks // 8))
    shuffler.get_chunks_and_intervals_per_workers(environment, workers, BATCH, 1)


def measure_first_batch(start: float, loader: Iterable[Any]) -> dict[str, Any]:
    """The first batch of ``loader`` (timed from ``start``); PSS of this process and of its
    workers then."""
    batches = iter(loader)  # kept: its workers stay alive to be measured
    batch = next(batches)
    elapsed = time.perf_counter() - start
    sys.path.insert(0, str(BENCH))
    import memory

    pids = [pid for pid in memory.descendants(os.getpid()) if pid != os.getpid()]
    worker_pss = [memory.pss_kib(pid) / 1e3 for pid in pids]
    return {
        "first_batch_s": elapsed,
        "main_pss_mb": _pss_mb(os.getpid()),
        "worker_pss_mb": max(worker_pss) if worker_pss else 0.0,
        "batch_items": len(batch["y"]),
    }


def child_batch(path: str, workers: int) -> dict[str, Any]:
    """Dataset + loader to the first batch; PSS of the main process and the workers then."""
    import litdata as ld

    streaming_dataset, loader_class = ld.StreamingDataset, ld.StreamingDataLoader
    start = time.perf_counter()
    ds = streaming_dataset(path, shuffle=True)
    return measure_first_batch(start, loader_class(ds, batch_size=BATCH, num_workers=workers))


def child_build(path: str) -> dict[str, Any]:
    """Ours only: the first open of a dataset without a compact index (built into the cache)."""
    import litdata as ld

    streaming_dataset = ld.StreamingDataset
    start = time.perf_counter()
    ds = streaming_dataset(path)
    len(ds)
    built = time.perf_counter() - start
    start = time.perf_counter()
    len(streaming_dataset(path))
    return {"first_open_build_s": built, "next_open_s": time.perf_counter() - start}


# -- generating the datasets ----------------------------------------------------------------------


def _root() -> Path:
    base = Path(os.environ.get("LITDATA_BENCH_DIR", Path.home() / ".cache/litdata-bench/data"))
    return base / "scale"


def _template(root: Path) -> tuple[dict[str, Any], bytes, int, dict[str, Any]]:
    """One real chunk of 10 samples written by our writer: its config, bytes, size, and the
    head (the index without chunks) a compact index of such chunks records."""
    sys.path.insert(0, str(REPO))
    import numpy as np

    import litdata as ld

    folder = root / "template"
    if folder.exists():
        shutil.rmtree(folder)
    samples = ({"x": np.full(4, i, dtype=np.int32), "y": i} for i in range(PER_CHUNK))
    ld.write_dataset(samples, folder, chunk_size=PER_CHUNK)
    index = json.loads((folder / "index.json").read_text())
    (entry,) = index["chunks"]
    (folder / "index.json").write_text(  # as generate writes it (no checksum, fixed stamp)
        json.dumps({"chunks": [entry], "config": index["config"], "updated_at": "1"})
    )
    from litdata.core.index import load_index

    head = load_index(folder).to_json_head()
    data = (folder / entry["filename"]).read_bytes()
    return index["config"], data, int(entry["chunk_bytes"]), head


def generate(root: Path, chunks: int) -> tuple[Path, Path | None]:
    """The dataset of ``chunks`` chunks (made once), and a copy of its index alone (no compact).

    The compact index is written from columns, as the writers' is, without a Python object per
    chunk. Above ``BUILD_MAX_CHUNKS`` there is no bare copy (building its compact index means
    parsing an ``index.json`` of a gigabyte into objects; see the results' notes).
    """
    folder, bare = root / f"chunks-{chunks}", root / f"bare-{chunks}"
    wanted_bare = chunks <= BUILD_MAX_CHUNKS
    if (folder / "index.compact").exists() and (not wanted_bare or (bare / "index.json").exists()):
        return folder, bare if wanted_bare else None
    for old in (folder, bare):
        if old.exists():
            shutil.rmtree(old)
    config, data, nbytes, head = _template(root)
    folder.mkdir(parents=True)
    print(f"generating {chunks:,} chunks ...", flush=True)
    for i in range(chunks):
        target = folder / f"chunk-0-{i}.bin"
        if i % LINKS == 0:  # a file has at most 65,000 links (ext4)
            target.write_bytes(data)
            source = target
        else:
            os.link(source, target)
    entries = ",".join(
        f'{{"chunk_bytes": {nbytes}, "chunk_size": {PER_CHUNK}, "dim": null, '
        f'"filename": "chunk-0-{i}.bin"}}'
        for i in range(chunks)
    )
    raw = f'{{"chunks": [{entries}], "config": {json.dumps(config)}, "updated_at": "1"}}'.encode()
    del entries
    (folder / "index.json").write_bytes(raw)
    import numpy as np

    from litdata.core.compact import Columns, columns_bytes, index_digest

    columns = Columns(
        sizes=np.full(chunks, PER_CHUNK, dtype=np.int64),
        nbytes=np.full(chunks, nbytes, dtype=np.int64),
        dims=np.full(chunks, -1, dtype=np.int64),
        names=[b"chunk-0-%d.bin" % i for i in range(chunks)],
        checksums=[b""] * chunks,
        has_checksum=np.zeros(chunks, dtype=bool),
        extras=[b""] * chunks,
    )
    (folder / "index.compact").write_bytes(columns_bytes(columns, head, index_digest(raw)))
    if not wanted_bare:
        return folder, None
    bare.mkdir()
    shutil.copy(folder / "index.json", bare / "index.json")
    os.link(folder / "chunk-0-0.bin", bare / "chunk-0-0.bin")
    return folder, bare


def _python(system: str) -> tuple[str, dict[str, str]]:
    sys.path.insert(0, str(BENCH))
    import peers

    if system in PEERS:
        return str(peers.venv_python()), peers.peer_env()
    return str(REPO / ".venv/bin/python"), {**os.environ, "PYTHONPATH": str(REPO)}


def _child(system: str, *args: str, cache: Path) -> dict[str, Any]:
    python, env = _python(system)
    env = {**env, "LITDATA_CACHE_DIR": str(cache)}
    return run_child([python, str(Path(__file__).resolve()), "--child", system, *args], env, RESULT)


def _measure(system: str, folder: Path, bare: Path | None, cache: Path) -> dict[str, Any]:
    run = _child(system, "open", str(folder), cache=cache)
    for workers in (0, 2):
        batch = _child(system, "batch", str(folder), str(workers), cache=cache)
        run[f"first_batch_{workers}w_s"] = batch["first_batch_s"]
        if workers:
            run["main_pss_2w_mb"], run["worker_pss_mb"] = (
                batch["main_pss_mb"],
                batch["worker_pss_mb"],
            )
    if system == "ours":  # a new process, as each training run: index.json's digest is kept
        run["reopen_s"] = _child(system, "open", str(folder), cache=cache)["open_s"]
    if system == "ours" and bare is not None:
        shutil.rmtree(cache, ignore_errors=True)
        run.update(_child(system, "build", str(bare), cache=cache))
    return run


ROWS = [
    ("open_s", "open + len + ds[i] s", "{:.3f}"),
    ("getitem_p50_us", "ds[i] p50 µs", "{:.1f}"),
    ("first_batch_0w_s", "first batch, 0 workers s", "{:.3f}"),
    ("first_batch_2w_s", "first batch, 2 workers s", "{:.3f}"),
    ("peak_rss_mb", "peak RSS of the opening process MB", "{:.0f}"),
    ("rss_added_by_open_mb", "RSS added by open MB", "{:.1f}"),
    ("main_pss_2w_mb", "PSS main process (2 workers) MB", "{:.0f}"),
    ("worker_pss_mb", "PSS per worker MB", "{:.0f}"),
    ("plan_64x8_ms", "plan, one of 64x8 readers ms", "{:.1f}"),
    ("plan_512x8_ms", "plan, one of 512x8 readers ms", "{:.1f}"),
    ("reopen_s", "ours: open in a later process s", "{:.3f}"),
    ("first_open_build_s", "ours: first open without index.compact (builds it) s", "{:.2f}"),
    ("next_open_s", "ours: the open after it s", "{:.3f}"),
]


def _table(results: dict[int, dict[str, list[dict[str, Any]]]]) -> str:
    sizes = sorted(results)
    peers = [system for system in PEERS if any(system in results[n] for n in sizes)]
    head = " | ".join(
        f"{n:,} ours" + "".join(f" | {n:,} {PEERS[peer]} | ratio" for peer in peers) for n in sizes
    )
    lines = [f"| metric | {head} |", "|---|" + "---:|" * ((1 + 2 * len(peers)) * len(sizes))]
    for key, label, form in ROWS:
        cells = []
        for n in sizes:
            values = {}
            for system, runs in results[n].items():
                found = [run[key] for run in runs if key in run]
                values[system] = statistics.median(found) if found else None
            ours = values.get("ours")
            cells.append(form.format(ours) if ours is not None else "-")
            for peer in peers:
                theirs = values.get(peer)
                cells.append(form.format(theirs) if theirs is not None else "-")
                cells.append(f"{theirs / ours:.1f}x" if ours and theirs else "-")
        lines.append(f"| {label} | {' | '.join(cells)} |")
    wrong = sum(run["wrong"] for r in results.values() for runs in r.values() for run in runs)
    names = ", ".join(f"{PEERS[peer]} / ours" for peer in peers)
    lines.append(f"\nWrong samples, all systems and repeats: {wrong}. Ratios: {names}.")
    if "mosaic" in peers:
        lines.append("Mosaic's plan is its epoch's whole arrangement: every reader's share.")
    return "\n".join(lines)


def _plot(results: dict[int, dict[str, list[dict[str, Any]]]], out: Path) -> None:
    """Open time against chunk count, log-log, as a PNG (Pillow)."""
    import math

    from PIL import Image, ImageDraw

    width, height, margin = 640, 420, 60
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    sizes = sorted(results)
    series = {
        system: [
            (n, statistics.median(r["open_s"] for r in results[n][system]))
            for n in sizes
            if results[n].get(system)
        ]
        for system in ("ours", *PEERS)
    }
    values = [v for line in series.values() for _, v in line]
    x0, x1 = math.log10(sizes[0]) - 0.2, math.log10(sizes[-1]) + 0.2
    y0, y1 = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))

    def at(n: float, seconds: float) -> tuple[float, float]:
        x = margin + (math.log10(n) - x0) / (x1 - x0) * (width - 2 * margin)
        y = height - margin - (math.log10(seconds) - y0) / (y1 - y0) * (height - 2 * margin)
        return x, y

    draw.rectangle([margin, margin, width - margin, height - margin], outline="black")
    for decade in range(int(y0), int(y1) + 1):
        _, y = at(sizes[0], 10.0**decade)
        draw.line([margin, y, width - margin, y], fill=(220, 220, 220))
        draw.text((5, y - 6), f"{10.0**decade:g} s", fill="black")
    for n in sizes:
        x, _ = at(n, 10.0**y0)
        draw.text((x - 15, height - margin + 8), f"{n:.0e}", fill="black")
    colours = {"ours": (200, 30, 30), "litdata": (30, 30, 200), "mosaic": (30, 150, 30)}
    for row, (system, line) in enumerate(series.items()):
        points = [at(n, v) for n, v in line]
        if not points:
            continue
        draw.line(points, fill=colours[system], width=3)
        for x, y in points:
            draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=colours[system])
        draw.text((margin + 10, margin + 10 + 15 * row), system, fill=colours[system])
    draw.text((margin, 20), "open + len + ds[i] (s) against chunks (log-log)", fill="black")
    image.save(out)


def _child_main(system: str, action: str, path: str, *rest: str) -> dict[str, Any]:
    """One child's measurement: ``open``, ``batch WORKERS`` or (ours) ``build``."""
    if system == "mosaic":
        import scale_mosaic

        if action == "open":
            return scale_mosaic.child_open(path)
        return scale_mosaic.child_batch(path, int(rest[0]))
    if action == "open":
        return child_open(path, system)
    if action == "batch":
        return child_batch(path, int(rest[0]))
    return child_build(path)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point (parent, or ``--child system open|batch|build ...``)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        emit(RESULT, _child_main(*argv[1:]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--systems", default="ours,litdata,mosaic", help="of ours,litdata,mosaic")
    parser.add_argument("--peer-max-chunks", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    unknown = set(args.systems.split(",")) - {"ours", *PEERS}
    if unknown:
        parser.error(f"--systems: unknown {sorted(unknown)}; choose from ours,litdata,mosaic")
    # As run.py does: our checkout's modules compiled once, not in every child (as the peers').
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "litdata")], check=True)
    root = _root()
    cache = root / "cache"
    results: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for n in (int(size) for size in args.sizes.split(",")):
        folder, bare = generate(root, n)
        systems = args.systems.split(",")
        if n > args.peer_max_chunks:  # LitData took 21 s and 2 GB to open 10^6 chunks
            systems = [system for system in systems if system not in PEERS]
        folders = dict.fromkeys(systems, folder)
        if "mosaic" in systems:
            import scale_mosaic

            folders["mosaic"] = scale_mosaic.generate(root, n, *_python("mosaic"))
        results[n] = {system: [] for system in systems}
        for repeat in range(args.repeats):
            for system in results[n]:
                shutil.rmtree(cache, ignore_errors=True)
                run = _measure(system, folders[system], bare, cache)
                results[n][system].append(run)
                print(f"  {n:,} chunks, repeat {repeat}, {system}: {run}", flush=True)
    started = dt.datetime.now()
    stem = args.out or BENCH / "results" / f"{started:%Y-%m-%d-%H%M}-scale.md"
    _plot(results, stem.with_suffix(".png"))
    text = (
        f"# scale: chunks of {PER_CHUNK} samples, medians of {args.repeats} "
        f"({started:%Y-%m-%d %H:%M}, {os.cpu_count()} CPUs)\n\n{_table(results)}\n\n"
        f"![open time against chunks]({stem.with_suffix('.png').name})\n"
    )
    stem.write_text(text)
    stem.with_suffix(".json").write_text(json.dumps(results, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
