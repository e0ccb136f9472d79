"""Opening a dataset whose per-writer indexes were never merged completes it, as LitData does.

Once (under the output lock) when several processes open it at once, never over a writer at
work or a run that did not finish, and in memory only for read-only folders and remote
datasets.
"""

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.cli_process import cli_env

import litdata as ld
from litdata.core.errors import DatasetNotFoundError, OutputLockedError
from litdata.engine.boundary.resolve import resolve
from litdata.engine.native.output_lock import LOCK_FILENAME, OutputLock
from litdata.engine.native.rank_indexes import merge_rank_indexes
from litdata.engine.native.writer import ChunkWriter

EXPECTED = [rank * 100 + i for rank in range(3) for i in range(7)]


def _unmerged(folder):
    """Three writers' chunks and per-writer indexes, and no ``index.json``."""
    for rank in range(3):
        writer = ChunkWriter(folder, chunk_size=3, rank=rank)
        for i in range(7):
            writer.add({"id": rank * 100 + i})
        writer.close()
    assert not (Path(folder) / "index.json").exists()
    return Path(folder)


def _ids(path, **options):
    return [sample["id"] for sample in ld.StreamingDataset(str(path), **options)]


def test_opening_merges_the_writers_indexes_once_and_for_all(tmp_path):
    folder = _unmerged(tmp_path / "ds")
    assert _ids(folder) == EXPECTED
    assert (folder / "index.json").exists()
    assert not list(folder.glob("*.index.json"))  # merged: the per-writer files are gone
    assert not (folder / LOCK_FILENAME).exists()
    published = (folder / "index.json").read_bytes()
    assert _ids(folder) == EXPECTED
    assert (folder / "index.json").read_bytes() == published  # idempotent


def _open_at_once(folder, start, results):
    start.wait()
    dataset = ld.StreamingDataset(str(folder))
    results.put((len(dataset), dataset._reader.index.updated_at))


def test_processes_opening_it_at_once_merge_it_once(tmp_path):
    folder = _unmerged(tmp_path / "ds")
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(6), context.Queue()
    processes = [
        context.Process(target=_open_at_once, args=(folder, start, results)) for _ in range(6)
    ]
    for process in processes:
        process.start()
    seen = [results.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    published = json.loads((folder / "index.json").read_text())
    assert seen == [(21, published["updated_at"])] * 6  # one index, published once
    assert _ids(folder) == EXPECTED


def test_a_writer_at_work_is_not_merged_over(tmp_path):
    folder = _unmerged(tmp_path / "ds")
    lock = OutputLock(resolve(folder), "optimize")
    lock.acquire()
    try:
        with pytest.raises(OutputLockedError, match=r"has no index\.json yet: optimize \(PID"):
            ld.StreamingDataset(str(folder))
    finally:
        lock.release()
    assert not (folder / "index.json").exists()
    assert _ids(folder) == EXPECTED  # the writer is gone: now it completes


def test_what_an_unfinished_run_left_is_refused_until_asked_for(tmp_path):
    folder = _unmerged(tmp_path / "ds")
    lock = OutputLock(resolve(folder), "optimize")
    lock.acquire()
    lock.release(keep_marker=True)  # as a killed or failed run leaves it
    with pytest.raises(DatasetNotFoundError, match="did not finish") as caught:
        ld.StreamingDataset(str(folder))
    assert "litdata.complete_dataset(" in str(caught.value)
    assert not (folder / "index.json").exists()
    ld.complete_dataset(folder)
    assert _ids(folder) == EXPECTED
    assert not (folder / LOCK_FILENAME).exists()


def test_a_remote_dataset_is_merged_in_memory_and_left_as_it_is(tmp_path, s3_server):
    folder = _unmerged(tmp_path / "ds")
    url = s3_server.url(s3_server.new_bucket(), "ds")
    remote = resolve(url, storage_options=s3_server.storage_options)
    for path in folder.iterdir():
        remote.storage.upload(str(path), remote.join(path.name))
    before = sorted(remote.storage.list(remote.url))
    options = {"storage_options": s3_server.storage_options, "cache_dir": str(tmp_path / "c")}
    assert _ids(url, **options) == EXPECTED
    assert sorted(remote.storage.list(remote.url)) == before  # nothing written, nothing removed
    assert _ids(url, **options) == EXPECTED


READ_ONLY = textwrap.dedent(
    """
    import json, sys
    import litdata as ld
    dataset = ld.StreamingDataset(sys.argv[1], cache_dir=sys.argv[2])
    print(json.dumps([sample["id"] for sample in dataset]))
    """
)


def test_a_read_only_folder_is_merged_in_memory(tmp_path):
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to mount a folder read-only")
    folder = _unmerged(tmp_path / "ds")
    before = sorted(os.listdir(folder))
    script = tmp_path / "read.py"
    script.write_text(READ_ONLY)
    command = (
        f"mount --bind -o ro {folder} {folder} && "
        f"exec {sys.executable} {script} {folder} {tmp_path / 'cache'}"
    )
    result = subprocess.run(
        ["unshare", "-m", "sh", "-c", command],
        env=cli_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if result.returncode and "mount" in result.stderr and "permission" in result.stderr.lower():
        pytest.skip(f"cannot mount read-only here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == EXPECTED
    assert "is read-only: its 3 per-writer indexes are merged in memory" in result.stderr
    assert sorted(os.listdir(folder)) == before


def test_many_writers_indexes_are_fetched_and_removed_several_at_once(tmp_path, link):
    # 12 writers on a store 30 ms away: their per-writer files must not cost 24 round trips
    # one after the other. Seen in the link's log: requests overlap.
    folder = tmp_path / "ds"
    for rank in range(12):
        writer = ChunkWriter(folder, chunk_size=3, rank=rank)
        writer.add({"id": rank})
        writer.close()
    url = link.url(link.new_bucket(), "ds")
    direct = resolve(url, storage_options=link.store.storage_options)
    for path in folder.iterdir():
        direct.storage.upload(str(path), direct.join(path.name))
    link.proxy.reset_log()
    merge_rank_indexes(resolve(url, storage_options=link.storage_options))
    merged = ld.StreamingDataset(url, storage_options=link.storage_options)
    assert sorted(sample["id"] for sample in merged) == list(range(12))

    def most_at_once(method):
        spans = [
            (r.started, r.answered)
            for r in link.log
            if r.method == method and r.path.split("?")[0].endswith(".index.json")
        ]
        return max(sum(s < end and start < e for s, e in spans) for start, end in spans)

    assert most_at_once("GET") > 1
    assert most_at_once("DELETE") > 1
