"""Faults of writers: two at once, foreign folders, stale locks, read-only outputs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import fns
from support.helpers import wait_for

import litdata as ld
from litdata.core.errors import DatasetExistsError, OutputLockedError

TESTS = Path(__file__).resolve().parents[1]
WRITER = """
import sys
from support import fns
import litdata as ld
ld.optimize(fns.slow_record, range(int(sys.argv[2])), sys.argv[1], chunk_size=10,
            num_workers=2, keep_data_ordered=True, verbose=False)
"""


def _start_writer(output: Path, count: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(output), str(count)],
        env=env,
        start_new_session=True,
    )


def _ids(dataset):
    reader = ld.DatasetReader(dataset)
    return [reader[i]["id"] for i in range(len(reader))]


def _fns():
    return fns


@pytest.mark.fault("two optimize runs into one output")
def test_a_second_writer_fails_at_once(tmp_path, record):
    output = tmp_path / "out"
    first = _start_writer(output, 300)
    wait_for(lambda: (output / ".litdata.lock").exists() and any(output.glob("chunk-*")))
    record.start()
    with pytest.raises(OutputLockedError, match=rf"is being written by optimize \(PID {first.pid}"):
        ld.optimize(_fns().record, range(50), str(output), chunk_size=10, verbose=False)
    record.failed()
    assert first.wait(60) == 0
    ids = _ids(output)
    record(
        "OutputLockedError naming the holder; the first run's dataset is whole",
        lost=len(set(range(300)) - set(ids)),
        duplicated=len(ids) - len(set(ids)),
    )
    assert not (output / ".litdata.lock").exists()


@pytest.mark.fault("a killed writer's lock")
def test_the_lock_of_a_killed_writer_is_recovered(tmp_path, record):
    output = tmp_path / "out"
    writer = _start_writer(output, 300)
    wait_for(lambda: any(output.glob("chunk-*")))
    os.killpg(writer.pid, 9)
    writer.wait()
    assert (output / ".litdata.lock").exists()
    ld.optimize(_fns().record, range(50), str(output), chunk_size=10, verbose=False)
    ids = _ids(output)
    record(
        "the next run takes the stale lock and removes the dead run's chunks",
        lost=len(set(range(50)) - set(ids)),
        duplicated=len(ids) - 50,
    )


@pytest.mark.fault("a non-empty folder that is not a dataset")
def test_a_foreign_folder_is_refused(tmp_path, record):
    output = tmp_path / "papers"
    output.mkdir()
    (output / "thesis.tex").write_text("years of work")
    (output / "chunk-0-0.bin").write_text("my own file, named like a chunk")
    record.start()
    with pytest.raises(DatasetExistsError, match=r"not part of a litdata dataset \(chunk-0-0.bin"):
        ld.optimize(_fns().record, range(20), str(output), chunk_size=10, verbose=False)
    record.failed()
    assert (output / "chunk-0-0.bin").read_text() == "my own file, named like a chunk"
    assert sorted(os.listdir(output)) == ["chunk-0-0.bin", "thesis.tex"]
    # overwrite removes only what it recognises as dataset files
    ld.optimize(
        _fns().record, range(20), str(output), chunk_size=10, mode="overwrite", verbose=False
    )
    assert (output / "thesis.tex").read_text() == "years of work"
    lost = len(set(range(20)) - set(_ids(output)))
    record("DatasetExistsError listing the files; nothing written or removed", lost=lost)


@pytest.mark.fault("a read-only output folder")
def test_a_read_only_output(tmp_path, record):
    if os.geteuid() == 0:
        # root ignores permission bits: use a read-only bind mount instead.
        output = tmp_path / "ro"
        output.mkdir()
        mount = subprocess.run(
            ["mount", "--bind", "-o", "ro", str(output), str(output)],
            capture_output=True,
            check=False,
        )
        if mount.returncode != 0:
            pytest.skip("cannot make a read-only folder here")
    else:
        output = tmp_path / "ro"
        output.mkdir()
        output.chmod(0o555)
    try:
        record.start()
        with pytest.raises(OSError, match=r"Read-only file system|Permission denied") as caught:
            ld.optimize(_fns().record, range(20), str(output), chunk_size=10, verbose=False)
        record.failed()
        assert str(output) in str(caught.value)
    finally:
        subprocess.run(["umount", str(output)], capture_output=True, check=False)
    record("OSError naming the folder, before any work")
