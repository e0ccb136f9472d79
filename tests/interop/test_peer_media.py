"""Media leaves (audio, video, NIfTI, mesh, TIFF, JPEG arrays, graphs, PDF) cross between
litdata and LitData 0.2.76, both ways, with the same ``data_format`` names.

Runs when ``LITDATA_PEER_PYTHON`` points at a python with LitData and the media libraries
(``bench/peers.py`` builds one).
"""

import json
from pathlib import Path

import pytest
from peer import MARKS, run_peer

import litdata as ld
from litdata.plugins.serializers.video import VideoSerializer

pytestmark = MARKS
for _module in ("nibabel", "trimesh", "pypdf", "tifffile", "torch_geometric"):
    pytest.importorskip(_module)
media_samples = pytest.importorskip("media_samples")
SCRIPT = Path(__file__).with_name("media_with_litdata.py")


def _peer(*args, cwd):
    return run_peer(SCRIPT, *args, cwd=cwd).splitlines()


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


def _our_records(directory):
    dataset = ld.StreamingDataset(directory, item_loader=ld.TemporalArrayLoader())
    return [media_samples.temporal_summary(dataset[i]) for i in range(len(dataset))]


def _expected_records():
    count = len(media_samples.TRACKS)
    return [media_samples.temporal_summary(media_samples.temporal_record(i)) for i in range(count)]


def test_we_read_temporal_records_litdata_wrote(tmp_path):
    _peer("temporal-write", tmp_path / "ds", cwd=tmp_path)
    assert _our_records(tmp_path / "ds") == _expected_records()


def test_litdata_reads_temporal_records_we_wrote(tmp_path):
    records = [media_samples.temporal_record(i) for i in range(len(media_samples.TRACKS))]
    loader = ld.TemporalArrayLoader(field_groups=[["score", "valid"]])
    ld.write_dataset(records, tmp_path / "ds", chunk_size=3, item_loader=loader)
    lines = _peer("temporal-read", tmp_path / "ds", cwd=tmp_path)
    assert [json.loads(line) for line in lines] == _expected_records()


def test_our_temporal_chunks_are_litdatas_bytes(tmp_path):
    _peer("temporal-write", tmp_path / "theirs", cwd=tmp_path)
    records = [media_samples.temporal_record(i) for i in range(len(media_samples.TRACKS))]
    loader = ld.TemporalArrayLoader(field_groups=[["score", "valid"]])
    ld.write_dataset(records, tmp_path / "ours", chunk_size=3, item_loader=loader)
    theirs = json.loads((tmp_path / "theirs" / "index.json").read_text())
    ours = json.loads((tmp_path / "ours" / "index.json").read_text())
    for key in ("data_format", "data_spec", "item_loader", "temporal_schema"):
        assert ours["config"][key] == theirs["config"][key], key
    for mine, their in zip(ours["chunks"], theirs["chunks"], strict=True):
        for key in ("chunk_bytes", "chunk_size", "temporal_frames", "temporal_offsets"):
            assert mine[key] == their[key], key
        mine_bytes = (tmp_path / "ours" / mine["filename"]).read_bytes()
        assert mine_bytes == (tmp_path / "theirs" / their["filename"]).read_bytes()


def test_windows_and_frame_counts_match_litdatas(tmp_path):
    records = [media_samples.temporal_record(i) for i in range(len(media_samples.TRACKS))]
    loader = ld.TemporalArrayLoader(field_groups=[["score", "valid"]])
    ld.write_dataset(records, tmp_path / "ds", chunk_size=3, item_loader=loader)
    counts, *windows = _peer("temporal-windows", tmp_path / "ds", cwd=tmp_path)
    dataset = ld.StreamingDataset(tmp_path / "ds", item_loader=ld.TemporalArrayLoader())
    assert dataset.frame_counts == json.loads(counts) == list(media_samples.TRACKS)
    ours = [
        media_samples.temporal_summary(dataset.read_window(index, start, frames, fields))
        for index, start, frames, fields in media_samples.WINDOWS
    ]
    assert ours == [json.loads(line) for line in windows]
