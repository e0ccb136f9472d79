"""optimize and map with remote outputs and remote file inputs (``memory://`` storage).

The memory store is one per process: workers forked after the files were written see them,
and what forked workers upload stays in their processes. So remote *outputs* are written
through workers that share this process (a thread executor), and remote *inputs* are read by
forked process workers. The same paths against real S3/GCS/Azure servers are in
``tests/plugins/test_remote_storage.py``.
"""

import uuid
from pathlib import Path

import pytest
from support import fns

import litdata as ld
from litdata.engine.boundary.resolve import resolve


@pytest.fixture
def bucket():
    return f"memory://io-{uuid.uuid4().hex[:8]}"


def _put_files(bucket, count):
    raw = resolve(f"{bucket}/raw")
    for i in range(count):
        path = Path(f"/tmp/litdata-input-{uuid.uuid4().hex}")
        path.write_bytes(bytes([i]) * (100 + i))
        raw.storage.upload(str(path), raw.join(f"img-{i:03d}.bin"))
        path.unlink()
    return [raw.join(f"img-{i:03d}.bin") for i in range(count)]


def test_remote_inputs_are_downloaded_for_fn_when_input_dir_is_given(bucket, tmp_path):
    urls = _put_files(bucket, 12)
    ld.optimize(
        fns.file_size,
        urls,
        str(tmp_path / "ds"),
        chunk_size=4,
        num_workers=2,
        input_dir=f"{bucket}/raw",
        verbose=False,
    )
    reader = ld.DatasetReader(tmp_path / "ds")
    rows = sorted((reader[i]["name"], reader[i]["size"], reader[i]["first"]) for i in range(12))
    assert rows == [(f"img-{i:03d}.bin", 100 + i, i) for i in range(12)]
    assert not list((Path(ld_cache_root()) / "inputs").rglob("img-*"))  # removed after use


def ld_cache_root():
    from litdata.core import config

    return config.cache_root()


def test_remote_inputs_reach_fn_as_urls_without_input_dir(bucket, tmp_path):
    urls = _put_files(bucket, 5)
    ld.optimize(
        fns.passes_url,
        urls,
        str(tmp_path / "ds"),
        chunk_size=4,
        num_workers=1,
        verbose=False,
    )
    reader = ld.DatasetReader(tmp_path / "ds")
    assert sorted(reader[i]["url"] for i in range(5)) == urls


def test_map_downloads_inputs_and_writes_locally(bucket, tmp_path):
    urls = _put_files(bucket, 6)
    ld.map(
        fns.copy_file,
        urls,
        str(tmp_path / "out"),
        num_workers=2,
        input_dir=f"{bucket}/raw",
        verbose=False,
    )
    copies = sorted(path.name for path in (tmp_path / "out").iterdir())
    assert copies == [f"img-{i:03d}.bin.copy" for i in range(6)]
    assert (tmp_path / "out" / "img-003.bin.copy").read_bytes() == bytes([3]) * 103
