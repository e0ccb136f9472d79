"""A raw PIL value whose header claims a huge image in a few bytes (native ``pil``, MDS ``pil``).

Pillow's ``frombytes`` allocates the image the header describes before noticing the bytes are
short: 20 bytes could ask for 17 GB. The header here claims 16,384 x 16,384 RGBA (1 GiB, so
that a regression costs this machine a transient gigabyte, not its memory) with a valid
checksum; the answer must be a clear error before any allocation.
"""

from __future__ import annotations

import struct

import pytest
from hostile import forge
from PIL import Image
from support.mds_fixtures import write_shards

import litdata as ld
from litdata.core.errors import SampleDecodeError

pytestmark = pytest.mark.timeout(120)

SIDE = 16_384


def _bomb(pixels: int) -> bytes:
    return struct.pack("<III", SIDE, SIDE, 4) + b"RGBA" + bytes(pixels)


@pytest.mark.fault("native pil leaf claiming 16,384 x 16,384 RGBA in 64 bytes (checksum valid)")
def test_a_native_pil_bomb_is_refused_before_allocating(tmp_path, record):
    image = Image.new("RGBA", (4, 4), (1, 2, 3, 4))
    folder = ld.write_dataset(
        ({"id": i, "image": image} for i in range(20)), tmp_path / "ds", chunk_size=10
    )
    entry = forge.read_index(folder)["chunks"][1]
    chunk = folder / entry["filename"]
    data = chunk.read_bytes()
    honest = struct.pack("<III", 4, 4, 4) + b"RGBA" + image.tobytes()
    assert data.count(honest) == 10
    chunk.write_bytes(data.replace(honest, _bomb(64), 1))  # the same length
    forge.reseal(folder, 1)
    dataset = ld.StreamingDataset(str(folder))
    assert dataset[0]["image"].size == (4, 4)
    record.start()
    with pytest.raises(SampleDecodeError, match="nothing was allocated") as error:
        dataset[10]
    record.failed()
    assert f"{SIDE} x {SIDE} RGBA" in str(error.value)
    record("SampleDecodeError naming the leaf and the claimed size; nothing allocated")


@pytest.mark.fault("MDS pil column claiming 16,384 x 16,384 RGBA in 20 bytes")
def test_an_mds_pil_bomb_is_refused_before_allocating(tmp_path, record):
    rows = [[struct.pack("<III", 1, 1, 1) + b"L" + b"\x07"], [_bomb(4)]]
    folder = write_shards(tmp_path / "mds", {"image": "pil"}, rows)
    dataset = ld.StreamingDataset(str(folder))
    assert dataset[0]["image"].getpixel((0, 0)) == 7
    record.start()
    with pytest.raises(SampleDecodeError, match="nothing was allocated"):
        dataset[1]
    record.failed()
    record("SampleDecodeError naming the column; nothing allocated")
