"""Raw-file datasets whose folder lies: a symlink loop, files that changed since the listing."""

from __future__ import annotations

import os

import pytest

import litdata as ld
from litdata.core.errors import DatasetFormatError

pytestmark = pytest.mark.timeout(120)


def _folder(tmp_path):
    folder = tmp_path / "data"
    (folder / "sub").mkdir(parents=True)
    for number in range(4):
        (folder / ("sub" if number % 2 else "") / f"f{number}.bin").write_bytes(
            bytes([number]) * 1000
        )
    return folder


@pytest.mark.fault("raw dataset folder holding a symlink loop (loop -> .)")
def test_a_symlink_loop_lists_each_file_once(tmp_path, record):
    folder = _folder(tmp_path)
    os.symlink(".", folder / "loop")
    os.symlink("..", folder / "sub" / "up")
    data = ld.StreamingRawDataset(str(folder), cache_dir=str(tmp_path / "cache"))
    items = [data[i] for i in range(len(data))]
    assert len(data) == 4
    assert sorted(items) == [bytes([n]) * 1000 for n in range(4)]
    record("each file listed once", duplicated=len(items) - len(set(items)))


@pytest.mark.fault("raw dataset file grew or shrank since the listing")
@pytest.mark.parametrize("change", ["grew", "shrank"])
def test_a_file_changed_since_the_listing_is_refused(tmp_path, record, change):
    record.fault += f": {change}"
    folder = _folder(tmp_path)
    cache = str(tmp_path / "cache")
    assert len(ld.StreamingRawDataset(str(folder), cache_dir=cache)) == 4  # listed and kept
    victim = folder / "f0.bin"
    victim.write_bytes(bytes(8000) if change == "grew" else bytes(10))
    data = ld.StreamingRawDataset(str(folder), cache_dir=cache)  # the kept listing
    assert data[1] == bytes([2]) * 1000
    record.start()
    with pytest.raises(DatasetFormatError, match="changed since the files were listed") as error:
        data[0]
    record.failed()
    message = str(error.value)
    assert str(victim) in message
    assert "recompute_index=True" in message
    assert "plugin" not in message
    fresh = ld.StreamingRawDataset(str(folder), cache_dir=cache, recompute_index=True)
    assert len(fresh[0]) == (8000 if change == "grew" else 10)
    record("DatasetFormatError naming the file, both sizes and recompute_index=True")
