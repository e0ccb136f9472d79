"""Reading S3 through a realistic link (``LinkProxy`` in front of moto): parallel ranged parts,
throttling absorbed, the first batch before its chunk completes, one download per node.

Assertions count requests and look at the order of events, never at timing thresholds.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from support.gloo import run_ranks
from support.link_proxy import DEFAULT_LINK, LinkSettings, Logged
from support.links import Link

import litdata as ld
from litdata.core.errors import DatasetFormatError, DatasetNotFoundError
from litdata.engine.boundary.resolve import resolve
from litdata.engine.throttle import throttle_of

BLOB = 16_000


def _publish(link: Link, tmp_path: Path, count: int, chunk_bytes: str) -> tuple[str, list[dict]]:
    """A dataset of ``count`` samples of 16 KB on moto (written directly); its URL and chunks."""
    samples = ({"id": i, "blob": np.full(BLOB, i % 251, dtype=np.uint8)} for i in range(count))
    local = ld.write_dataset(samples, tmp_path / "src", chunk_bytes=chunk_bytes)
    url = link.url(link.new_bucket(), "ds")
    target = resolve(url, storage_options=link.store.storage_options)
    for item in local.iterdir():
        target.storage.upload(str(item), target.join(item.name))
    return url, json.loads((local / "index.json").read_text())["chunks"]


def _ranges(log: list[Logged], name: str, size: int) -> list[tuple[int, int]]:
    """``[start, end)`` of each GET of the object ``name`` answered (a whole one: its size)."""
    found = []
    for entry in log:
        if entry.method != "GET" or not entry.path.endswith(f"/{name}"):
            continue
        if entry.status == 200:
            found.append((0, size))
        elif entry.status == 206:
            match = re.fullmatch(r"bytes=(\d+)-(\d+)", entry.range or "")
            assert match, entry
            found.append((int(match.group(1)), int(match.group(2)) + 1))
    return sorted(found)


def _fetched_once(log: list[Logged], chunks: list[dict]) -> None:
    """The GETs of every chunk covered each of its bytes exactly once."""
    for chunk in chunks:
        ranges = _ranges(log, chunk["filename"], chunk["chunk_bytes"])
        assert ranges, chunk["filename"]
        assert (ranges[0][0], ranges[-1][1]) == (0, chunk["chunk_bytes"]), ranges
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges)), ranges


def _check(ids: list[int], blobs: list[np.ndarray], count: int) -> None:
    assert sorted(ids) == list(range(count))
    for i, blob in zip(ids, blobs, strict=True):
        assert (blob == i % 251).all(), i


def _stream(url: str, link: Link, cache: Path, **options: object) -> tuple[list, list]:
    ds = ld.StreamingDataset(
        url, storage_options=link.storage_options, cache_dir=str(cache), **options
    )
    samples = list(ds)
    return [s["id"] for s in samples], [s["blob"] for s in samples]


def test_large_chunks_arrive_as_parallel_ranged_gets(link, tmp_path):
    url, chunks = _publish(link, tmp_path, 1500, "12MB")
    big = [chunk for chunk in chunks if chunk["chunk_bytes"] > 4 << 20]
    assert len(big) >= 2
    ids, blobs = _stream(url, link, tmp_path / "cache")
    _check(ids, blobs, 1500)
    log = link.log
    _fetched_once(log, chunks)
    for chunk in big:
        parts = [e for e in log if e.path.endswith("/" + chunk["filename"]) and e.range]
        assert len(parts) >= 3, parts  # a small first part, then parts of the measured size
        assert len({e.connection for e in parts}) > 1  # in parallel, on several connections


def test_opening_a_remote_dataset_asks_for_its_index_once(link, tmp_path):
    """Finding the format and reading the index take one GET of index.json, no HEAD first."""
    url, _ = _publish(link, tmp_path, 40, "64KB")
    ds = ld.StreamingDataset(url, storage_options=link.storage_options, cache_dir=str(tmp_path))
    assert len(ds) == 40
    asked = [(e.method, e.status) for e in link.log if e.path.split("?")[0].endswith("/index.json")]
    assert asked == [("GET", 200)]
    missing = link.url(link.new_bucket(), "nothing")
    with pytest.raises(DatasetNotFoundError, match="nothing"):
        ld.StreamingDataset(missing, storage_options=link.storage_options, cache_dir=str(tmp_path))
    # An index that is not one, fetched by the probe: an error naming it, no dataset.
    hostile = link.url(link.new_bucket(), "ds")
    (tmp_path / "garbage.json").write_bytes(b"\x00{not json" * 1000)
    target = resolve(hostile, storage_options=link.store.storage_options)
    target.storage.upload(str(tmp_path / "garbage.json"), target.join("index.json"))
    with pytest.raises(DatasetFormatError, match="index.json"):
        ld.StreamingDataset(hostile, storage_options=link.storage_options, cache_dir=str(tmp_path))


def test_slowdown_is_absorbed_by_backing_off(link, tmp_path, caplog):
    """Far fewer requests per second are allowed than the reads make: 503s, and no error."""
    url, chunks = _publish(link, tmp_path, 1500, "8MB")
    link.use(replace(DEFAULT_LINK, requests_per_s=8.0, request_burst=2.0))
    with caplog.at_level(logging.INFO, logger="litdata.engine.boundary.storage"):
        ids, blobs = _stream(url, link, tmp_path / "cache")
    assert "reduce your request rate" in caplog.text  # retried, told at INFO: not news
    # Nothing of ours louder than INFO (an earlier test's s3fs client, collected meanwhile,
    # may have asyncio log the close of its session on a loop that is gone: not this test's).
    ours = [r for r in caplog.records if r.name.startswith("litdata")]
    assert not [r for r in ours if r.levelno >= logging.WARNING]
    _check(ids, blobs, 1500)
    assert link.proxy.stats()["slowdowns"] > 0  # the link did throttle
    _fetched_once(link.log, chunks)
    store = "/".join(url.split("/", 3)[:3])
    assert throttle_of(store, 16).slowdowns > 0  # and the window was halved for it


def test_the_first_batch_is_served_before_its_chunk_completes(link, tmp_path):
    """On a slow link a whole chunk takes seconds; its first batch only needs the first part."""
    url, chunks = _publish(link, tmp_path, 1200, "16MB")
    link.use(LinkSettings(ttfb_s=0.03, connection_bytes_per_s=4e6, total_bytes_per_s=16e6))
    cache = tmp_path / "cache"
    ds = ld.StreamingDataset(url, storage_options=link.storage_options, cache_dir=str(cache))
    loader = ld.StreamingDataLoader(ds, batch_size=16, num_workers=0)
    batches = iter(loader)
    first = next(batches)
    name = chunks[0]["filename"]
    # When the first batch is out, its chunk is not published yet, and parts are in flight.
    assert not list(cache.rglob(name))
    assert first["id"].tolist() == list(range(16))
    assert (first["blob"][:, 0] == first["id"] % 251).all()
    later = [e for e in link.log if e.path.endswith("/" + name) and e.range != "bytes=0-1048575"]
    assert later  # the chunk's later parts were asked for, and are still on their way
    rest = [int(i) for batch in batches for i in batch["id"]]
    assert sorted(first["id"].tolist() + rest) == list(range(1200))
    assert list(cache.rglob(name))  # then it is published as usual
    _fetched_once(link.log, chunks)


TRAINER = """
import json, sys
import torch.distributed as dist
import litdata as ld

