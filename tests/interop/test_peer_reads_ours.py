"""Datasets written here are read back identically by the real LitData 0.2.76.

Runs when ``LITDATA_PEER_PYTHON`` points at a python with LitData installed (``bench/peers.py``
builds one): each fixture's samples are written with litdata, then LitData reads them.
"""

import json
import os
import subprocess
from pathlib import Path

import canonical
import expected
import pytest
from PIL import Image as PILImage

import litdata as ld

PEER = os.environ.get("LITDATA_PEER_PYTHON")
pytestmark = [
    pytest.mark.peer,
    pytest.mark.skipif(
        not PEER, reason="needs real LitData 0.2.76: set LITDATA_PEER_PYTHON (README, 'Tests')"
    ),
]
READER = Path(__file__).with_name("read_with_litdata.py")

ld.register_namedtuple(expected.Point, expected.POINT_TYPE_NAME)


def to_ours(value):
    """Turn the fixtures' stand-ins into litdata's media wrappers and PIL images."""
    if isinstance(value, expected.Wrapper):
        return getattr(ld, value.kind)(**value.fields)
    if isinstance(value, expected.JpegFile):
        image = PILImage.open(expected.MEDIA_DIR / value.name)
        image.load()  # reads the pixels and closes the file; the image keeps its filename
        return image
    if isinstance(value, dict):
        return {key: to_ours(item) for key, item in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(to_ours(item) for item in value))
    if isinstance(value, tuple | list):
        return type(value)(to_ours(item) for item in value)
    return value


@pytest.mark.parametrize("name", sorted(expected.FIXTURES))
def test_litdata_reads_our_dataset(name, tmp_path):
    fixture = expected.FIXTURES[name]
    options = {
        k: v
        for k, v in fixture.options.items()
        if k in ("chunk_size", "chunk_bytes", "compression")
    }
    loader = ld.TokensLoader() if fixture.options.get("tokens") else None
    samples = [to_ours(sample) for sample in expected.source_samples(name)]
    ld.write_dataset(samples, tmp_path / "ours", item_loader=loader, **options)
    out = tmp_path / "read.json"
    command = [PEER, str(READER), str(tmp_path / "ours"), str(out)]
    if fixture.item_loader:
        command += ["--item-loader", fixture.item_loader]
    subprocess.run(command, check=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp_path)})
    dump = json.loads(out.read_text())
    want = [canonical.canonical(sample) for sample in expected.expected_samples(name)]
    assert dump["len"] == len(want)
    assert canonical.first_difference(dump["getitem"], want, f"{name}.getitem") is None
    assert canonical.first_difference(dump["iter"], want, f"{name}.iter") is None


INFLATING_READ = """
import sys
import litdata as ld
dataset = ld.StreamingDataset(sys.argv[1])
print(sum(1 for _ in dataset))
"""


def test_we_still_read_a_dataset_litdata_decompressed_in_place(tmp_path):
    samples = [{"id": i, "text": f"row {i}" * 5} for i in range(40)]
    ld.write_dataset(samples, tmp_path / "ours", chunk_size=10, compression="zstd")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [PEER, "-c", INFLATING_READ, str(tmp_path / "ours")],
        env=env,
        cwd=tmp_path,  # not the repository: its litdata would shadow LitData
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert result.stdout.split()[-1] == "40"
    names = sorted(os.listdir(tmp_path / "ours"))
    assert "chunk-0-0.bin" in names  # LitData swapped the compressed files for plain ones
    assert "chunk-0-0.zstd.bin" not in names
    reader = ld.DatasetReader(tmp_path / "ours")
    assert [reader[i] for i in range(len(reader))] == samples
    stream = ld.StreamingDataset(str(tmp_path / "ours"), shuffle=True)
    assert sorted(sample["id"] for sample in stream) == list(range(40))


MIXED_IMAGES_READ = """
import sys
import litdata as ld
dataset = ld.StreamingDataset(sys.argv[1])
images = [dataset[i]["image"] for i in range(len(dataset))]
print([[*image.shape, int(image.sum())] for image in images])
"""


def _mixed_image(path: str) -> dict[str, object]:
    return {"image": PILImage.open(path)}


def test_litdata_reads_a_mixed_image_folder_written_with_two_workers(tmp_path):
    import numpy as np

    paths = []
    for number in range(6):
        pixels = np.random.default_rng(number).integers(0, 256, (6, 5, 3), dtype=np.uint8)
        path = tmp_path / f"{number}.{'jpg' if number % 2 else 'png'}"
        PILImage.fromarray(pixels).save(path)
        paths.append(str(path))
    ld.optimize(_mixed_image, paths, str(tmp_path / "ours"), chunk_size=2, num_workers=2)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [PEER, "-c", MIXED_IMAGES_READ, str(tmp_path / "ours")],
        env=env,
        cwd=tmp_path,  # not the repository: its litdata would shadow LitData
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    theirs = json.loads(result.stdout.strip().splitlines()[-1])
    reader = ld.DatasetReader(tmp_path / "ours")
    ours = [[*reader[i]["image"].shape, int(reader[i]["image"].sum())] for i in range(6)]
    assert theirs == ours  # the same (3, H, W) tensors, whatever each file's format
