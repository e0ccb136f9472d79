"""One viewer per test session over every kind of dataset the viewer tests need.

The datasets (ds=N in the API, in this order): a keyed gallery of images, text, numbers and
arrays whose captions hold hostile HTML; a hostile dataset (a corrupt image, a decompression
bomb, a truncated chunk); Parquet; MDS; WebDataset; a native dataset on the loopback S3 server;
an encrypted one. The gallery has a provenance log of two training steps.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

import litdata as ld
from litdata.plugins.encryption.fernet import FernetEncryption
from litdata.viewer import Viewer
from support.mds_fixtures import copy_fixture
from support.parquet_files import write_parquet

GALLERY, HOSTILE, PARQUET, MDS, WEBDATASET, S3, ENCRYPTED = range(7)
GALLERY_ITEMS = 120
#: Captions that would run code if the page ever treated data as HTML.
ATTACKS = {
    3: "<script>window.__pwned = 'script'</script>",
    4: "<img src=x onerror=\"window.__pwned = 'img'\">",
    5: "javascript:window.__pwned='link'",
}


def png(width: int, height: int, shade: int) -> bytes:
    """A real PNG of one colour."""
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (shade, 255 - shade, 80)).save(buffer, format="PNG")
    return buffer.getvalue()


def wav(i: int) -> bytes:
    """A real WAV file: 10 ms of a tone."""
    import wave

    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        tone = (np.sin(np.arange(80) * (0.1 + i / 100)) * 8000).astype("<i2")
        out.writeframes(tone.tobytes())
    return buffer.getvalue()


def bomb_png(side: int = 8_000) -> bytes:
    """A valid PNG header claiming ``side`` x ``side`` pixels, with a tiny body."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"\x00" * 1024)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def gallery_sample(i: int) -> dict[str, Any]:
    """Sample ``i`` of the gallery."""
    caption = ATTACKS.get(i, f"a picture number {i} of a {['cat', 'dog', 'bird', 'fish'][i % 4]}")
    return {
        "id": f"img-{i:04d}",
        "image": png(32 + 8 * (i % 5), 24 + 4 * (i % 3), (i * 37) % 256),
        "label": i % 4,
        "caption": caption,
        "vector": np.sin(np.arange(64) / 8 + i).astype(np.float32),
        "grid": np.outer(np.arange(8), np.arange(8)).astype(np.float64) * i,
        "meta": {"source": "camera", "tags": ["a", "b"]},
    }


def _gallery_key(sample: dict[str, Any]) -> str:
    return str(sample["id"])


def _hostile(folder: Path) -> Path:
    good = png(40, 30, 10)
    images = [good, b"\x89PNG\r\n\x1a\n" + b"not really a png" * 4, bomb_png()]
    samples = ({"n": i, "image": images[i % 3], "sound": wav(i)} for i in range(30))
    ld.write_dataset(samples, folder, chunk_size=10)
    chunk = folder / "chunk-0-1.bin"  # samples 10-19
    chunk.write_bytes(chunk.read_bytes()[:-40])
    return folder


def _webdataset(folder: Path) -> Path:
    import tarfile

    folder.mkdir(parents=True)
    with tarfile.open(folder / "shard-0000.tar", "w") as tar:
        for i in range(12):
            for suffix, data in (("txt", f"caption {i}".encode()), ("png", png(20, 20, i * 9))):
                info = tarfile.TarInfo(f"s{i:04d}.{suffix}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return folder


@pytest.fixture(scope="session")
def view_data(tmp_path_factory: pytest.TempPathFactory, s3_server: Any) -> dict[str, Any]:
    """The datasets' locations and options (built once per session)."""
    root = tmp_path_factory.mktemp("view-data")
    gallery = root / "gallery"
    ld.write_dataset(
        (gallery_sample(i) for i in range(GALLERY_ITEMS)),
        gallery,
        chunk_size=40,
        key_fn=_gallery_key,
    )
    write_parquet(root / "parquet", [15, 10])
    mds = copy_fixture("simple", root / "mds")
    url = s3_server.url(s3_server.new_bucket(), "remote")
    options = s3_server.storage_options
    ld.write_dataset(
        (gallery_sample(i) for i in range(60)), url, chunk_size=20, storage_options=options
    )
    key = FernetEncryption("correct horse")
    ld.write_dataset(
        ({"secret": f"hidden {i}", "n": i} for i in range(20)),
        root / "encrypted",
        chunk_size=10,
        encryption=key,
    )
    logs = root / "ids"
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(str(gallery)), batch_size=4, num_workers=0, provenance_dir=logs
    )
    for step, _ in enumerate(loader):
        if step == 2:
            break
    return {
        "paths": [
            gallery,
            _hostile(root / "hostile"),
            root / "parquet",
            mds,
            _webdataset(root / "webdataset"),
            url,
            root / "encrypted",
        ],
        "s3_options": options,
        "key": key,
        "logs": logs,
        "cache": root / "cache",
    }


@pytest.fixture(scope="session")
def viewer(view_data: dict[str, Any]) -> Iterator[Viewer]:
    """The session's viewer over every dataset of ``view_data``."""
    from litdata.viewer.source import Source

    cache = str(view_data["cache"])
    paths = view_data["paths"]
    sources = [
        Source.open(
            path,
            cache_dir=cache,
            storage_options=view_data["s3_options"] if number == S3 else None,
            encryption=view_data["key"] if number == ENCRYPTED else None,
        )
        for number, path in enumerate(paths)
    ]
    running = Viewer(sources, provenance_dir=view_data["logs"])
    yield running
    running.close()
