"""Hostile images: a clear per-sample error naming the sample and the dataset, bounded memory,
and the loader still works (no worker dies)."""

import resource
import struct
import zlib

import pytest

import litdata as ld
from litdata.vision import ImageDecodeError
from tests.vision.photos import jpeg


def huge_jpeg():
    data = bytearray(jpeg(64, 48, seed=1))
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", 65535, 65535)  # height, width
    return bytes(data)


def truncated_jpeg():
    data = jpeg(400, 300, seed=2)
    return data[: len(data) // 3]


def corrupt_huffman_jpeg():
    data = bytearray(jpeg(400, 300, seed=3))
    dht = data.index(b"\xff\xc4")
    data[dht + 5 : dht + 21] = b"\xff" * 16  # code counts no table can have
    return bytes(data)


def png_bomb():
    """A PNG declaring 60,000 x 60,000 RGB pixels whose few KB of zlib would inflate to 10 GB."""

    def chunk(kind, body):
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    rows = zlib.compress(b"\x00" * (1 + 60_000 * 3) * 64, 9)
    header = struct.pack(">IIBBBBB", 60_000, 60_000, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")
    )


HOSTILE = {
    "65535x65535": (huge_jpeg, "declares 65535 x 65535|decompression bomb"),
    "truncated": (truncated_jpeg, "truncated or corrupt"),
    "corrupt huffman table": (corrupt_huffman_jpeg, "Cannot"),
    "png bomb": (png_bomb, "declares 60000 x 60000|decompression bomb"),
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    paths = {}
    for name, (make, _) in HOSTILE.items():
        out = tmp_path_factory.mktemp(name.replace(" ", "-"))
        samples = [{"image": jpeg(100, 80, seed=i), "id": i} for i in range(6)]
        samples[3] = {"image": make(), "id": 3}
        ld.write_dataset(iter(samples), out, chunk_size=4)
        paths[name] = out
    return paths


@pytest.mark.parametrize("name", list(HOSTILE))
def test_direct_access_names_the_sample_and_dataset_with_bounded_memory(hostile, name):
    ds = ld.StreamingDataset(hostile[name], transform=ld.vision.RandomResizedCrop(16))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ImageDecodeError, match=HOSTILE[name][1]) as error:
        ds[3]
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert f"sample 3 of dataset {hostile[name]}" in str(error.value)
    assert grown_mb < 200
    assert ds[4]["image"].shape == (3, 16, 16)  # the next sample is fine


@pytest.mark.parametrize("name", ["65535x65535", "corrupt huffman table"])
def test_a_worker_reports_the_sample_and_the_loader_goes_on(hostile, name):
    ds = ld.StreamingDataset(hostile[name], transform=ld.vision.RandomResizedCrop(16))
    loader = ld.StreamingDataLoader(ds, batch_size=2, num_workers=1)
    with pytest.raises(Exception, match=f"sample 3 of dataset {hostile[name]}"):
        list(loader)
    clean = ld.StreamingDataset(hostile[name]).subset([0, 1, 2, 4, 5])
    clean.transforms = (ld.vision.RandomResizedCrop(16),)
    batches = list(ld.StreamingDataLoader(clean, batch_size=2, num_workers=1))
    assert sum(len(b["id"]) for b in batches) == 5
