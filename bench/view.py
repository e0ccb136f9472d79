"""The ``view`` rows: how long ``litdata view`` takes to draw its first page.

A dataset of ``--samples`` (10^6) samples ``{"image": a 24x24 PNG, "label": i % 10,
"caption": 40 characters}`` in 64 MB chunks (LitData's default size) is viewed

- ``local``: from its folder (read in place);
- ``remote``: from a moto S3 server behind the bench's link proxy (``default`` link: 30 ms to
  first byte, 50 MB/s per connection), with an empty cache.

Each repeat is a fresh process that opens the dataset, starts the viewer and asks what the
page asks for its first view of the samples: the dataset list, the overview, the chunk map,
samples 0-49 and their 50 thumbnails, over HTTP on loopback. Reported: the wall time of that
(``first page``; the interpreter's start and imports are reported apart), the process's CPU
seconds, and the requests and bytes the viewer read (the proxy's count for ``remote``), against
the dataset's size. Targets: < 1 s local, < 3 s remote.

    flock /tmp/litdata-bench.lock python bench/view.py [--samples N] [--repeats 3]

Writes ``bench/results/<date>-view.md`` (and ``.json``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
for _path in (str(BENCH), str(REPO / "tests")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

PAGE = 50
CHUNK_BYTES = "64MB"


def _child(target: str, endpoint: str | None, cache: str) -> dict[str, Any]:
    """In a fresh process: open, serve and fetch the first page; the timings."""
    began = time.perf_counter()
    import urllib.request

    from litdata.viewer import start

    imported = time.perf_counter()
    cpu = time.process_time()
    options = None
    if endpoint is not None:
        import remote

        options = remote.storage_options(endpoint)
    viewer = start(target, storage_options=options, cache_dir=cache)
    opened = time.perf_counter()

    def get(path: str) -> bytes:
        with urllib.request.urlopen(viewer.url + path, timeout=120) as response:  # noqa: S310
            return bytes(response.read())

    get("api/datasets")
    overview = json.loads(get("api/overview?ds=0"))
    get("api/chunks?ds=0")
    page = json.loads(get(f"api/samples?ds=0&start=0&count={PAGE}"))
    for row in page["rows"]:
        get(f"api/field?ds=0&i={row['index']}&field=image")
    done = time.perf_counter()
    errors = [row for row in page["rows"] if "error" in row]
    viewer.close()
    if len(page["rows"]) != PAGE or errors:
        raise SystemExit(f"the first page is wrong: {len(page['rows'])} rows, errors {errors[:2]}")
    return {
        "imports_s": imported - began,
        "open_s": opened - imported,
        "first_page_s": done - imported,
        "cpu_s": time.process_time() - cpu,
        "open_cost": overview["cost"],
        "page_cost": page["cost"],
    }


def _build(folder: Path, samples: int) -> None:
    import io

    from PIL import Image

    import litdata as ld

    pictures = []
    for shade in range(16):
        buffer = io.BytesIO()
        Image.new("RGB", (24, 24), (shade * 16, 80, 255 - shade * 16)).save(buffer, "PNG")
        pictures.append(buffer.getvalue())
    ld.write_dataset(
        (
            {"image": pictures[i % 16], "label": i % 10, "caption": f"sample {i:012d} of the bench"}
            for i in range(samples)
        ),
        folder,
        chunk_bytes=CHUNK_BYTES,
    )
    (folder / ".bench-done").write_text(str(samples))


def _run_child(args: list[str]) -> dict[str, Any]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(BENCH), str(REPO / "tests")]),
    }
    out = subprocess.run(
        [sys.executable, __file__, "child", *args],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    import peers
    import remote
    from support.link_proxy import DEFAULT_LINK, LinkProxy

    root = peers.scratch_dir() / "view"
    folder = root / f"ds-{args.samples}"
    if not (folder / ".bench-done").exists():
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        _build(folder, args.samples)
    size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    rows: dict[str, list[dict[str, Any]]] = {"local": [], "remote": []}
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(dir=root) as cache:
            rows["local"].append(_run_child([str(folder), "-", cache]))
    python = str(REPO / ".venv/bin/python")
    with (
        remote.MotoServer(Path(python).parent, root, root / "moto-tmp") as moto,
        LinkProxy(moto.endpoint, DEFAULT_LINK) as proxy,
    ):
        target = f"s3://{remote.BUCKET}/view/ds-{args.samples}"
        remote.upload(python, moto.endpoint, folder, target)
        for _ in range(args.repeats):
            proxy.reset_log()
            with tempfile.TemporaryDirectory(dir=root) as cache:
                run = _run_child([target, proxy.endpoint, cache])
            log = proxy.log
            run["proxy_requests"] = len(log)
            run["proxy_bytes"] = sum(entry.bytes_out for entry in log)
            rows["remote"].append(run)
    lines = [
        f"# litdata view: first page, {args.samples:,} samples ({size / 1e6:.1f} MB, "
        f"{CHUNK_BYTES} chunks), {dt.datetime.now():%Y-%m-%d %H:%M}",
        "",
        f"Medians of {args.repeats} fresh processes; the machine was shared with other agents.",
        "",
        "| where | first page s | open s | CPU s | imports s | requests | bytes read | target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for where, runs in rows.items():
        requests = _median(runs, "proxy_requests") if where == "remote" else 0
        read = _median(runs, "proxy_bytes") if where == "remote" else 0
        target_s = 1.0 if where == "local" else 3.0
        first = _median(runs, "first_page_s")
        lines.append(
            f"| {where} | {first:.3f} | {_median(runs, 'open_s'):.3f} | "
            f"{_median(runs, 'cpu_s'):.2f} | {_median(runs, 'imports_s'):.2f} | {requests:.0f} | "
            f"{read / 1e6:.2f} MB of {size / 1e6:.1f} MB | < {target_s:g} s "
            f"{'met' if first < target_s else 'MISSED'} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    out = args.out or BENCH / "results" / f"{dt.date.today():%Y-%m-%d}-view.md"
    out.write_text(text)
    out.with_suffix(".json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        target, endpoint, cache = sys.argv[2:5]
        print(json.dumps(_child(target, None if endpoint == "-" else endpoint, cache)))
    else:
        sys.exit(main())
