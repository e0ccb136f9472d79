"""Killing the training process for real: its DataLoader workers never outlive it.

Each test runs ``orphan_trainer.py`` in a session of its own, kills it with SIGKILL while its
workers are blocked somewhere, and expects nothing of that session to be left running.
"""

import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import pytest
from support.helpers import (
    leaving_no_process,
    session_processes,
    wait_for,
    wait_until_writing_to_a_pipe,
)

import litdata as ld

TRAINER = Path(__file__).with_name("orphan_trainer.py")
EXIT_SECONDS = 10.0


@pytest.fixture(scope="module")
def ids(tmp_path_factory):
    """2,000 samples ``{"id": i}`` in chunks of 100."""
    path = tmp_path_factory.mktemp("ids")
    ld.write_dataset(({"id": i} for i in range(2000)), path, chunk_size=100)
    return path


def _workers(markers, prefix="worker"):
    return [int(path.name.rsplit("-", 1)[1]) for path in markers.glob(f"{prefix}-*")]


def _train(ids, markers, context, mode):
    markers.mkdir()
    return subprocess.Popen(
        [sys.executable, str(TRAINER), str(ids), str(markers), context, mode],
        start_new_session=True,
    )


def _kill_and_expect_no_orphans(trainer):
    trainer.kill()
    trainer.wait()
    wait_for(
        lambda: not session_processes(trainer.pid),
        timeout=EXIT_SECONDS,
        what="the workers' exit",
    )


@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
def test_workers_blocked_on_a_full_result_pipe_exit(ids, tmp_path, context):
    markers = tmp_path / "markers"
    trainer = _train(ids, markers, context, "full")
    with leaving_no_process(trainer):
        wait_for((markers / "ready").exists, what="the first batch")
        wait_for(lambda: len(_workers(markers)) == 2, what="both workers")
        workers = _workers(markers)
        wait_until_writing_to_a_pipe(workers)
        _kill_and_expect_no_orphans(trainer)


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_workers_inside_a_slow_transform_exit(ids, tmp_path, context):
    markers = tmp_path / "markers"
    trainer = _train(ids, markers, context, "slow")
    with leaving_no_process(trainer):
        wait_for(lambda: len(_workers(markers, "decoding")) == 2, what="slow transforms")
        _kill_and_expect_no_orphans(trainer)


def test_workers_started_by_an_ended_thread_live_on_then_exit(ids, tmp_path):
    # Linux's parent-death signal follows the thread that started a worker, and that thread
    # has ended here: the workers must go on running, and end by their watchdog.
    markers = tmp_path / "markers"
    trainer = _train(ids, markers, "fork", "thread")
    with leaving_no_process(trainer):
        wait_for((markers / "ready").exists, what="the first batch")
        wait_for(lambda: len(_workers(markers)) == 2, what="both workers")
        time.sleep(0.5)
        workers = _workers(markers)
        assert set(workers) <= set(session_processes(trainer.pid))
        _kill_and_expect_no_orphans(trainer)


def test_an_iterator_made_by_an_ended_thread_delivers_its_epoch(ids):
    loader = ld.StreamingDataLoader(ld.StreamingDataset(ids), batch_size=100, num_workers=2)
    made = []

    def start():
        made.append(iter(loader))
        next(made[0])  # the workers start here, in this thread

    starter = threading.Thread(target=start)
    starter.start()
    starter.join()
    rest = sum(len(batch["id"]) for batch in made[0])
    assert rest == 2000 - 100


def _touch(directory, worker_id):
    (directory / f"init-{worker_id}").touch()


def test_the_users_worker_init_fn_still_runs(ids, tmp_path):
    init = partial(_touch, tmp_path)
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(ids), batch_size=100, num_workers=2, worker_init_fn=init
    )
    assert sum(len(batch["id"]) for batch in loader) == 2000
    assert sorted(path.name for path in tmp_path.glob("init-*")) == ["init-0", "init-1"]
    assert loader.worker_init_fn is init
