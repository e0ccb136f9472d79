"""``make demo``'s story runs as told: write, inspect, stream, stop, resume exactly, verify."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = str(ROOT / "examples" / "demo.py")


def _run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, *argv]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_demo_tells_its_story_and_leaves_its_dataset(tmp_path):
    start = time.monotonic()
    result = _run(DEMO, cwd=tmp_path)
    seconds = time.monotonic() - start
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for step in ("1. write", "2. inspect", "3. stream", "4. resume", "5. verify", "Done in"):
        assert step in out, out
    written = int(re.search(r"   (\d+) chunks? in ", out).group(1))
    verified = int(re.search(r"demo-dataset: (\d+) chunks?, 1,000 items, 0 problems", out).group(1))
    assert written == verified  # the story counts chunks as verify does (not index.compact)
    assert "exactly the one the first loader would have given" in out
    # the dataset stays for the README's command lines, and they work on it
    assert (tmp_path / "demo-dataset" / "index.json").is_file()
    inspect = _run("-m", "litdata.cli", "inspect", "demo-dataset", "--samples", "0", cwd=tmp_path)
    assert "items        1,000" in inspect.stdout
    # run again in the same folder: it overwrites its own dataset
    again = _run(DEMO, cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert seconds < 120, f"the demo took {seconds:.0f} s"  # about 15 s on a loaded 2-CPU VM
