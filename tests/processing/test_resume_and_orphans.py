"""Killing optimize for real: checkpoints resume without duplicates or losses, and workers
never outlive their driver."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import litdata as ld

TESTS = Path(__file__).resolve().parents[1]
SCRIPT = """
import sys
import fns
import litdata as ld
ld.optimize(fns.slow_record, range(int(sys.argv[2])), sys.argv[1], chunk_size=10, num_workers=2,
            use_checkpoint=sys.argv[3] == "1", keep_data_ordered=True, verbose=False)
"""


def _start(output, count, checkpoint):
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(output), str(count), checkpoint],
        env=env,
        start_new_session=True,
    )


def _wait_for(condition, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def _checkpointed(output, least):
    def check():
        try:
            states = [
                json.loads(p.read_text())
                for p in (output / ".checkpoints").glob("checkpoint-*.json")
            ]
        except (OSError, ValueError):
            return False
        return sum(state["inputs_done"] for state in states) >= least

    return check


@pytest.mark.parametrize("kill_after", [20, 70])
def test_a_killed_run_resumes_exactly(tmp_path, kill_after):
    output = tmp_path / "out"
    process = _start(output, 200, "1")
    _wait_for(_checkpointed(output, kill_after))
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not (output / "index.json").exists()
    ld.optimize(
        __import__("fns").slow_record,
        range(200),
        output,
        chunk_size=10,
        num_workers=2,
        use_checkpoint=True,
        verbose=False,
    )
    reader = ld.DatasetReader(output)
    assert [reader[i]["id"] for i in range(len(reader))] == list(range(200))
    assert not (output / ".checkpoints").exists()


def test_checkpoints_of_another_run_are_refused(tmp_path):
    output = tmp_path / "out"
    process = _start(output, 200, "1")
    _wait_for(_checkpointed(output, 10))
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    with pytest.raises(ValueError, match="other inputs or another number of workers"):
        ld.optimize(
            __import__("fns").slow_record,
            range(200),
            output,
            chunk_size=10,
            num_workers=3,
            use_checkpoint=True,
            verbose=False,
        )


def _children(pid):
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_workers_exit_when_the_driver_is_killed(tmp_path):
    process = _start(tmp_path / "out", 2000, "0")
    _wait_for(lambda: len(_children(process.pid)) >= 2)
    workers = _children(process.pid)
    process.kill()  # the driver only: its workers must notice and stop
    process.wait()
    _wait_for(lambda: not any(_alive(pid) for pid in workers), timeout=10)
