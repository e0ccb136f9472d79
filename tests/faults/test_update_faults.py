"""dataset_update killed (``kill -9``) at every step: the old dataset or the new, never a mix."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support import fns

import litdata as ld

TESTS = Path(__file__).resolve().parents[1]
UPDATED = {3: -3, 40: -40, 90: -90}  # three samples in three different chunks
#: Kill the updater right after (or before) the n-th call of a step of the commit.
UPDATER = """
import os, signal, sys
import litdata as ld
from litdata.processing import update as module

step, when, count = sys.argv[2], sys.argv[3], int(sys.argv[4])
calls = 0
target = module.DatasetUpdate if step == "_rewrite" else module
original = getattr(target, step)

def killing(*args, **kwargs):
    global calls
    calls += 1
    if when == "before" and calls == count:
        os.kill(os.getpid(), signal.SIGKILL)
    result = original(*args, **kwargs)
    if when == "after" and calls == count:
        os.kill(os.getpid(), signal.SIGKILL)
    return result

setattr(target, step, killing)
with ld.dataset_update(sys.argv[1]) as update:
    for i, value in {3: -3, 40: -40, 90: -90}.items():
        update[f"user-{i}"] = {"uid": f"user-{i}", "value": value}
    update.commit()
"""
STEPS = [
    ("_rewrite", "after", 1),  # one new chunk written aside
    ("_rewrite", "after", 3),  # all written aside
    ("_install", "after", 1),  # one new chunk moved into the dataset
    ("_install", "after", 3),  # all moved in, index not yet published
    ("publish_index", "before", 1),
    ("publish_index", "after", 1),  # committed, scratch not yet removed, lock still held
]


def _values(path: Path) -> dict[int, int]:
    reader = ld.DatasetReader(path, verify=True)  # every chunk checked against its checksum
    return {int(reader[i]["uid"][5:]): reader[i]["value"] for i in range(len(reader))}


@pytest.mark.parametrize(("step", "when", "count"), STEPS, ids=str)
@pytest.mark.fault("dataset_update killed (kill -9) mid-commit")
def test_a_killed_update_leaves_the_old_or_the_new_dataset(tmp_path, record, step, when, count):
    path = tmp_path / "ds"
    ld.optimize(
        fns.keyed,
        list(range(100)),
        str(path),
        chunk_size=16,
        key_fn=fns.uid,
        num_workers=1,
        verbose=False,
    )
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    result = subprocess.run(
        [sys.executable, "-c", UPDATER, str(path), step, when, str(count)],
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == -signal.SIGKILL
    values = _values(path)
    old = {i: i for i in range(100)}
    new = old | UPDATED
    committed = values == new
    wrong = sum(values.get(i) not in (old[i], new[i]) for i in old)
    mixed = 0 if values in (old, new) else len(UPDATED)  # some updated samples, not all
    expect_new = step == "publish_index" and when == "after"
    assert committed == expect_new
    with ld.dataset_update(path) as update:  # the dead updater's lock and files are recovered
        update["user-5"] = {"uid": "user-5", "value": -5}
        update.commit()
    assert _values(path) == (new if expect_new else old) | {5: -5}
    assert not (path / ".litdata-update").exists()
    record(
        f"{step} {when} call {count}: the {'new' if committed else 'old'} dataset, every chunk "
        f"checksum-valid; the next update proceeds",
        wrong=wrong + mixed,
        lost=len(old) - len(values),
    )
