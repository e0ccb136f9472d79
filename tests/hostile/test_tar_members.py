"""WebDataset shards whose sample members are not regular files stored whole.

``tar --sparse`` stores a file with holes in pieces: its member's size is the file's, its data
shorter, so slicing ``size`` bytes from the tar returns tar bytes. A hard link's member holds
no data at all. Each must be refused naming the shard and the member, by the reader and by
``litdata verify`` alike.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile

import pytest
from support.cli_process import litdata

import litdata as ld
from litdata.core.errors import DatasetFormatError

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(shutil.which("tar") is None, reason="no tar command"),
]


def _plain_shard(path, first):
    with tarfile.open(path, "w") as tar:
        for key in range(first, first + 3):
            for suffix, data in (("bin", bytes([key]) * 100), ("cls", str(key).encode())):
                info = tarfile.TarInfo(f"{key:04d}.{suffix}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


def _sparse_shard(path, work):
    work.mkdir()
    with open(work / "0009.bin", "wb") as sparse:
        sparse.truncate(1 << 20)
        sparse.seek(500_000)
        sparse.write(b"x")
    (work / "0009.cls").write_text("9")
    subprocess.run(
        ["tar", "--sparse", "-cf", str(path), "0009.bin", "0009.cls"], cwd=work, check=True
    )
    with tarfile.open(path) as tar:
        assert tar.getmember("0009.bin").issparse()  # the lie is told
        assert os.path.getsize(path) < (1 << 20)


def _linked_shard(path):
    with tarfile.open(path, "w") as tar:
        data = b"payload"
        info = tarfile.TarInfo("0009.bin")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("0010.bin")
        link.type, link.linkname = tarfile.LNKTYPE, "0009.bin"
        tar.addfile(link)


@pytest.mark.fault("WebDataset shard with a sparse member (tar --sparse) or a hard link")
@pytest.mark.parametrize("kind", ["sparse", "hard link"])
def test_an_unmapped_member_is_refused_by_reader_and_verify(tmp_path, record, kind):
    record.fault += f": {kind}"
    folder = tmp_path / "shards"
    folder.mkdir()
    _plain_shard(folder / "a.tar", 0)
    if kind == "sparse":
        _sparse_shard(folder / "b.tar", tmp_path / "work")
    else:
        _linked_shard(folder / "b.tar")
    record.start()
    with pytest.raises(DatasetFormatError, match="b.tar") as error:
        list(ld.StreamingDataset(str(folder)))
    record.failed()
    assert ("sparse" if kind == "sparse" else "link") in str(error.value)
    result = litdata("verify", folder, "--quiet", timeout=60)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "b.tar" in output
    assert "Traceback" not in output
    record("DatasetFormatError naming the shard and member; verify exits 1 naming it too")
