"""A chunk in memory copied into a cache file around the file cache, whatever its size."""

from __future__ import annotations

import os
import stat

import pytest

from litdata.engine.cache.direct import ALIGN, write_direct


@pytest.mark.parametrize("size", [0, 1, ALIGN - 1, ALIGN, ALIGN + 1, (9 << 20) + 123])
def test_every_byte_arrives_whole_pages_and_tail_alike(tmp_path, size):
    source = tmp_path / "source"
    data = os.urandom(size)
    source.write_bytes(data)
    destination = tmp_path / "copy"
    assert write_direct(source, destination) == size
    assert destination.read_bytes() == data
    assert stat.S_IMODE(destination.stat().st_mode) == 0o600


def test_a_memory_file_is_copied_and_an_old_file_replaced(tmp_path):
    memory = os.memfd_create("chunk-test") if hasattr(os, "memfd_create") else None
    if memory is None:
        pytest.skip("no memfd_create here")
    data = os.urandom(3 * ALIGN + 17)
    os.write(memory, data)
    destination = tmp_path / "copy"
    destination.write_bytes(b"x" * (10 * ALIGN))  # longer than the copy: truncated first
    bits = stat.S_IMODE(destination.stat().st_mode)
    try:
        write_direct(f"/proc/self/fd/{memory}", destination, 0o640)
    finally:
        os.close(memory)
    assert destination.read_bytes() == data
    assert stat.S_IMODE(destination.stat().st_mode) == bits  # an existing file keeps its bits


def test_a_missing_folder_is_an_error_not_a_copy_elsewhere(tmp_path):
    source = tmp_path / "source"
    source.write_bytes(b"abc")
    with pytest.raises(FileNotFoundError):
        write_direct(source, tmp_path / "missing" / "copy")
