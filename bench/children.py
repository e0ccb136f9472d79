"""Measurements in fresh interpreters: a child prints one result line, the parent reads it back.

A bench script runs itself again with ``--child ...`` so that every measurement starts cold (no
warm imports, caches or page tables from the one before). The child prints its result as JSON
after a prefix naming the script; the parent keeps the last such line and ignores the rest.
"""

from __future__ import annotations

import json
import resource
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["cpu_seconds", "emit", "run_child"]


def emit(prefix: str, result: Mapping[str, Any]) -> None:
    """Print ``result`` as the child's result line."""
    print(prefix + json.dumps(result), flush=True)


def run_child(
    command: Sequence[str], env: Mapping[str, str], prefix: str, *, timeout: float = 1800
) -> dict[str, Any]:
    """Run a child and return its result line's JSON.

    Raises:
        RuntimeError: The child failed or printed no result (with its output's tail).
    """
    done = subprocess.run(
        list(command), env=dict(env), capture_output=True, text=True, check=False, timeout=timeout
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith(prefix)]
    if done.returncode or not lines:
        raise RuntimeError(
            f"{' '.join(command)} failed (exit {done.returncode}):\n"
            f"{done.stdout[-2000:]}{done.stderr[-4000:]}"
        )
    return dict(json.loads(lines[-1][len(prefix) :]))


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (DataLoader workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
