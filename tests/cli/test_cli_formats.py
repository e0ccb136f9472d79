"""``litdata verify`` and ``inspect`` on datasets other tools wrote: MDS, Parquet, WebDataset."""

import io
import shutil
import tarfile
from pathlib import Path

import pytest
from support.cli_process import litdata
from support.parquet_files import write_parquet

MDS = Path(__file__).resolve().parents[1] / "data" / "mds-0.13.0"


def _webdataset(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for shard in range(2):
        with tarfile.open(folder / f"shard-{shard:04d}.tar", "w") as tar:
            for index in range(3):
                for suffix, data in (("txt", f"caption {index}".encode()), ("cls", b"1")):
                    info = tarfile.TarInfo(f"s{shard}{index:04d}.{suffix}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    return folder


@pytest.fixture(params=["mds", "mds-zstd", "parquet", "webdataset"])
def foreign(request, tmp_path):
    """A dataset another tool wrote, and the number of items it holds."""
    if request.param == "mds":
        return shutil.copytree(MDS / "simple", tmp_path / "ds"), 120
    if request.param == "mds-zstd":
        return shutil.copytree(MDS / "encodings_zstd", tmp_path / "ds"), 12
    if request.param == "parquet":
        return write_parquet(tmp_path / "ds", [10, 5]) and tmp_path / "ds", 15
    return _webdataset(tmp_path / "ds"), 6


def test_verify_passes_a_sound_dataset_of_every_format(foreign):
    folder, items = foreign
    result = litdata("verify", folder, "--quiet")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{items} items, 0 problems (no checksums recorded; every item decoded)" in (
        result.stdout
    )


def test_verify_names_a_damaged_mds_shard(tmp_path):
    folder = shutil.copytree(MDS / "simple", tmp_path / "ds")
    shard = folder / "shard.00003.mds"
    data = bytearray(shard.read_bytes())
    data[0:4] = b"\xff\xff\x00\x00"  # the shard's sample count
    shard.write_bytes(bytes(data))
    result = litdata("verify", folder, "--quiet")
    assert result.returncode == 1
    assert "error: shard.00003.mds: it cannot be opened: " in result.stdout
    assert f"{shard} says it holds 65535 " in result.stdout
    assert "1 problem" in result.stdout


def test_inspect_says_who_wrote_a_foreign_dataset_and_its_per_shard_codec(tmp_path):
    result = litdata("inspect", MDS / "encodings_zstd", "--samples", "0")
    assert result.returncode == 0, result.stderr
    assert "written by   MosaicML Streaming's MDSWriter (read as it is" in result.stdout
    assert "compression  zstd (per chunk)" in result.stdout
    assert "bytes        11,551 (11.6 KB as stored)" in result.stdout
    write_parquet(tmp_path / "pq", [4])
    parquet = litdata("inspect", tmp_path / "pq", "--samples", "0").stdout
    assert "written by   a Parquet writer" in parquet
    assert "litdata, format version" not in parquet
