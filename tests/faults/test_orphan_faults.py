"""kill -9 of the training process: its DataLoader workers never outlive it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.helpers import (
    leaving_no_process,
    session_processes,
    wait_for,
    wait_until_writing_to_a_pipe,
)

import litdata as ld

TRAINER = Path(__file__).resolve().parents[1] / "streaming" / "workers" / "orphan_trainer.py"


@pytest.fixture(scope="module")
def ids(tmp_path_factory):
    path = tmp_path_factory.mktemp("ids")
    ld.write_dataset(({"id": i} for i in range(2000)), path, chunk_size=100)
    return path


@pytest.mark.fault("the training process killed (kill -9), 2 loader workers")
@pytest.mark.parametrize(
    ("context", "mode", "state"),
    [("fork", "full", "blocked on a full result pipe"), ("spawn", "slow", "inside a transform")],
)
def test_loader_workers_exit_with_the_trainer(ids, tmp_path, record, context, mode, state):
    record.fault += f", {context} workers {state}"
    markers = tmp_path / "markers"
    markers.mkdir()
    trainer = subprocess.Popen(
        [sys.executable, str(TRAINER), str(ids), str(markers), context, mode],
        start_new_session=True,
    )
    with leaving_no_process(trainer):
        prefix = "worker" if mode == "full" else "decoding"
        wait_for(lambda: len(list(markers.glob(f"{prefix}-*"))) == 2, what="both workers")
        if mode == "full":
            workers = [int(path.name.rsplit("-", 1)[1]) for path in markers.glob("worker-*")]
            wait_until_writing_to_a_pipe(workers)
        record.start()
        trainer.kill()
        trainer.wait()
        wait_for(lambda: not session_processes(trainer.pid), timeout=10, what="the workers' exit")
        record.failed()
    record("every worker exited (none left in the session)")
