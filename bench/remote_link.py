"""The ``remote-link`` rows: streaming from S3 through a realistic link, ours vs peers vs the link.

A moto S3 server (``remote.MotoServer``) sits behind the project's link proxy
(``tests/support/link_proxy.py``, run in this process's thread) which adds a time to first byte,
a bandwidth cap per connection and in total, and ``503 SlowDown`` above a request rate: the
``default`` link (30 ms, 50 MB/s per connection, 400 MB/s, 200 req/s) and the ``harsh`` one (80
ms, 25 MB/s, 200 MB/s, 50 req/s). Workloads, each written by each system's own writer:

- ``R1``: 20,000 samples ``{"image": 16 KB incompressible bytes, "label": i}``, 64 MB chunks;
- ``R3``: 200,000 records ``{"x": float32[16], "y": i}``, 8 MB chunks;
- ``R4``: 2,000 samples ``{"data": 1 MB bytes, "id": i}``, 256 MB chunks.

Systems: ``ours`` and ``litdata`` (LitData 0.2.76, peers venv; ``StreamingDataset(url,
storage_options=..., cache_dir=...)`` + ``StreamingDataLoader``), ``mosaic`` (MosaicML Streaming,
``StreamingDataset(remote=url, local=...)`` + torch ``DataLoader``, ``S3_ENDPOINT_URL`` at the
proxy), and ``limit``: every object of ours' dataset fetched with 8 ranged GETs at once through
the same link, one object after another (no decoding): what the link carries. Each epoch is
shuffled and fully checked (count, sum of ids, every sample's bytes against its id). Per cell:
MB/s (dataset bytes / epoch seconds), fraction of the same run's link limit, first batch,
requests and 503s through the proxy, peak bytes in the cache dir, the proxy's CPU seconds, and
the CPU seconds per GB of the reading process tree (the training process and its loader
workers, by ``getrusage`` over the epoch) beside the limit client's.
``--server seaweedfs`` puts SeaweedFS (``weed mini``) behind the link instead of moto (the
proxy then forwards every GET: SeaweedFS checks signatures, so it cannot serve copies).
``--chaos RATE`` adds, per link, a ``LINK+chaos`` variant: the same cells of the systems that
decode (not ``limit``, whose plain client retries nothing), with that chance of a fault per
GET, HEAD and LIST from the proxy's chaos mode (``Chaos.mix``: statuses, cut, short and flipped
bodies, error documents, lying ranges), seeded per repeat.
``cold``: an empty cache dir; ``warm``: the same dir in a new process after the cold epoch.
``local`` (a system): ours streaming the local copy the datasets were uploaded from, with no
link, to compare warm epochs with. ``ours-nocache``: ours with ``max_cache_size=0`` (no
cache: each chunk kept in memory while it is read, never written to disk). ``ours-before``:
ours at an earlier checkout (``LITDATA_BENCH_BEFORE``) on ours' objects, alternating with
``ours`` in each repeat (A/B runs differ less than separate runs of the same code).

The ``upload`` rows time ``optimize`` of R1 to ``s3://`` through the link: ours vs LitData vs
the write limit (ours' files put as 8 multipart parts at once).

    python bench/remote_link.py [--quick] [--workloads R1,R3,R4] [--links default,harsh]
        [--workers 0,2,4] [--caches cold,warm] [--systems ours,litdata,mosaic,limit]
        [--repeats 3] [--scale 1.0] [--no-upload] [--out FILE]

``--quick``: R1 at a tenth of its size, the default link, 0 workers, cold, one repeat.
``--scale`` multiplies every workload's sample count. Writes ``bench/results/<date>-remote-link.md``
(and ``.json``). LitData's obstore client cannot reach a plain-http endpoint unless told
``allow_http``; the peers venv has no obstore (LitData then uses boto3): where obstore is
installed, the child sets ``allow_http`` in LitData's obstore client options.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
for _path in (str(BENCH), str(REPO / "tests")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

SYSTEMS = ("ours", "litdata", "mosaic", "limit", "local")
#: Ours with ``max_cache_size=0`` (no cache: chunks in memory while read), on ours' objects.
NO_CACHE = "ours-nocache"


# -- the parent ---------------------------------------------------------------------------------
import peers  # noqa: E402
import remote  # noqa: E402
from launch import before_repo  # noqa: E402
from link_children import PARALLEL_RANGES, RESULT, WORKLOADS  # noqa: E402
from rows import BEFORE  # noqa: E402
from support.link_chaos import Chaos  # noqa: E402
from support.link_proxy import DEFAULT_LINK, HARSH_LINK, OPEN_LINK, LinkProxy  # noqa: E402
from support.servers import weed_mini  # noqa: E402

#: Systems that read ours' objects (``ours-before``: an earlier checkout, for A/B runs).
ON_OURS = ("limit", "local", BEFORE, NO_CACHE)

LINKS = {"default": DEFAULT_LINK, "harsh": HARSH_LINK}
#: The proxy's memory for copies of objects: R4's 2 GB datasets of one system fit, not three.
COPY_BYTES = 3 << 30


def _python(system: str, litdata_python: str | None) -> tuple[str, dict[str, str]]:
    tmp = Path(tempfile.mkdtemp(prefix=f"link-{system}-", dir=peers.scratch_dir()))
    if system in ("litdata", "mosaic"):
        python = litdata_python if system == "litdata" and litdata_python else peers.venv_python()
        return str(python), peers.peer_env(tmpdir=tmp)
    return str(REPO / ".venv/bin/python"), {
        **os.environ,
        "PYTHONPATH": before_repo() if system == BEFORE else str(REPO),
        "TMPDIR": str(tmp),
    }


def run_child(
    system: str, action: str, arguments: dict[str, Any], args: argparse.Namespace
) -> dict[str, Any]:
    python, env = _python(system, args.litdata_python)
    command = [python, str(BENCH / "link_children.py"), action, system, json.dumps(arguments)]
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=args.timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timeout after {args.timeout} s"}
    finally:
        shutil.rmtree(env["TMPDIR"], ignore_errors=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT)]
    if not lines:
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        return {"ok": False, "error": " / ".join(tail)[-400:]}
    return dict(json.loads(lines[-1][len(RESULT) :]))


def _samples(workload: str, scale: float) -> int:
    return max(1, int(WORKLOADS[workload][0] * scale))


def prepare(root: Path, system: str, workload: str, samples: int, args: argparse.Namespace) -> Path:
    """The system's local copy of the workload (written once per size), its own writer's."""
    owner = "ours" if system in ON_OURS else system
    out = root / f"{owner}-{workload}-{samples}"
    marker = out / ".link-ready"
    if not marker.exists():
        print(f"  writing {owner} {workload} ({samples:,} samples) ...", flush=True)
        arguments = {"workload": workload, "out": str(out), "samples": samples}
        result = run_child(owner, "prepare", arguments, args)
        if not result.get("ok"):
            raise RuntimeError(f"preparing {owner} {workload}: {result}")
        marker.write_text("ok")
    return out


def warm_copies(
    proxy: LinkProxy,
    url: str,
    size: int,
    args: argparse.Namespace,
    copied: tuple[tuple[str, int], ...],
) -> tuple[tuple[str, int], ...]:
    """Have the proxy copy every object under ``url`` (``size`` bytes) before a timed epoch.

    The proxy serves GETs from its copies (moto copies a whole object per GET); the first GET
    of an object waits for the proxy to fetch it all from moto, about 0.4 s per 64 MB on 2
    cores. Without this, whichever system read an object first paid that, which no real store
    charges: before 2026-12-02 14:30, ours' first repeat (the first reader of its objects)
    did, and the link limit (read after it, the same objects) did not. Copies beyond
    ``COPY_BYTES`` are dropped least recently used first, so a dataset is copied again when
    the datasets copied since may have pushed it out.

    Args:
        proxy: The link proxy.
        url: The dataset's ``s3://`` folder.
        size: Its bytes.
        args: The bench's options (the child's timeout).
        copied: The datasets copied so far and their bytes, the most recent last.

    Returns:
        ``copied`` with ``url`` last.
    """
    urls = [held for held, _ in copied]
    if url in urls and sum(held for _, held in copied[urls.index(url) :]) <= COPY_BYTES:
        return copied
    settings, proxy.settings = proxy.settings, OPEN_LINK
    try:
        result = run_child("limit", "stream", {"url": url, "endpoint": proxy.endpoint}, args)
    finally:
        proxy.settings = settings
    if not result.get("ok"):
        raise RuntimeError(f"copying {url} into the link proxy: {result}")
    return (*(entry for entry in copied if entry[0] != url), (url, size))


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and p.name[0] != ".")


def fill_for_warm(
    proxy: LinkProxy, system: str, arguments: dict[str, Any], args: argparse.Namespace, cache: Path
) -> None:
    """With ``--caches warm`` alone, fill ``cache`` first, untimed (or "warm" would be cold)."""
    states = args.caches.split(",")
    if "warm" in states and "cold" not in states and system not in ("limit", "local"):
        measure(proxy, system, arguments, args, cache)


def measure(
    proxy: LinkProxy,
    system: str,
    arguments: dict[str, Any],
    args: argparse.Namespace,
    cache: Path,
    *,
    chaos: Chaos | None = None,
) -> dict[str, Any]:
    proxy.reset_log()
    cpu = proxy.cpu_s()
    proxy.chaos = chaos
    try:
        with remote.PeakDisk(cache) as disk:
            result = run_child(system, "stream", {**arguments, "cache": str(cache)}, args)
    finally:
        proxy.chaos = None
    stats = proxy.stats()
    result.update(
        requests=stats["requests"],
        slowdowns=stats["slowdowns"],
        peak_cache_mb=disk.peak_mb,
        proxy_cpu_s=stats["cpu_s"] - cpu,
        faults=stats["faults"],
    )
    return result


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [float(run[key]) for run in runs if run.get("ok") and key in run]
    return statistics.median(values) if values else None


def _form(value: float | None, form: str) -> str:
    return "-" if value is None else form.format(value)


def table(cells: dict[tuple[str, ...], list[dict[str, Any]]], sizes: dict[str, int]) -> str:
    head = (
        "| link | workload | cache | workers | system | MB/s | of link | first batch s | "
        "requests | 503s | faults | peak cache MB | proxy CPU s | CPU s/GB | CPU of limit's | ok |"
    )
    lines = [head, "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for key, runs in cells.items():
        link, workload, cache, workers, system = key
        seconds = _median(runs, "epoch_s")
        mb_s = sizes[f"{system}-{workload}"] / 1e6 / seconds if seconds else None
        limit_runs = cells.get((link.split("+")[0], workload, "cold", "-", "limit"))
        limit_s = _median(limit_runs, "epoch_s") if limit_runs else None
        limit = sizes[f"limit-{workload}"] / 1e6 / limit_s if limit_s else None
        share = mb_s / limit if mb_s and limit and system != "limit" else None
        cpu = _median(runs, "cpu_s")
        per_gb = cpu / (sizes[f"{system}-{workload}"] / 1e9) if cpu is not None else None
        limit_cpu = _median(limit_runs, "cpu_s") if limit_runs else None
        limit_gb = limit_cpu / (sizes[f"limit-{workload}"] / 1e9) if limit_cpu else None
        of_limit = per_gb / limit_gb if per_gb and limit_gb and system != "limit" else None
        ok = sum(bool(run.get("ok")) for run in runs)
        errors = "; ".join(str(r.get("error"))[:80] for r in runs if not r.get("ok"))
        lines.append(
            f"| {link} | {workload} | {cache} | {workers} | {system} | {_form(mb_s, '{:.0f}')} | "
            f"{_form(share, '{:.2f}')} | {_form(_median(runs, 'first_batch_s'), '{:.2f}')} | "
            f"{_form(_median(runs, 'requests'), '{:.0f}')} | "
            f"{_form(_median(runs, 'slowdowns'), '{:.0f}')} | "
            f"{_form(_median(runs, 'faults'), '{:.0f}')} | "
            f"{_form(_median(runs, 'peak_cache_mb'), '{:.0f}')} | "
            f"{_form(_median(runs, 'proxy_cpu_s'), '{:.2f}')} | {_form(per_gb, '{:.2f}')} | "
            f"{_form(of_limit, '{:.2f}')} | {ok}/{len(runs)} {errors} |"
        )
    return "\n".join(lines)


#: The breakdown's columns: ours' stages (``litdata.core.cpu_stages.STAGES``), then the rest.
STAGE_COLUMNS = ("network", "cache write", "checksum", "decompression", "decode", "hand-over")


def breakdown(cells: dict[tuple[str, ...], list[dict[str, Any]]], sizes: dict[str, int]) -> str:
    """Ours' CPU seconds per GB in each stage of its read path (medians of the repeats).

    ``other``: the process tree's CPU less the stages (the loader's and the workers' own
    work, imports and start-up, the plan, Python's and torch's overheads). ``bench check``:
    the bench's own check of every sample, which the main table's CPU leaves out.
    """
    head = "| link | workload | cache | workers | system | " + " | ".join(STAGE_COLUMNS)
    lines = [
        head + " | other | total | bench check |",
        "|---|---|---|---:|---|" + "---:|" * (len(STAGE_COLUMNS) + 3),
    ]
    for key, runs in cells.items():
        link, workload, cache, workers, system = key
        counted = [run for run in runs if run.get("ok") and run.get("stages")]
        if not counted:
            continue
        gb = sizes[f"{system}-{workload}"] / 1e9
        per_stage = [
            statistics.median(float(run["stages"].get(stage, 0.0)) for run in counted) / gb
            for stage in STAGE_COLUMNS
        ]
        total = statistics.median(float(run["cpu_s"]) for run in counted) / gb
        others = [
            float(run["cpu_s"]) - sum(float(v) for v in run["stages"].values()) for run in counted
        ]
        check = statistics.median(float(run.get("check_cpu_s", 0.0)) for run in counted) / gb
        cells_text = " | ".join(f"{value:.2f}" for value in per_stage)
        lines.append(
            f"| {link} | {workload} | {cache} | {workers} | {system} | {cells_text} | "
            f"{statistics.median(others) / gb:.2f} | {total:.2f} | {check:.2f} |"
        )
    return (
        "## CPU s/GB per stage (ours' read path, `LITDATA_CPU_STAGES`)\n\n"
        "Each stage's CPU (its threads' CPU time, every process of the tree) per GB of the "
        "dataset; `network`: the storage client's event-loop thread (requests, bodies); "
        "`hand-over`: collating and moving batches to the training loop (packing in the "
        "workers, receiving and unpacking in the training process); `other`: the tree's CPU "
        "less the stages (start-up, the plan, the loader's own work); `bench check`: the "
        "bench's check of every sample, left out of the CPU columns.\n\n"
        + "\n".join(lines)
        + "\n\n"
    )


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--workloads", default="R1,R3,R4")
    parser.add_argument("--links", default="default,harsh")
    parser.add_argument("--workers", default="0,2,4")
    parser.add_argument("--caches", default="cold,warm")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the sample counts")
    parser.add_argument("--no-upload", action="store_true", help="skip the upload rows")
    parser.add_argument("--upload-repeats", type=int, default=None, help="default: --repeats")
    parser.add_argument("--litdata-python", default=None, help="LitData's interpreter")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per child")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--server", choices=("moto", "seaweedfs"), default="moto")
    parser.add_argument(
        "--chaos", type=float, default=0.0, help="also run each link with this fault rate"
    )
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="ours' CPU per stage of its read path (LITDATA_CPU_STAGES), as one more table",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.workloads, args.links, args.workers, args.caches = "R1", "default", "0", "cold"
        args.repeats, args.scale = 1, min(args.scale, 0.1)
    return args


@contextlib.contextmanager
def _server(name: str, root: Path, python: Path) -> Iterator[str]:
    """The S3 server behind the link (``moto`` or ``seaweedfs``): its endpoint, until the end."""
    if name == "seaweedfs":
        shutil.rmtree(root / "seaweedfs", ignore_errors=True)
        with weed_mini(root / "seaweedfs") as endpoint:
            yield endpoint
    else:
        with remote.MotoServer(python.parent, root, root / "moto-tmp") as moto:
            yield moto.endpoint


def _variants(args: argparse.Namespace) -> list[tuple[str, bool]]:
    """``(link, with chaos)`` for each link asked for: with chaos too if ``--chaos``."""
    links = args.links.split(",")
    return [(link, chaotic) for link in links for chaotic in (False, True)[: 1 + bool(args.chaos)]]


def _chaos(args: argparse.Namespace, chaotic: bool, seed: int) -> Chaos | None:
    """The chaos of a cell: ``--chaos`` faults per GET, HEAD and LIST, or none."""
    return Chaos.mix(args.chaos, ("GET", "HEAD", "LIST"), seed=seed) if chaotic else None


def child_arguments(
    system: str,
    workload: str,
    workers: int,
    samples: int,
    *,
    endpoint: str,
    local_copies: dict[str, Path],
    stages: bool = False,
) -> dict[str, Any]:
    """What a system's ``stream`` child is told: its dataset, the link, the loader's workers
    (and, with ``stages``, that ours counts its CPU per stage)."""
    if system == "limit":  # ours' objects, fetched with ranged GETs, nothing decoded
        return {"url": f"s3://bench/ours/{workload}", "endpoint": endpoint}
    owner = "ours" if system in ON_OURS else system
    url = str(local_copies[workload]) if system == "local" else f"s3://bench/{owner}/{workload}"
    return {
        "workload": workload,
        "url": url,
        "endpoint": endpoint,
        "workers": workers,
        "samples": samples,
        "stages": stages and system in ("ours", BEFORE, "local", NO_CACHE),
        "no_cache": system == NO_CACHE,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    started = dt.datetime.now()
    clock = time.monotonic()
    root = peers.scratch_dir() / "remote-link"
    root.mkdir(parents=True, exist_ok=True)
    systems = [s for s in args.systems.split(",") if s]
    workloads = [w for w in args.workloads.split(",") if w]
    ours_python = REPO / ".venv/bin/python"
    # As run.py does: our modules compiled once, not in every child (the peers' are installed).
    subprocess.run(
        [str(ours_python), "-m", "compileall", "-q", str(REPO / "litdata")],
        check=True,
    )
    cells: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    sizes: dict[str, int] = {}
    with (
        _server(args.server, root, ours_python) as endpoint,
        LinkProxy(endpoint, OPEN_LINK, cache_bytes=COPY_BYTES) as proxy,
    ):
        copied: tuple[tuple[str, int], ...] = ()  # datasets the proxy holds copies of, oldest first
        local_copies: dict[str, Path] = {}  # the local folders "local" streams, by workload
        for workload in workloads:
            samples = _samples(workload, args.scale)
            for system in systems:
                local = prepare(root, system, workload, samples, args)
                sizes[f"{system}-{workload}"] = _bytes(local)
                if system == "local":
                    local_copies[workload] = local
                elif system not in ON_OURS:
                    target = f"s3://bench/{system}/{workload}"
                    remote.upload(str(ours_python), endpoint, local, target)
            for link, chaotic in _variants(args):
                proxy.settings = LINKS[link]
                counts = [int(w) for w in args.workers.split(",")]
                for workers in counts:
                    for rep in range(args.repeats):
                        for system in systems:
                            if system == "limit" and (workers != counts[0] or chaotic):
                                continue
                            arguments = child_arguments(
                                system,
                                workload,
                                workers,
                                samples,
                                endpoint=proxy.endpoint,
                                local_copies=local_copies,
                                stages=args.breakdown,
                            )
                            if system != "local":
                                size = sizes[f"{system}-{workload}"]
                                url = arguments["url"]
                                copied = warm_copies(proxy, url, size, args, copied)
                            cache = root / f"cache-{system}"
                            shutil.rmtree(cache, ignore_errors=True)
                            cache.mkdir()
                            fill_for_warm(proxy, system, arguments, args, cache)
                            for state in args.caches.split(","):
                                if system in ("limit", "local") and state == "warm":
                                    continue
                                shown = "-" if system == "limit" else str(workers)
                                seen = "local" if system == "local" else state
                                key = (link + "+chaos" * chaotic, workload, seen, shown, system)
                                chaos = _chaos(args, chaotic and system != "local", rep)
                                result = measure(proxy, system, arguments, args, cache, chaos=chaos)
                                cells.setdefault(key, []).append(result)
                                print(f"  {key} r{rep}: {result}", flush=True)
                                write(
                                    args, argv, started, clock, cells=cells, sizes=sizes, uploads=""
                                )
                            shutil.rmtree(cache, ignore_errors=True)
            proxy.settings = OPEN_LINK
        uploads = upload_rows(proxy, args, sizes, root) if not args.no_upload else ""
    text = write(args, argv, started, clock, cells=cells, sizes=sizes, uploads=uploads)
    print(text)
    return 0


def write(
    args: argparse.Namespace,
    argv: list[str] | None,
    started: dt.datetime,
    clock: float,
    *,
    cells: dict[tuple[str, ...], list[dict[str, Any]]],
    sizes: dict[str, int],
    uploads: str,
) -> str:
    """Write the results so far (after every cell: a run cut short keeps what it measured)."""
    text = (
        f"# remote-link ({started:%Y-%m-%d %H:%M}, {os.cpu_count()} CPUs, medians of "
        f"{args.repeats}, run took {time.monotonic() - clock:.0f} s)\n\n"
        f"Command: `python bench/remote_link.py {' '.join(argv or sys.argv[1:])}`\n\n"
        f"Server behind the link: {args.server}. "
        f"Links: default = {DEFAULT_LINK.describe()}; harsh = {HARSH_LINK.describe()}. "
        f"`of link`: MB/s over the same link's limit (ours' objects, {PARALLEL_RANGES} ranged "
        f"GETs at once). Sizes (bytes): {json.dumps(sizes)}.\n\n"
        f"{table(cells, sizes)}\n\n{breakdown(cells, sizes) if args.breakdown else ''}"
        f"{uploads}\n"
    )
    out = args.out or BENCH / "results" / f"{started:%Y-%m-%d-%H%M}-remote-link.md"
    out.write_text(text)
    raw = {"|".join(key): runs for key, runs in cells.items()}
    out.with_suffix(".json").write_text(json.dumps(raw, indent=1))
    return text


def upload_rows(
    proxy: LinkProxy, args: argparse.Namespace, sizes: dict[str, int], root: Path
) -> str:
    """``optimize`` of R1 to S3 through each link: ours vs LitData vs the link's limit.

    The limit puts ours' R1 files, read beforehand, with ``PARALLEL_RANGES`` multipart parts
    at once: what the link and the server behind it take in when nothing is made on the way.
    """
    samples = _samples("R1", args.scale)
    source = prepare(root, "limit", "R1", samples, args)
    lines = [
        "| link | system | MB/s | s | requests | 503s | proxy CPU s | ok |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for link in args.links.split(","):
        for system in ("ours", "litdata", "limit"):
            runs = []
            for rep in range(args.upload_repeats or args.repeats):
                proxy.settings = LINKS[link]
                proxy.reset_log()
                cpu = proxy.cpu_s()
                url = f"s3://bench/upload-{system}-{link}-{rep}/R1"
                arguments: dict[str, Any] = {"url": url, "endpoint": proxy.endpoint}
                if system == "limit":
                    arguments["source"] = str(source)
                else:
                    arguments.update(workload="R1", samples=samples)
                result = run_child(system, "upload", arguments, args)
                stats = proxy.stats()
                result.update(
                    requests=stats["requests"],
                    slowdowns=stats["slowdowns"],
                    proxy_cpu_s=stats["cpu_s"] - cpu,
                )
                print(f"  upload {link} {system} r{rep}: {result}", flush=True)
                runs.append(result)
            proxy.settings = OPEN_LINK
            seconds = _median(runs, "epoch_s")
            size = sizes.get(f"{system}-R1") or _bytes(source)
            mb_s = size / 1e6 / seconds if seconds else None
            ok = sum(bool(r.get("ok")) for r in runs)
            errors = "; ".join(str(r.get("error"))[:80] for r in runs if not r.get("ok"))
            lines.append(
                f"| {link} | {system} | {_form(mb_s, '{:.0f}')} | {_form(seconds, '{:.1f}')} | "
                f"{_form(_median(runs, 'requests'), '{:.0f}')} | "
                f"{_form(_median(runs, 'slowdowns'), '{:.0f}')} | "
                f"{_form(_median(runs, 'proxy_cpu_s'), '{:.2f}')} | {ok}/{len(runs)} {errors} |"
            )
    return "## upload: optimize R1 to s3:// through the link\n\n" + "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