port, rank, world, url, options, cache, out = sys.argv[1:8]
rank, world = int(rank), int(world)
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
try:
    ds = ld.StreamingDataset(url, storage_options=json.loads(options), cache_dir=cache,
                             shuffle=True, seed=3)
    loader = ld.StreamingDataLoader(ds, batch_size=8, num_workers=2)
    ids = [int(i) for epoch in range(2) for batch in loader for i in batch["id"]]
    with open(out.format(rank), "w") as handle:
        json.dump(ids, handle)
    dist.barrier()
finally:
    dist.destroy_process_group()
"""


def test_two_ranks_with_two_workers_download_each_chunk_once(link, tmp_path):
    """Four processes on one node share one cache: each byte of each chunk is fetched once."""
    url, chunks = _publish(link, tmp_path, 960, "5MB")  # 32 batches of 8 per rank: none dropped
    options = json.dumps(link.storage_options)
    out = str(tmp_path / "rank{}.json")
    run_ranks(TRAINER, 2, url, options, str(tmp_path / "cache"), out)
    ids = [json.loads(Path(out.format(rank)).read_text()) for rank in range(2)]
    epoch = len(ids[0]) // 2
    assert sorted(ids[0][:epoch] + ids[1][:epoch]) == list(range(960))
    assert sorted(ids[0][epoch:] + ids[1][epoch:]) == list(range(960))
    _fetched_once(link.log, chunks)  # two epochs, four readers: every byte once


LEFT_SUSPENDED = """
import json, sys
import litdata as ld

url, options, cache = sys.argv[1:4]
ds = ld.StreamingDataset(url, storage_options=json.loads(options), cache_dir=cache)
batches = iter(ld.StreamingDataLoader(ds, batch_size=16, num_workers=0))
print(next(batches)["id"].tolist(), flush=True)
"""


def test_a_script_that_stops_reading_exits_while_parts_are_in_flight(link, tmp_path):
    """Python closes a loop left suspended as it exits, when no other thread runs any more.

    Closing it waited for the chunks in flight, whose threads the exit had frozen: a script
    that took a batch from a remote dataset and ended never exited.
    """
    url, chunks = _publish(link, tmp_path, 1200, "16MB")
    link.use(LinkSettings(ttfb_s=0.03, connection_bytes_per_s=4e6, total_bytes_per_s=16e6))
    script = tmp_path / "left_suspended.py"
    script.write_text(LEFT_SUSPENDED)
    options = json.dumps(link.storage_options)
    command = [sys.executable, str(script), url, options, str(tmp_path / "cache")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(list(range(16)))
    name = chunks[0]["filename"]
    later = [e for e in link.log if e.path.endswith("/" + name) and e.range != "bytes=0-1048575"]
    assert later  # it ended while the rest of its first chunk was on its way
