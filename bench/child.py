"""Child-process entry point: run one measurement for one system and print one JSON result line.

Run by ``bench/run.py`` as ``<python> bench/child.py --system S --action A --workload W ...`` with
the interpreter and environment of system S. The last stdout line starting with ``RESULT_PREFIX``
carries ``{"ok": true, ...}``, ``{"ok": false, "unsupported": reason}`` or
``{"ok": false, "error": ...}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

RESULT_PREFIX = "BENCH_RESULT "


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Dispatch to the system adapter; returns the result dict."""
    import systems
    from memory import tree_pss_kib
    from systems.base import Unsupported, write_marker

    system = systems.load(args.system)(Path(args.root))
    try:
        system.setup()
        if args.action in ("prepare", "prepare-mixture"):
            out = Path(args.out)
            if args.action == "prepare":
                system.prepare(args.workload, out)
            else:
                system.prepare_mixture(out)
            if out.exists():
                write_marker(
                    out, {"system": args.system, "workload": args.workload, **system.versions()}
                )
            result: dict[str, Any] = {"metrics": {}, "check": {}, "check_kind": "none"}
        elif args.action in ("write", "optimize"):
            result = getattr(system, args.action)(args.workload, Path(args.out))
        elif args.action == "random":
            result = system.random(args.workload, Path(args.dataset))
        elif args.action == "stream":
            mode = {"mode": args.mode} if args.mode else {}  # only ours has worker modes
            result = system.stream(
                args.workload, Path(args.dataset), bool(args.shuffle), args.num_workers, **mode
            )
        elif args.action == "mixture":
            result = system.mixture(Path(args.dataset), args.mix, args.num_workers)
        elif args.action in ("remote-stream", "remote-random"):
            result = run_remote(system, args)
        else:
            raise SystemExit(f"unknown action {args.action}")
    except Unsupported as exc:
        return {"ok": False, "unsupported": str(exc)}
    # One more PSS sample at the end of the action (the parent samples only every 200 ms, which
    # can miss all of a 0.1 s epoch); outside any timed region. The parent keeps the largest. The
    # read rows also sample at the end of their loop, before the loader is dropped.
    end_mb = tree_pss_kib(os.getpid()) * 1024 / 1e6
    result["pss_end_mb"] = max(float(result.get("pss_end_mb") or 0.0), end_mb)
    result["ok"] = True
    result["versions"] = system.versions()
    if system.note:
        result["note"] = system.note
    return result


def run_remote(system: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The remote rows' actions (against the parent's S3 server)."""
    from remote import storage_options
    from systems.base import Remote

    remote = Remote(args.url, storage_options(args.endpoint), args.request_log)
    if args.action == "remote-stream":
        result: dict[str, Any] = system.remote_stream(
            args.workload, remote, Path(args.cache_dir), args.num_workers
        )
    else:
        result = system.remote_random(args.workload, remote, Path(args.cache_dir))
    return result


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    from rows import MODES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", required=True)
    parser.add_argument("--action", required=True)
    parser.add_argument("--workload", required=True)
    parser.add_argument("--root", required=True, help="workload data directory")
    parser.add_argument("--out", default=None, help="output directory (prepare/write/optimize)")
    parser.add_argument("--dataset", default=None, help="dataset directory (random/stream)")
    parser.add_argument("--shuffle", type=int, default=0)
    parser.add_argument("--num-workers", type=int, default=0)
    parser.add_argument("--mix", default="weighted", choices=("weighted", "all"))
    parser.add_argument("--mode", default=None, choices=MODES, help="ours' workers (stream)")
    parser.add_argument("--url", default=None, help="remote dataset URL (remote rows)")
    parser.add_argument("--endpoint", default=None, help="the S3 server (remote rows)")
    parser.add_argument("--cache-dir", default=None, help="chunk cache (remote rows)")
    parser.add_argument("--request-log", default=None, help="the S3 server's request log")
    parser.add_argument("--cache", default=None, help="cold or warm (remote-stream; informative)")
    args = parser.parse_args(argv)
    try:
        result = run(args)
    except Exception as exc:  # reported, never raised: the parent prints it in the table
        traceback.print_exc()
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
    result["pid"] = os.getpid()
    sys.stdout.flush()
    print(RESULT_PREFIX + json.dumps(result, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
