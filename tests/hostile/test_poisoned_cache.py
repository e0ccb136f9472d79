"""A chunk's copy in the cache damaged after it was fetched and checked.

The copy (of a chunk on S3, or the inflated copy of a local zstd chunk) is changed on disk
between two runs: a flipped byte, or another chunk's bytes in its place (the same size). The
next run, in new processes (a new dataset, DataLoader workers), must hash the copy before using
it, fetch it again, and return every sample once, right.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from hostile import forge

import litdata as ld
from litdata.engine.boundary.resolve import resolve

pytestmark = pytest.mark.timeout(180)


def _copies(cache: Path) -> list[Path]:
    found = cache.rglob("chunk-*.bin")
    hidden = {".locks", ".sums"}  # the locks and the copies' digests
    return sorted(path for path in found if not hidden & set(path.parts) and path.name[0] != ".")


def _source(kind: str, tmp_path: Path, s3_server) -> tuple[str, dict]:
    if kind == "local zstd":
        return str(forge.dataset(tmp_path / "ds", compression="zstd")), {}
    local = forge.dataset(tmp_path / "src")
    url = s3_server.url(s3_server.new_bucket(), "ds")
    target = resolve(url, storage_options=s3_server.storage_options)
    for item in local.iterdir():
        target.storage.upload(str(item), target.join(item.name))
    return url, {"storage_options": s3_server.storage_options}


def _epoch(url: str, cache: Path, workers: int, options: dict) -> list:
    data = ld.StreamingDataset(url, cache_dir=str(cache), **options)
    loader = ld.StreamingDataLoader(data, batch_size=25, num_workers=workers, collate_fn=list)
    return [item for batch in loader for item in batch]


@pytest.mark.fault("a cached chunk copy damaged after it was checked")
@pytest.mark.parametrize("kind", ["local zstd", "s3"])
@pytest.mark.parametrize("damage", ["flipped byte", "another chunk's bytes"])
@pytest.mark.parametrize("workers", [0, 2])
def test_a_damaged_copy_is_fetched_again(
    tmp_path, s3_server, record, caplog, kind, damage, workers
):
    record.fault += f" ({kind}, {damage}, {workers} workers)"
    url, options = _source(kind, tmp_path, s3_server)
    cache = tmp_path / "cache"
    first = _epoch(url, cache, 0, options)
    assert sorted(item["id"] for item in first) == list(range(forge.COUNT))
    copies = _copies(cache)
    assert len(copies) == 6
    victim, right = copies[2], copies[2].read_bytes()
    if damage == "flipped byte":
        data = bytearray(victim.read_bytes())
        data[-5] ^= 0x01  # a byte of the last sample's value
        victim.write_bytes(bytes(data))
    else:
        assert copies[0].stat().st_size == victim.stat().st_size
        shutil.copyfile(copies[0], victim)
    caplog.set_level(logging.WARNING)
    record.start()
    second = _epoch(url, cache, workers, options)
    ids = [item["id"] for item in second]
    assert sorted(ids) == list(range(forge.COUNT))
    if workers == 0:  # workers log in their own processes
        assert "changed since it was checked; fetching it again" in caplog.text
    assert victim.read_bytes() == right
    record(
        "the copy hashed on first use, found changed, fetched again: every sample right",
        duplicated=len(ids) - len(set(ids)),
        wrong=sum(not forge.is_right(item) for item in second),
    )
