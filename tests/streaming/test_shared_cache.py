"""One cache shared by many workers and several processes: each chunk is fetched once, no
reader ever sees a partial chunk, and a killed download leaves nothing a reader would use."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from support.helpers import session_processes, wait_for

import litdata as ld
from litdata.core.registry import kinds

JOB = """
import json, sys
import litdata as ld
from litdata.core.registry.manager import get_plugin_manager

class Count:
    fetched = []
    @ld.hookimpl
    def litdata_chunk_downloaded(self, url, path, nbytes, seconds):
        Count.fetched.append(url.rsplit("/", 1)[-1])

get_plugin_manager().register(Count())
ds = ld.StreamingDataset(sys.argv[1], cache_dir=sys.argv[2], shuffle=True, seed=int(sys.argv[3]))
ids = sorted(int(sample["id"]) for sample in ds)
print(json.dumps({"ids": ids, "fetched": Count.fetched}))
"""


@pytest.fixture
def compressed(tmp_path):
    samples = ({"id": i, "x": np.full(3000, i % 256, dtype=np.uint8)} for i in range(600))
    return ld.write_dataset(samples, tmp_path / "ds", chunk_size=50, compression="zstd")


def test_two_jobs_share_one_cache_and_fetch_each_chunk_once(compressed, tmp_path):
    cache = tmp_path / "cache"
    jobs = [
        subprocess.Popen(
            [sys.executable, "-c", JOB, str(compressed), str(cache), str(seed)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2, 3)
    ]
    results = [json.loads(job.communicate(timeout=120)[0]) for job in jobs]
    for result in results:
        assert result["ids"] == list(range(600))
    fetched = [name for result in results for name in result["fetched"]]
    assert sorted(fetched) == sorted(f"chunk-0-{i}.zstd.bin" for i in range(12))


BACKEND = """
import os, shutil, time

class Folder:
    \"\"\"``folder:///abs/path``: a download-only backend over a local folder.\"\"\"

    name = "folder"
    pause = None  # (marker folder, seconds): stop half way through each download

    def __init__(self, storage_options=None):
        pass

    def _path(self, url):
        return url[len("folder://"):]

    def download(self, url, local_path):
        with open(self._path(url), "rb") as source:
            data = source.read()
        with open(local_path, "wb") as handle:
            handle.write(data[: len(data) // 2])
            handle.flush()
            if Folder.pause is not None and url.endswith(".bin"):
                markers, seconds = Folder.pause
                open(os.path.join(markers, f"downloading-{os.getpid()}"), "w").close()
                time.sleep(seconds)
            handle.write(data[len(data) // 2 :])

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

SLOW = (
    BACKEND
    + """
import sys
import litdata as ld
from litdata.core.registry import kinds

Folder.pause = (sys.argv[2], 60)
kinds.storage.register("folder", Folder)
ds = ld.StreamingDataset("folder://" + sys.argv[1], cache_dir=sys.argv[3])
loader = ld.StreamingDataLoader(ds, batch_size=10, num_workers=2)
for batch in loader:
    pass
"""
)


@pytest.mark.usefixtures("fresh_plugins")
def test_a_download_killed_half_way_is_never_used(tmp_path):
    dataset = ld.write_dataset(({"id": i} for i in range(100)), tmp_path / "ds", chunk_size=25)
    markers, cache = tmp_path / "markers", tmp_path / "cache"
    markers.mkdir()
    job = subprocess.Popen(
        [sys.executable, "-c", SLOW, str(dataset), str(markers), str(cache)],
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not list(markers.iterdir()) and time.monotonic() < deadline:
            assert job.poll() is None, "the reading job died"
            time.sleep(0.05)
        downloading = [int(path.name.split("-")[1]) for path in markers.iterdir()]
        assert downloading, "no download started"
        os.kill(downloading[0], signal.SIGKILL)  # a loader worker, in the middle of a chunk
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    # SIGKILL takes a moment to end a process: until then its temporary file is still its own.
    wait_for(lambda: not session_processes(job.pid), 10, "the end of the killed job's workers")
    assert list(cache.rglob(".chunk-*")), "the killed download left its temporary file"
    assert not list(cache.rglob("chunk-*.bin"))  # nothing was published
    # The next reader of the same dataset and cache gets every sample right, and the
    # partial download of the dead process is gone.
    namespace: dict = {}
    exec(BACKEND, namespace)  # noqa: S102  # the backend the killed job used, without its pause
    kinds.storage.register("folder", namespace["Folder"])
    ds = ld.StreamingDataset(f"folder://{dataset}", cache_dir=str(cache))
    assert sorted(int(sample["id"]) for sample in ds) == list(range(100))
    assert not list(cache.rglob(".chunk-*"))
