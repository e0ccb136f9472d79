"""Media leaves (audio, video, NIfTI, mesh, TIFF, JPEG arrays, graphs, PDF) cross between
litdata and LitData 0.2.76, both ways, with the same ``data_format`` names.

Runs when ``LITDATA_PEER_PYTHON`` points at a python with LitData and the media libraries
(``bench/peers.py`` builds one).
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

import litdata as ld
from litdata.plugins.serializers.video import VideoSerializer

PEER = os.environ.get("LITDATA_PEER_PYTHON")
pytestmark = [
    pytest.mark.peer,
    pytest.mark.skipif(not PEER, reason="set LITDATA_PEER_PYTHON to a python with LitData"),
]
for _module in ("nibabel", "trimesh", "pypdf", "tifffile", "torch_geometric"):
    pytest.importorskip(_module)
media_samples = pytest.importorskip("media_samples")
SCRIPT = Path(__file__).with_name("media_with_litdata.py")


def _peer(*args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [PEER, str(SCRIPT), *map(str, args)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout.splitlines()


def _ours(directory):
    """Our reading, with video as bytes (decoding needs FFmpeg, missing here)."""
    reader = ld.DatasetReader(directory, serializers={"video": VideoSerializer(decode="bytes")})
    return reader, [
        json.loads(json.dumps(media_samples.summary(reader[i]))) for i in range(len(reader))
    ]


def test_we_read_media_litdata_wrote(tmp_path):
    _peer("write", tmp_path / "ds", tmp_path, cwd=tmp_path)
    formats, *litdata_view = _peer("read", tmp_path / "ds", cwd=tmp_path)
    reader, ours = _ours(tmp_path / "ds")
    assert json.loads(formats) == media_samples.DATA_FORMAT
    assert list(reader.index.config.data_format) == media_samples.DATA_FORMAT
    assert len(ours) == media_samples.COUNT
    assert ours == [json.loads(line) for line in litdata_view]


def test_litdata_reads_media_we_wrote(tmp_path):
    samples = [media_samples.build(i, tmp_path) for i in range(media_samples.COUNT)]
    ld.write_dataset(samples, tmp_path / "ds", chunk_size=2)
    reader, ours = _ours(tmp_path / "ds")
    assert list(reader.index.config.data_format) == media_samples.DATA_FORMAT
    formats, *litdata_view = _peer("read", tmp_path / "ds", cwd=tmp_path)
    assert json.loads(formats) == media_samples.DATA_FORMAT
    assert [json.loads(line) for line in litdata_view] == ours
