"""Writers racing for one output's lock: every writer refused names the one that holds it.

Real processes, released together by a barrier, each try to take the lock of the same local
output, many rounds over: one wins, and every other one's ``OutputLockedError`` names the
winner's PID and host (never ``PID None``, nor the dead writer whose stale lock the winner took
over).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from litdata.core.errors import OutputLockedError
from litdata.engine.boundary.resolve import resolve
from litdata.engine.native.output_lock import LOCK_FILENAME, OutputLock

RACERS = 8
ROUNDS = 60
#: Seconds a racer waits for the others at each step before the test fails (not hangs).
PATIENCE = 60


def _race(outputs: list[str], barrier: threading.Barrier, results: Any, unnamed: bool) -> None:
    """One racer: for each output, try to take its lock at the same instant as the others.

    Without ``unnamed``, the racer runs as where no unnamed files can be made (NFS, macOS):
    it creates the lock file, then writes its record.
    """
    if not unnamed and hasattr(os, "O_TMPFILE"):
        del os.O_TMPFILE
    for output in outputs:
        barrier.wait()
        lock = OutputLock(resolve(output), "optimize")
        try:
            lock.acquire()
        except OutputLockedError as error:
            results.put((output, "refused", str(error), False))
            barrier.wait()  # every racer has tried
        else:
            results.put((output, "won", os.getpid(), lock.found_stale))
            barrier.wait()
            lock.release()
        barrier.wait()  # released: the next round starts from no holder


def _makes_unnamed_files(folder: Path) -> bool:
    try:
        os.close(os.open(folder, os.O_TMPFILE | os.O_RDWR))
    except (AttributeError, OSError):
        return False
    return True


def _dead_pid() -> int:
    """The PID of a process of this host that has exited."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@pytest.mark.fault("writers racing for one output's lock")
@pytest.mark.parametrize("unnamed", [True, False], ids=["unnamed lock files", "named"])
def test_every_writer_refused_names_the_holder(tmp_path: Path, record: Any, unnamed: bool) -> None:
    if not unnamed:
        record.fault += " (no O_TMPFILE: NFS, macOS)"
    elif not _makes_unnamed_files(tmp_path):
        pytest.skip(f"the filesystem of {tmp_path} makes no unnamed (O_TMPFILE) files")
    outputs = [tmp_path / f"out-{n}" for n in range(ROUNDS)]
    stale = outputs[ROUNDS // 2 :]  # a dead writer's lock is there first: the winner takes it
    dead = {"host": socket.gethostname(), "pid": _dead_pid(), "command": "optimize", "since": 0}
    for output in outputs:
        output.mkdir()
    for output in stale:
        (output / LOCK_FILENAME).write_text(json.dumps(dead))
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(RACERS, timeout=PATIENCE)
    results = context.Queue()
    racers = [
        context.Process(
            target=_race, args=([str(path) for path in outputs], barrier, results, unnamed)
        )
        for _ in range(RACERS)
    ]
    for racer in racers:
        racer.start()
    try:
        rows = [results.get(timeout=PATIENCE) for _ in range(RACERS * ROUNDS)]
    finally:
        for racer in racers:
            racer.join(PATIENCE)
            if racer.is_alive():
                racer.kill()
    assert [racer.exitcode for racer in racers] == [0] * RACERS

    host = socket.gethostname()
    wrong = 0
    for output in outputs:
        round_rows = [row for row in rows if row[0] == str(output)]
        winners = [row for row in round_rows if row[1] == "won"]
        assert len(winners) == 1, round_rows
        _, _, pid, took_over = winners[0]
        assert took_over == (output in stale)
        named = f"(PID {pid} on host {host},"
        wrong += sum(1 for row in round_rows if row[1] == "refused" and named not in row[2])
        assert not (output / LOCK_FILENAME).exists()
    refused = (RACERS - 1) * ROUNDS
    record(
        f"{ROUNDS} rounds of {RACERS} writers: one won each, {refused - wrong} of {refused} "
        f"refusals named it",
        wrong=wrong,
    )


#: A writer that takes the lock, then writes its record only after a while (a litdata writer
#: descheduled between the two, where no unnamed file can be made, or taking over a stale lock).
SLOW_HOLDER = """
import fcntl, json, os, socket, sys, time
descriptor = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(descriptor, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
record = {"host": socket.gethostname(), "pid": os.getpid(), "command": "optimize", "since": 1}
os.ftruncate(descriptor, 0)
os.pwrite(descriptor, json.dumps(record).encode(), 0)
sys.stdin.read()
"""


@pytest.mark.fault("a writer refused while the holder writes its record")
@pytest.mark.parametrize("stale", [False, True], ids=["new lock", "stale lock taken over"])
@pytest.mark.parametrize("delay", [0.5, 3.0], ids=["record late", "record never"])
def test_a_writer_refused_before_the_record_is_written_waits_for_it(
    tmp_path: Path, record: Any, stale: bool, delay: float
) -> None:
    record.fault += f" ({'stale' if stale else 'new'} lock, record {delay:g} s late)"
    path = tmp_path / LOCK_FILENAME
    if stale:
        path.write_text(json.dumps({"host": socket.gethostname(), "pid": _dead_pid()}))
    holder = subprocess.Popen(
        [sys.executable, "-c", SLOW_HOLDER, str(path), str(delay)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "locked\n"
        record.start()
        named = rf"PID {holder.pid} on host" if delay < 1 else r"lock record is empty|PID \d+"
        with pytest.raises(OutputLockedError, match=named) as refused:
            OutputLock(resolve(str(tmp_path)), "optimize").acquire()
        record.failed()
    finally:
        holder.communicate("")
    assert record.seconds is not None
    if delay < 1:
        assert record.seconds >= delay * 0.8  # it waited for the record
    else:
        assert 1.5 < record.seconds < 15  # for a bounded while, then says what it read
        assert f"PID {holder.pid}" not in str(refused.value)
    holder_named = str(refused.value).split(" is being written by ", 1)[1].split(": ")[0]
    record(f"refused after {record.seconds:.1f} s naming {holder_named}")
