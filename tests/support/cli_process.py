"""The real ``litdata`` command, run as a user runs it: a new process, this checkout's package."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a ``litdata`` process: this checkout's package first on the path."""
    path = os.environ.get("PYTHONPATH")
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else ""),
        **(extra or {}),
    }


def cli_argv(*args: object) -> list[str]:
    """The command line of ``litdata ARGS...``."""
    return [sys.executable, "-m", "litdata", *map(str, args)]


def litdata(
    *args: object,
    cwd: str | os.PathLike[str] | None = None,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``litdata ARGS...`` to its end; its exit status and output (never raises on failure)."""
    return subprocess.run(
        cli_argv(*args),
        cwd=cwd,
        input=stdin if stdin is not None else "",
        env=cli_env(env),
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )
