import json
import os

import pytest

from litdata.core.errors import DatasetFormatError, DatasetNotFoundError
from litdata.core.index import (
    FORMAT_VERSION,
    ChunkEntry,
    DatasetConfig,
    DatasetIndex,
    load_index,
    parse_index,
    write_index,
)
from litdata.engine.native.rank_indexes import merge_rank_indexes, rank_index_names

CONFIG = DatasetConfig(
    chunk_size=2, data_format=("int",), data_spec=None, item_loader="PyTreeLoader"
)


def _index(*names: str) -> DatasetIndex:
    return DatasetIndex(
        CONFIG, tuple(ChunkEntry(n, 2, 40, checksum="crc32:00000000") for n in names)
    )


def test_written_index_is_litdatas_layout_plus_our_keys(tmp_path):
    write_index(tmp_path / "index.json", _index("chunk-0-0.bin"))
    data = json.loads((tmp_path / "index.json").read_text())
    assert list(data) == sorted(data)  # sort_keys, as LitData writes
    assert set(data["config"]) == {
        "chunk_bytes",
        "chunk_size",
        "compression",
        "data_format",
        "data_spec",
        "encryption",
        "item_loader",
    }
    assert data["chunks"][0] == {
        "chunk_bytes": 40,
        "chunk_size": 2,
        "dim": None,
        "filename": "chunk-0-0.bin",
        "checksum": "crc32:00000000",
    }
    assert data["format_version"] == FORMAT_VERSION
    assert load_index(tmp_path) == _index("chunk-0-0.bin")


def test_unknown_keys_survive_a_round_trip(tmp_path):
    raw = _index("a.bin").to_json()
    raw["config"]["compression_level"] = "batch"
    raw["chunks"][0]["column_sizes"] = [1, None]
    index = parse_index(raw)
    assert index.config.extra == {"compression_level": "batch"}
    assert index.to_json()["chunks"][0]["column_sizes"] == [1, None]


def test_missing_index_says_what_to_do(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="Did optimize"):
        load_index(tmp_path)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("chunks"), "'chunks' is missing"),
        (lambda d: d.pop("config"), "'config' is missing"),
        (lambda d: d["chunks"][0].update(filename="../etc/passwd"), "not a plain file name"),
        (lambda d: d["chunks"][0].update(chunk_size=-1), "chunk_size is -1"),
        (lambda d: d["chunks"][0].update(chunk_bytes="10"), "chunk_bytes is '10'"),
        (lambda d: d["config"].update(data_format="int"), "not a list of serializer names"),
        (lambda d: d.update(format_version=99), "version 99"),
    ],
)
def test_malformed_index_names_file_and_problem(tmp_path, mutate, message):
    raw = _index("chunk-0-0.bin").to_json()
    mutate(raw)
    (tmp_path / "index.json").write_text(json.dumps(raw))
    with pytest.raises(DatasetFormatError, match=message) as caught:
        load_index(tmp_path)
    assert str(tmp_path / "index.json") in str(caught.value)


def test_invalid_json_names_the_file(tmp_path):
    (tmp_path / "index.json").write_text('{"chunks": [')
    with pytest.raises(DatasetFormatError, match="not valid JSON"):
        load_index(tmp_path)


def test_merge_concatenates_in_natural_rank_order_and_cleans_up(tmp_path):
    for rank in (10, 2, 0):
        write_index(tmp_path / f"{rank}.index.json", _index(f"chunk-{rank}-0.bin"))
    assert rank_index_names(os.listdir(tmp_path)) == [
        "0.index.json",
        "2.index.json",
        "10.index.json",
    ]
    merged = merge_rank_indexes(tmp_path)
    assert [c.filename for c in merged.chunks] == [
        "chunk-0-0.bin",
        "chunk-2-0.bin",
        "chunk-10-0.bin",
    ]
    assert merged.updated_at is not None
    assert rank_index_names(os.listdir(tmp_path)) == []
    assert load_index(tmp_path) == merged


def test_merge_appends_after_an_existing_index(tmp_path):
    write_index(tmp_path / "0.index.json", _index("chunk-0-1.bin"))
    merged = merge_rank_indexes(tmp_path, existing=_index("chunk-0-0.bin"))
    assert [c.filename for c in merged.chunks] == ["chunk-0-0.bin", "chunk-0-1.bin"]


def test_merge_refuses_different_configs(tmp_path):
    write_index(tmp_path / "0.index.json", _index("a.bin"))
    other = DatasetIndex(
        DatasetConfig(chunk_size=3, data_format=("int",)), (ChunkEntry("b.bin", 1, 1),)
    )
    write_index(tmp_path / "1.index.json", other)
    with pytest.raises(
        DatasetFormatError, match=r"disagree on chunk_size: 3 in 1\.index\.json but 2"
    ):
        merge_rank_indexes(tmp_path)
    assert not (tmp_path / "index.json").exists()
    assert len(rank_index_names(os.listdir(tmp_path))) == 2  # nothing lost


def test_merge_of_nothing_is_an_error(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="nothing to merge"):
        merge_rank_indexes(tmp_path)


def test_config_differences_name_the_keys_that_differ():
    other = DatasetConfig(
        chunk_size=3,
        data_format=("int",),
        item_loader="PyTreeLoader",
        extra={"compression_level": "item"},
    )
    assert CONFIG.differences(CONFIG) == []
    assert CONFIG.differences(other) == ["chunk_size"]
    assert CONFIG.differences(other, ["compression_level", "data_format"]) == ["compression_level"]
