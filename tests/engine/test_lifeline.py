"""``Lifeline`` on its own, with real processes: a worker never outlives its parent."""

import os
import pickle
import subprocess
import sys
from functools import partial

from support.helpers import leaving_no_process, session_processes, wait_for

from litdata.engine.lifeline import ORPHANED_EXIT_CODE, Lifeline

# The parent starts the worker and exits at once; the worker takes the lifeline only later.
PARENT = """
import os, subprocess, sys
subprocess.Popen([sys.executable, "-c", sys.argv[1], str(os.getpid()), sys.argv[2]])
"""
WORKER = """
import os, sys, time
from pathlib import Path
from litdata.engine.lifeline import Lifeline
parent, markers = int(sys.argv[1]), Path(sys.argv[2])
(markers / "worker").write_text(str(os.getpid()))
while os.getppid() == parent:  # until the parent is gone
    time.sleep(0.01)
Lifeline(parent).hold()
(markers / "survived").touch()
"""


def test_a_worker_whose_parent_died_before_it_held_on_exits_at_once(tmp_path):
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, WORKER, str(tmp_path)], start_new_session=True
    )
    with leaving_no_process(parent):
        wait_for((tmp_path / "worker").exists, what="the worker's start")
        # The parent is a zombie now (not reaped yet): dead all the same.
        wait_for(lambda: not session_processes(parent.pid), timeout=10, what="the worker's exit")
        assert not (tmp_path / "survived").exists()


def test_a_worker_whose_parent_is_gone_exits_with_the_orphans_code():
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    held = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from litdata.engine.lifeline import Lifeline; "
            f"Lifeline({gone.pid}).hold(); print('survived')",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert held.returncode == ORPHANED_EXIT_CODE
    assert "survived" not in held.stdout


def test_a_lifeline_made_in_the_main_thread_pickles_with_the_users_init(tmp_path):
    lifeline = pickle.loads(pickle.dumps(Lifeline.to_this_thread(then=partial(_touch, tmp_path))))
    assert lifeline.parent == os.getpid()
    assert lifeline.by_lasting_thread
    assert lifeline.then is not None
    lifeline.then("init")
    assert (tmp_path / "init").exists()


def _touch(directory, name):
    (directory / name).touch()
