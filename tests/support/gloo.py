"""Run a script as several torch.distributed ranks (gloo on 127.0.0.1), each in its own process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.servers import free_port

ROOT = Path(__file__).resolve().parents[2]


def run_ranks(script: str, world: int, *args: str, timeout: float = 240) -> None:
    """Run ``script`` as ranks ``0..world-1``; it reads ``sys.argv[1:]``: port, rank, world, args.

    The script calls ``dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
    ...)`` itself. Raises ``AssertionError`` with every rank's stderr when one fails.
    """
    port = str(free_port())
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "GLOBAL_RANK"):
        env.pop(name, None)
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, port, str(rank), str(world), *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(world)
    ]
    try:
        results = [process.communicate(timeout=timeout) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    codes = [process.returncode for process in processes]
    assert codes == [0] * world, [err for _, err in results]
