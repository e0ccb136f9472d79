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
    pytest.mark.skipif(not PEER, reason="set LITDATA_PEER_PYTHON to a python with LitData"),
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
