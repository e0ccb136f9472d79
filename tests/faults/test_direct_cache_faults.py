"""A process killed (``kill -9``) while a chunk lands in its memory (``LITDATA_DIRECT_CACHE=1``).

The chunk's bytes live in the dead process's memory only, so the cache holds nothing of it: no
partial file is published, and the next reader fetches it again and gets every sample right.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from support.helpers import session_processes, wait_for

import litdata as ld
from litdata.core.registry import kinds
from litdata.engine.cache.memory import memory_supported

pytestmark = [
    pytest.mark.usefixtures("fresh_plugins"),
    pytest.mark.skipif(not memory_supported(), reason="no memfd_create here"),
]

BACKEND = """
import os, shutil, time

class Ranged:  # ranged:///abs/path: a local folder read in byte ranges, like an object store

    name = "ranged"
    pause = None  # a marker folder: stall the chunks' later parts, after saying so there

    def __init__(self, storage_options=None):
        pass

    def _path(self, url):
        return url[len("ranged://"):]

    def read_range(self, url, start, end):
        if Ranged.pause is not None and url.endswith(".bin") and start > 0:
            open(os.path.join(Ranged.pause, f"landing-{os.getpid()}"), "w").close()
            time.sleep(60)
        with open(self._path(url), "rb") as source:
            source.seek(start)
            return source.read(end - start)

    def download(self, url, local_path):
        shutil.copyfile(self._path(url), local_path)

    def upload(self, local_path, url):
        shutil.copyfile(local_path, self._path(url))

    def exists(self, url):
        return os.path.isfile(self._path(url))

    def list(self, url):
        folder = self._path(url)
        return sorted(os.listdir(folder)) if os.path.isdir(folder) else []

    def delete(self, url):
        if os.path.exists(self._path(url)):
            os.remove(self._path(url))
"""

JOB = (
    BACKEND
    + """
import sys
import litdata as ld
from litdata.core.registry import kinds

Ranged.pause = sys.argv[2]
kinds.storage.register("ranged", Ranged)
ds = ld.StreamingDataset("ranged://" + sys.argv[1], cache_dir=sys.argv[3])
for sample in ds:
    pass
"""
)


def _memory_chunks(pid: int) -> int:
    """The chunks process ``pid`` holds in memory (its ``memfd``s named ``chunk-...``)."""
    found = 0
    for name in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):  # a descriptor closed meanwhile
            found += os.readlink(f"/proc/{pid}/fd/{name}").startswith("/memfd:chunk-")
    return found


@pytest.mark.fault("kill -9 of a process whose chunk lands in its memory (direct cache)")
def test_a_process_killed_while_its_chunk_lands_leaves_nothing_used(tmp_path, monkeypatch, record):
    monkeypatch.setenv("LITDATA_DIRECT_CACHE", "1")
    samples = ({"id": i, "blob": np.full(16_000, i % 251, dtype=np.uint8)} for i in range(400))
    dataset = ld.write_dataset(samples, tmp_path / "ds", chunk_bytes="4MB")  # ranged parts
    markers, cache = tmp_path / "markers", tmp_path / "cache"
    markers.mkdir()
    job = subprocess.Popen(
        [sys.executable, "-c", JOB, str(dataset), str(markers), str(cache)],
        start_new_session=True,
    )
    try:
        wait_for(lambda: list(markers.iterdir()) or job.poll() is not None, 60, "a landing")
        assert job.poll() is None, "the reading job died"
        assert _memory_chunks(job.pid) >= 1  # the chunk's first part is in its memory
        record.start()
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    wait_for(lambda: not session_processes(job.pid), 10, "the end of the killed job")
    assert not list(cache.rglob("chunk-*.bin"))  # nothing of the chunk was published
    assert not list(cache.rglob(".chunk-*"))  # nor begun: its bytes were in memory only
    namespace: dict = {}
    exec(BACKEND, namespace)  # noqa: S102  # the backend the killed job used, without its pause
    kinds.storage.register("ranged", namespace["Ranged"])
    read = list(ld.StreamingDataset(f"ranged://{dataset}", cache_dir=str(cache)))
    ids = [int(s["id"]) for s in read]
    wrong = sum(int(not (s["blob"] == int(s["id"]) % 251).all()) for s in read)
    assert sorted(ids) == list(range(400))
    assert wrong == 0
    record(
        "the dead process's chunk was nowhere in the cache; the next reader fetched it again",
        lost=400 - len(set(ids)),
        duplicated=len(ids) - len(set(ids)),
        wrong=wrong,
    )
