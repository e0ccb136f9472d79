"""TemporalArrayLoader: records of arrays with a shared frame axis, in LitData's layout."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
import torch

import litdata as ld
from litdata.core.errors import SampleError


def _record(index: int, frames: int) -> dict:
    return {
        "features": np.arange(frames * 2, dtype=np.float32).reshape(frames, 2) + index,
        "score": np.linspace(0, 1, frames, dtype=np.float32),
        "valid": np.arange(frames) % 2 == 0,
        "steps": torch.arange(frames, dtype=torch.int64) * index,
    }


RECORDS = [_record(index, frames) for index, frames in enumerate([10, 6, 7, 1])]


def _equal(actual: dict, expected: dict) -> None:
    assert list(actual) == list(expected)
    for name, value in expected.items():
        assert type(actual[name]) is type(value), name
        if isinstance(value, torch.Tensor):
            assert torch.equal(actual[name], value), name
        else:
            np.testing.assert_array_equal(actual[name], value)
            assert actual[name].dtype == value.dtype


def test_records_round_trip_with_their_groups_and_index_keys(tmp_path):
    loader = ld.TemporalArrayLoader(field_groups=[["score", "valid"]])
    ld.write_dataset(RECORDS, tmp_path / "ds", chunk_size=3, item_loader=loader)
    index = json.loads((tmp_path / "ds" / "index.json").read_text())
    config = index["config"]
    assert (config["item_loader"], config["data_format"]) == ("TemporalArrayLoader", ["bytes"])
    assert config["temporal_schema"]["groups"] == [["score", "valid"], ["features"], ["steps"]]
    assert config["temporal_schema"]["fields"]["steps"] == {
        "dtype": "<i8",
        "shape": [],
        "tensor": True,
    }
    first = index["chunks"][0]
    assert first["temporal_frames"] == [10, 6, 7]
    # Rows: score+valid aligned to 8 bytes (with 3 padding bytes), features 8, steps 8.
    assert first["temporal_offsets"] == [20, 20 + 4 + 10 * 24, 20 + 8 + 16 * 24]
    assert index["chunks"][1]["temporal_frames"] == [1]
    data = (tmp_path / "ds" / first["filename"]).read_bytes()
    assert struct.unpack_from("<I", data, 20) == (10,)
    for reader_loader in (ld.TemporalArrayLoader(), None):
        dataset = ld.StreamingDataset(tmp_path / "ds", item_loader=reader_loader)
        assert len(dataset) == len(RECORDS)
        for position, record in enumerate(RECORDS):
            _equal(dataset[position], record)


def test_iteration_gives_every_record(tmp_path):
    ld.write_dataset(RECORDS, tmp_path / "ds", chunk_size=2, item_loader=ld.TemporalArrayLoader())
    seen = list(ld.StreamingDataset(tmp_path / "ds", item_loader=ld.TemporalArrayLoader()))
    for actual, expected in zip(seen, RECORDS, strict=True):
        _equal(actual, expected)


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ({"features": np.zeros((3, 2), np.float64)}, "fields"),
        ({**RECORDS[0], "features": np.zeros((10, 2), np.float64)}, "features"),
        ({**RECORDS[0], "features": np.zeros((10, 3), np.float32)}, "features"),
        ({**RECORDS[0], "score": np.zeros(4, np.float32)}, "frames"),
        ({**RECORDS[0], "steps": np.zeros(10, np.int64)}, "steps"),
        ([1, 2], "dicts of arrays"),
    ],
)
def test_records_unlike_the_first_are_refused(tmp_path, second, message):
    with pytest.raises(SampleError, match=message):
        ld.write_dataset(
            [RECORDS[0], second],
            tmp_path / "ds",
            chunk_size=2,
            item_loader=ld.TemporalArrayLoader(),
        )


def test_groups_must_name_fields_once(tmp_path):
    with pytest.raises(SampleError, match="at most once"):
        ld.write_dataset(
            RECORDS[:1],
            tmp_path / "ds",
            chunk_size=2,
            item_loader=ld.TemporalArrayLoader(field_groups=[["score", "nope"]]),
        )
    with pytest.raises(ValueError, match="lists of field names"):
        ld.TemporalArrayLoader(field_groups=["score"])


@pytest.fixture
def tracks(tmp_path):
    loader = ld.TemporalArrayLoader(field_groups=[["score", "valid"]])
    ld.write_dataset(RECORDS, tmp_path / "ds", chunk_size=3, item_loader=loader)
    return ld.StreamingDataset(tmp_path / "ds", item_loader=ld.TemporalArrayLoader())


def test_windows_are_the_records_frames(tracks):
    window = tracks.read_window(0, start=3, frames=4, fields=["steps", "features"])
    assert list(window) == ["steps", "features"]
    _equal(window, {"steps": RECORDS[0]["steps"][3:7], "features": RECORDS[0]["features"][3:7]})
    whole = tracks.read_window(2, 0, 7)
    _equal(whole, RECORDS[2])
    assert tracks.read_window(3, 1, 0, fields=["valid"])["valid"].shape == (0,)
    assert tracks.read_window(1, 0, 2, fields=[]) == {}
    window["features"][0, 0] = -1  # windows own their memory
    assert tracks[0]["features"][3, 0] != -1


def test_frame_counts_follow_the_dataset_order_and_selection(tracks, tmp_path):
    assert tracks.frame_counts == [10, 6, 7, 1]
    first, second = ld.train_test_split(tracks, [0.5, 0.5], shuffle=False)
    assert first.frame_counts + second.frame_counts == [10, 6, 7, 1]


@pytest.mark.parametrize(
    ("args", "error"),
    [((1, 5, 4), IndexError), ((1, -1, 2), IndexError), ((9, 0, 1), IndexError)],
)
def test_windows_outside_a_record_are_refused(tracks, args, error):
    with pytest.raises(error):
        tracks.read_window(*args)


def test_unknown_fields_and_other_datasets_are_refused(tracks, tmp_path):
    with pytest.raises(KeyError, match="nope"):
        tracks.read_window(0, 0, 1, fields=["nope"])
    ld.write_dataset([{"x": 1}], tmp_path / "plain", chunk_size=1)
    with pytest.raises(TypeError, match="TemporalArrayLoader"):
        ld.StreamingDataset(tmp_path / "plain").read_window(0, 0, 1)
