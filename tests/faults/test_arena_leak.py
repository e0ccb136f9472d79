"""The training process SIGKILLed (the OOM killer) while its workers fill shared-memory slots.

It cannot remove its slot files; the next loader epoch on the machine must, leaving nothing
of the dead process in ``/dev/shm``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import forge
from support.helpers import alive, children, wait_for

import litdata as ld
from litdata.streaming.workers.arena.slots import SHM_DIR, available

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(not available(), reason="no /dev/shm"),
]

TESTS = Path(__file__).resolve().parents[1]
TRAINER = """
import sys, time
import litdata as ld
loader = ld.StreamingDataLoader(
    ld.StreamingDataset(sys.argv[1]), batch_size=10, num_workers=2, transport="arena",
    prefetch_factor=4,
)
kept = []
for batch in loader:
    kept.append(batch)
    print("batch", flush=True)
    time.sleep(60)
"""


def _files_of(pid: int) -> list[str]:
    return sorted(path.name for path in SHM_DIR.glob(f"litdata-arena-{pid}-*"))


@pytest.mark.fault("training process and its workers SIGKILLed while they fill arena slots")
def test_slots_of_a_killed_trainer_are_swept_by_the_next_run(tmp_path, record):
    folder = forge.dataset(tmp_path / "ds")
    trainer = subprocess.Popen(
        [sys.executable, "-c", TRAINER, str(folder)],
        cwd=TESTS,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert trainer.stdout is not None
        assert trainer.stdout.readline().strip() == "batch"
        workers = children(trainer.pid)
        wait_for(lambda: len(_files_of(trainer.pid)) >= 2, what="workers filling slots")
        # The whole tree at once, as the OOM killer or a lost node does: workers that outlive
        # their trainer clean up their own slots (a race the test must not depend on).
        for pid in [*workers, trainer.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        trainer.wait(timeout=30)
    finally:
        if trainer.poll() is None:
            trainer.kill()
            trainer.wait(timeout=30)
        if trainer.stdout is not None:
            trainer.stdout.close()
    wait_for(lambda: not any(alive(pid) for pid in workers), what="the workers ending")
    leaked = _files_of(trainer.pid)
    assert leaked, "the kill left nothing: the test did not reach the fault"
    record.start()
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(str(folder)), batch_size=50, num_workers=2, transport="arena"
    )
    seen = [int(i) for batch in loader for i in batch["id"]]
    record.failed()
    assert _files_of(trainer.pid) == []
    record(
        f"the next run's epoch removed the {len(leaked)} files of the dead process",
        lost=forge.COUNT - len(set(seen)),
        duplicated=len(seen) - len(set(seen)),
    )
