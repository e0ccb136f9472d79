"""Faults of processes: a killed worker, a driver interrupted or terminated."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support import fns
from support.helpers import alive, children, wait_for

import litdata as ld
from litdata.core.errors import ProcessingError

TESTS = Path(__file__).resolve().parents[1]
DRIVER = """
import sys
from support import fns
import litdata as ld
ld.optimize(fns.slow_record, range(2000), sys.argv[1], chunk_size=10, num_workers=2,
            keep_data_ordered=True, verbose=False)
"""


#: The driver, and a signal that lands while its first worker is being forked: it is sent from
#: an at-fork hook, and taken (as a signal from outside usually is, the driver holding it while
#: it forks) by another thread. CPython runs a Python signal handler at the driver's next
#: bytecode, and one that raises inside an at-fork hook is printed and dropped.
SIGNAL_WHILE_FORKING = """
import os, sys, threading, time
from support import fns
import litdata as ld
signum = int(sys.argv[2])
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
sent = []
def while_forking():
    if not sent:
        sent.append(signum)
        os.kill(os.getpid(), signum)
        time.sleep(0.1)  # the other thread takes it meanwhile; its handler runs right here
os.register_at_fork(after_in_parent=while_forking)
ld.optimize(fns.slow_record, range(400), sys.argv[1], chunk_size=10, num_workers=2,
            verbose=False)
"""


@pytest.mark.fault("an optimize worker killed (kill -9)")
def test_a_killed_worker_stops_the_run(tmp_path, record):
    output = tmp_path / "out"
    parent = os.getpid()
    before = set(children(parent))  # session servers and clusters, not workers of this run

    def kill_a_worker():
        wait_for(lambda: any(output.glob("chunk-*")))
        workers = [pid for pid in children(parent) if alive(pid) and pid not in before]
        record.start()
        os.kill(workers[-1], signal.SIGKILL)

    killer = threading.Thread(target=kill_a_worker)
    killer.start()
    with pytest.raises(
        ProcessingError, match=r"Worker \d died with exit code -9 \(killed by signal 9"
    ):
        ld.optimize(
            fns.slow_record,
            range(2000),
            str(output),
            chunk_size=10,
            num_workers=2,
            verbose=False,
        )
    record.failed()
    killer.join()
    assert not (output / "index.json").exists()
    assert not list(output.glob("chunk-*"))
    wait_for(lambda: not [pid for pid in children(parent) if alive(pid) and pid not in before], 10)
    record("ProcessingError naming the worker and the signal; others stopped, output cleaned")


@pytest.mark.fault("the optimize driver interrupted")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_driver_cleans_up(tmp_path, record, signum):
    record.fault += f" ({signal.Signals(signum).name})"
    output = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(output)],
        env=env,
        start_new_session=True,
        stderr=subprocess.DEVNULL,
    )
    wait_for(lambda: any(output.glob("chunk-*")))
    workers = children(driver.pid)
    record.start()
    driver.send_signal(signum)  # the driver only, as a scheduler would
    code = driver.wait(30)
    record.failed()
    assert code != 0
    wait_for(lambda: not any(alive(pid) for pid in workers), 10)
    assert not (output / "index.json").exists()
    assert not list(output.glob("chunk-*"))
    assert not (output / ".litdata.lock").exists()
    record(f"exit status {code}; workers stopped, partial output and lock removed")


@pytest.mark.fault("the optimize driver interrupted while it forks its workers")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_the_workers_are_forked_is_not_lost(tmp_path, record, signum):
    record.fault += f" ({signal.Signals(signum).name})"
    output = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    record.start()
    driver = subprocess.run(
        [sys.executable, "-c", SIGNAL_WHILE_FORKING, str(output), str(int(signum))],
        env=env,
        start_new_session=True,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    record.failed()
    expected = -signal.SIGINT if signum == signal.SIGINT else 128 + signal.SIGTERM
    assert driver.returncode == expected, driver.stderr[-2000:]
    assert "Exception ignored" not in driver.stderr
    assert not (output / "index.json").exists()
    assert not list(output.glob("chunk-*"))
    assert not (output / ".litdata.lock").exists()
    record(f"exit status {driver.returncode} once the workers are forked; output and lock removed")
