"""Streaming does not keep every page of every chunk it passed through mapped in the process."""

import sys
from pathlib import Path

import numpy as np
import pytest

import litdata as ld

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/smaps")


def _mapped_kb(directory: Path) -> dict[str, int]:
    """Resident KiB of this process's mappings of files in ``directory``, by file name."""
    resident: dict[str, int] = {}
    current = None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if not fields[0].endswith(":"):  # a mapping's header: range perms offset dev inode [path]
            path = Path(fields[5]) if len(fields) >= 6 else None
            current = path.name if path and path.parent == directory else None
        elif current and fields[0] == "Rss:":
            resident[current] = resident.get(current, 0) + int(fields[1])
    return resident


@pytest.fixture(scope="module")
def big_chunks(tmp_path_factory):
    """4 chunks of 64 samples of 16 KiB (1 MiB of pages each)."""
    path = tmp_path_factory.mktemp("big")
    ld.write_dataset(
        ({"id": i, "blob": np.full(16384, i % 251, np.uint8)} for i in range(256)),
        path,
        chunk_size=64,
    )
    return path


def test_a_released_chunk_leaves_the_process_but_its_items_stay_readable(big_chunks):
    reader = ld.DatasetReader(big_chunks)
    chunk = reader.chunk(0)
    before = [reader.read(0, position)["blob"].sum() for position in range(64)]
    name = chunk.path.name
    assert _mapped_kb(big_chunks)[name] >= 1024
    chunk.release()
    assert _mapped_kb(big_chunks)[name] < 64
    assert [reader.read(0, position)["blob"].sum() for position in range(64)] == before


@pytest.mark.parametrize("shuffle", [False, True])
def test_streaming_releases_each_chunk_once_done_with_it(big_chunks, shuffle):
    dataset = ld.StreamingDataset(big_chunks, shuffle=shuffle)
    ids = []
    peak = 0
    for sample in dataset:
        ids.append(sample["id"])
        assert sample["blob"][0] == sample["id"] % 251
        peak = max(peak, sum(_mapped_kb(big_chunks).values()))
    assert sorted(ids) == list(range(256))
    assert peak >= 1024  # the chunk being read was mapped...
    assert sum(_mapped_kb(big_chunks).values()) < 256  # ...and none is held after the epoch
