"""How the benchmark launches a system's child: its interpreter, its environment, its result.

Each system runs in a child process of its own (``bench/child.py``) under the interpreter that
has it (ours' venv or the peers'), never with both litdata packages importable at once; the
parent samples the child's peak PSS, and, with the S3 server running, counts its requests.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import peers
import remote
from child import RESULT_PREFIX
from memory import PeakPss
from rows import (
    BEFORE,
    BEFORE_ENV,
    DECODE_LIMIT,
    ENCRYPTED,
    ENCRYPTION_ENV,
    NOVERIFY,
    PLAIN,
    S3FS_RAW,
    STANDARD,
    VERIFYALL,
    VISION_ENV,
)

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent

ALL_SYSTEMS = (*STANDARD, NOVERIFY, VERIFYALL, BEFORE, S3FS_RAW, *ENCRYPTED, PLAIN, DECODE_LIMIT)
PEER_SYSTEMS = {"litdata", "mosaic", "webdataset", "litdata-fernet", "litdata-fernet-chunk"}
#: Systems that read another system's prepared dataset (the same files, the same objects).
DATASET_OF = {
    NOVERIFY: "ours",
    VERIFYALL: "ours",
    BEFORE: "ours",
    S3FS_RAW: "ours",
    PLAIN: "ours",
    DECODE_LIMIT: "baseline",
}
#: Systems whose children import our package (``PYTHONPATH=<repo>``).
OURS_SYSTEMS = {"ours", NOVERIFY, VERIFYALL, BEFORE, "ours-fernet", "ours-fernet-chunk", PLAIN}


@dataclass
class Settings:
    """Resolved command-line settings."""

    rows: list[str]
    workloads: list[str] | None
    systems: list[str]
    repeats: int
    root: Path
    timeout: float
    ours_python: str
    reuse_ours: bool
    log_dir: Path
    results_dir: Path
    num_workers: list[int] | None = None  # the variants' worker counts to run (None: all)
    modes: list[str] | None = None  # ours' worker modes to run (None: all)
    rebuilt: set[Path] = field(default_factory=set)  # ours' datasets rewritten by this invocation
    server: remote.MotoServer | None = None  # the remote rows' S3 server, while it runs
    uploaded: set[str] = field(default_factory=set)  # remote URLs uploaded by this invocation


def ours_python() -> str:
    """Interpreter for ours and the baseline."""
    env = os.environ.get("LITDATA_BENCH_OURS_PYTHON")
    if env:
        return env
    venv = REPO / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def before_repo() -> str:
    """The checkout ``ours-before`` imports (``LITDATA_BENCH_BEFORE``).

    Raises:
        SystemExit: It is not set, or holds no ``litdata`` package.
    """
    path = os.environ.get(BEFORE_ENV, "")
    if not (Path(path) / "litdata" / "__init__.py").is_file():
        raise SystemExit(
            f"{BEFORE} needs {BEFORE_ENV}: a checkout of the earlier commit, e.g. "
            f"`git worktree add /tmp/before HEAD~3` then {BEFORE_ENV}=/tmp/before."
        )
    return path


def child_command(settings: Settings, system: str) -> tuple[list[str], dict[str, str]]:
    """Interpreter + environment of ``system``'s children (never both litdata packages at once)."""
    tmp = Path(tempfile.mkdtemp(prefix=f"{system}-", dir=peers.scratch_dir()))
    python = settings.ours_python
    if system in PEER_SYSTEMS:
        python, env = str(peers.venv_python()), peers.peer_env(tmpdir=tmp)
    else:
        env = dict(os.environ)
        env["TMPDIR"] = str(tmp)
        if system == BEFORE:
            env["PYTHONPATH"] = before_repo()
            python = os.environ.get("LITDATA_BENCH_BEFORE_PYTHON", python)
        elif system in OURS_SYSTEMS:
            env["PYTHONPATH"] = str(REPO)
        else:
            env.pop("PYTHONPATH", None)
    if system == NOVERIFY:
        env["LITDATA_VERIFY"] = "0"
    if system == VERIFYALL:
        env["LITDATA_VERIFY"] = "always"
    if system == PLAIN:
        env[VISION_ENV] = "plain"
    if system in ENCRYPTED:
        env[ENCRYPTION_ENV] = "chunk" if system.endswith("-chunk") else "sample"
    return [python], env


def run_child(
    settings: Settings,
    system: str,
    action: str,
    workload: str,
    *,
    extra: list[str],
    label: str,
    watch_dir: Path | None = None,
) -> dict[str, Any]:
    """Run one child; return its result dict with ``peak_pss_mb`` and ``wall_s`` added.

    With ``watch_dir``, the bytes under it are sampled every 20 ms as well (``peak_cache_mb``);
    with the S3 server running, the child's requests to it are counted (``requests``).
    """
    cmd, env = child_command(settings, system)
    cmd += [
        str(BENCH / "child.py"),
        "--system",
        system,
        "--action",
        action,
        "--workload",
        workload,
        "--root",
        str(settings.root),
        *extra,
    ]
    log = settings.log_dir / f"{label}.log"
    start = time.perf_counter()
    with open(log, "w") as out:
        out.write(" ".join(cmd) + "\n")
        out.flush()
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=env["TMPDIR"]
        )
        counted = settings.server is not None and action.startswith("remote")
        requests = settings.server.requests if settings.server and counted else None
        mark = requests.offset() if requests else 0
        disk = remote.PeakDisk(watch_dir) if watch_dir is not None else None
        with PeakPss(proc.pid) as pss, disk or contextlib.nullcontext():
            try:
                proc.wait(timeout=settings.timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    wall = time.perf_counter() - start
    shutil.rmtree(env["TMPDIR"], ignore_errors=True)
    result: dict[str, Any] | None = None
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX) :])
    if result is None:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
        why = (
            "timeout"
            if proc.returncode in (-9, None) and wall >= settings.timeout
            else f"exit {proc.returncode}"
        )
        result = {"ok": False, "error": f"child died ({why}): {tail[0][:200]}"}
    result["peak_pss_mb"] = max(pss.peak_mb, float(result.get("pss_end_mb") or 0.0))
    result["wall_s"] = wall
    if disk is not None:
        result["peak_cache_mb"] = disk.peak_mb
    if requests is not None:
        result["requests"] = requests.count(mark)[0]
    result["log"] = str(log)
    return result
