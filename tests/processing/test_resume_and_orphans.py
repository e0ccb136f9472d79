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
from support import fns
from support.helpers import (
    alive,
    children,
    leaving_no_process,
    session_processes,
    wait_for,
    wait_until_writing_to_a_pipe,
)

import litdata as ld

TESTS = Path(__file__).resolve().parents[1]
SCRIPT = """
import sys
from support import fns
import litdata as ld
ld.optimize(fns.slow_record, range(int(sys.argv[4]), int(sys.argv[2])), sys.argv[1], chunk_size=10,
            num_workers=2, use_checkpoint=sys.argv[3] == "1", keep_data_ordered=True,
            verbose=False, mode=sys.argv[5] or None)
"""


def _start(output, count, checkpoint, first=0, mode=""):
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(output), str(count), checkpoint, str(first), mode],
        env=env,
        start_new_session=True,
    )


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
    wait_for(_checkpointed(output, kill_after))
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not (output / "index.json").exists()
    ld.optimize(
        fns.slow_record,
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


def test_a_killed_resumable_append_resumes_exactly(tmp_path):
    output = tmp_path / "out"
    ld.optimize(fns.slow_record, range(50), output, chunk_size=10, num_workers=2, verbose=False)
    process = _start(output, 250, "1", first=50, mode="append")
    wait_for(_checkpointed(output, 60))
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert len(ld.DatasetReader(output)) == 50  # the interrupted append changed nothing yet
    ld.optimize(
        fns.slow_record,
        range(50, 250),
        output,
        chunk_size=10,
        num_workers=2,
        use_checkpoint=True,
        mode="append",
        keep_data_ordered=True,
        verbose=False,
    )
    reader = ld.DatasetReader(output)
    ids = [reader[i]["id"] for i in range(len(reader))]
    assert sorted(ids[:50]) == list(range(50))
    assert ids[50:] == list(range(50, 250))
    assert not (output / ".checkpoints").exists()


def test_checkpoints_of_another_run_are_refused(tmp_path):
    output = tmp_path / "out"
    process = _start(output, 200, "1")
    wait_for(_checkpointed(output, 10))
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    with pytest.raises(ValueError, match="other inputs or another number of workers"):
        ld.optimize(
            fns.slow_record,
            range(200),
            output,
            chunk_size=10,
            num_workers=3,
            use_checkpoint=True,
            verbose=False,
        )


def test_workers_exit_when_the_driver_is_killed(tmp_path):
    process = _start(tmp_path / "out", 2000, "0")
    wait_for(lambda: len(children(process.pid)) >= 2)
    workers = children(process.pid)
    process.kill()  # the driver only: its workers must notice and stop
    process.wait()
    wait_for(lambda: not any(alive(pid) for pid in workers), timeout=10)


BLOCKED = """
import sys
from support import fns
import litdata as ld
output, fn, markers, start_method = sys.argv[1:]
ld.optimize(getattr(fns, fn), [(i, markers) for i in range(4)], output, chunk_size=10,
            num_workers=2, keep_data_ordered=True, start_method=start_method, verbose=False)
"""


def _start_blocked(tmp_path, fn, start_method):
    """A driver whose two workers call ``fns.<fn>``, and the folder where they say they run."""
    markers = tmp_path / "markers"
    markers.mkdir()
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    driver = subprocess.Popen(
        [sys.executable, "-c", BLOCKED, str(tmp_path / "out"), fn, str(markers), start_method],
        env=env,
        start_new_session=True,
    )
    return driver, markers


def _kill_and_expect_no_orphans(driver):
    driver.kill()
    driver.wait()
    wait_for(lambda: not session_processes(driver.pid), timeout=10, what="the workers' exit")


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_workers_inside_fn_exit_when_the_driver_is_killed(tmp_path, start_method):
    driver, markers = _start_blocked(tmp_path, "stuck_in_fn", start_method)
    with leaving_no_process(driver):
        wait_for(lambda: len(list(markers.glob("worker-*"))) == 2, what="fn calls")
        _kill_and_expect_no_orphans(driver)


def test_workers_blocked_reporting_exit_when_the_driver_is_killed(tmp_path):
    driver, markers = _start_blocked(tmp_path, "fails_loudly_on_go", "fork")
    with leaving_no_process(driver):
        wait_for(lambda: len(list(markers.glob("worker-*"))) == 2, what="fn calls")
        workers = [int(path.name.split("-")[1]) for path in markers.glob("worker-*")]
        os.kill(driver.pid, signal.SIGSTOP)  # the driver reads no more events
        (markers / "go").touch()  # each worker's 4 MiB failure report fills the events pipe
        wait_until_writing_to_a_pipe(workers)
        _kill_and_expect_no_orphans(driver)


def test_a_worker_stopped_before_it_took_over_its_signals_does_not_unwind_the_driver():
    """A worker forked a moment ago still has the driver's handlers: a SIGTERM then (the driver
    stopping workers after an early failure, a scheduler signalling the whole job) must wait
    until the worker has its own handling, never unwind the copy of the driver's stack below it
    (whose cleanup would remove the driver's output)."""
    from litdata.plugins.executors.local import _signals_held, _take_over_signals
    from litdata.processing.running import _terminate_as_exit

    with _terminate_as_exit(), _signals_held("fork"):
        pid = os.fork()
        if pid == 0:  # the worker, with the driver's handler
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.2)
                _take_over_signals()  # what the worker does first: the signal ends it now
                time.sleep(5)
            finally:
                os._exit(7)  # what unwinding the driver's stack would reach
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == -signal.SIGTERM
