"""JSON nested 100,000 levels deep wherever a dataset holds JSON, and the CLI on bad datasets.

Python's decoder recurses once per level: a crafted file used to surface as a bare
``RecursionError``. Each test here puts such a document where a reader decodes one (an
``index.json``, an MDS index, ``data_spec``, a raw dataset's kept listing, a compact index's
entry) and checks for a ``DatasetFormatError`` naming the file, or, where the file is a cache
documented to be rebuilt, the right samples.
"""

from __future__ import annotations

import json

import pytest
import zstandard
from hostile import forge
from support.cli_process import litdata
from support.mds_fixtures import write_shards

import litdata as ld
from litdata.core.compact import COMPACT_FILENAME
from litdata.core.errors import DatasetFormatError
from litdata.engine.cache.directory import cache_home

pytestmark = pytest.mark.timeout(120)

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.fault("index.json nested 100,000 levels deep")
def test_a_deep_index_is_refused(tmp_path, record):
    folder = forge.dataset(tmp_path / "ds")
    (folder / COMPACT_FILENAME).unlink()
    (folder / "index.json").write_text(DEEP)
    record.start()
    with pytest.raises(DatasetFormatError, match="nests JSON values deeper") as error:
        ld.StreamingDataset(str(folder))
    record.failed()
    assert "index.json" in str(error.value)
    record("DatasetFormatError naming index.json")


@pytest.mark.fault("an MDS index.json nested 100,000 levels deep")
def test_a_deep_mds_index_is_refused(tmp_path, record):
    folder = write_shards(tmp_path / "mds", {"text": "str"}, [[b"a"], [b"b"]])
    index = json.loads((folder / "index.json").read_text())
    index["shards"][0]["hashes"] = "@"
    (folder / "index.json").write_text(json.dumps(index).replace('"@"', DEEP))
    record.start()
    with pytest.raises(DatasetFormatError, match="nests JSON values deeper") as error:
        ld.StreamingDataset(str(folder))
    record.failed()
    assert "index.json" in str(error.value)
    record("DatasetFormatError naming the MDS index.json")


@pytest.mark.fault("data_spec nested 100,000 levels deep, or garbage")
@pytest.mark.parametrize("spec", ["deep", "garbage"])
def test_a_bad_data_spec_is_refused(tmp_path, record, spec):
    record.fault += f": {spec}"
    folder = forge.dataset(tmp_path / "ds")
    value = DEEP if spec == "deep" else '[1, {"type": 7}]'
    forge.edit_index(folder, lambda index: index["config"].update(data_spec=value))
    record.start()
    with pytest.raises(DatasetFormatError, match="data_spec"):
        list(ld.StreamingDataset(str(folder)))
    record.failed()
    record("DatasetFormatError naming data_spec")


@pytest.mark.fault("a compact index whose head is JSON nested 100,000 levels deep")
def test_a_deep_compact_head_is_skipped_and_rebuilt(tmp_path, record, monkeypatch, caplog):
    monkeypatch.setenv("LITDATA_CACHE_DIR", str(tmp_path / "cache"))
    folder = forge.dataset(tmp_path / "ds")
    forge.edit_index(folder, lambda index: index.update(note="@" * len(DEEP)))
    ld.StreamingDataset(str(folder))  # the compact index is built in the cache
    note = b'"' + b"@" * len(DEEP) + b'"'
    compacts = [path for path in tmp_path.rglob(COMPACT_FILENAME) if note in path.read_bytes()]
    assert compacts
    for compact in compacts:  # the same length: only the entry's text changes
        compact.write_bytes(compact.read_bytes().replace(note, DEEP.encode() + b"  "))
    items = forge.read_everything(folder)
    assert "nests JSON values deeper" in caplog.text  # it was read, and refused
    assert sorted(item["id"] for item in items) == sorted(list(range(forge.COUNT)) * 2)
    record(
        "the damaged compact index is set aside and rebuilt; every sample right",
        wrong=sum(not forge.is_right(item) for item in items),
    )


@pytest.mark.fault("a raw dataset's kept listing nested 100,000 levels deep")
def test_a_deep_raw_listing_is_listed_again(tmp_path, record):
    data = tmp_path / "data"
    data.mkdir()
    for number in range(5):
        (data / f"f{number}.bin").write_bytes(bytes([number]) * 10)
    cache = tmp_path / "cache"
    first = ld.StreamingRawDataset(str(data), cache_dir=str(cache))
    kept = cache_home(first.input_dir, str(cache)) / "index.json.zstd"
    kept.write_bytes(zstandard.ZstdCompressor().compress(DEEP.encode()))
    again = ld.StreamingRawDataset(str(data), cache_dir=str(cache))
    assert [again[i] for i in range(5)] == [bytes([i]) * 10 for i in range(5)]
    record("the kept listing ignored and listed again; every file right")


@pytest.mark.fault("litdata verify/inspect on a deep index.json and a garbage data_spec")
@pytest.mark.parametrize("command", ["verify", "inspect"])
@pytest.mark.parametrize("damage", ["deep index", "garbage data_spec"])
def test_the_cli_reports_a_bad_dataset_without_a_traceback(tmp_path, record, command, damage):
    record.fault += f": {command}, {damage}"
    folder = forge.dataset(tmp_path / "ds")
    if damage == "deep index":
        (folder / COMPACT_FILENAME).unlink()
        (folder / "index.json").write_text(DEEP)
    else:
        forge.edit_index(folder, lambda index: index["config"].update(data_spec="[1, 2, 3]"))
    with pytest.raises(DatasetFormatError):  # every reader refuses it
        list(ld.StreamingDataset(str(folder)))
    record.start()
    result = litdata(command, folder, timeout=60)
    record.failed()
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output
    assert ("index.json" if damage == "deep index" else "data_spec") in output
    record("exit 1, one error line naming the file or field, no traceback")
