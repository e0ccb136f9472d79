"""dataset_update on real datasets: only affected chunks rewritten, atomic, locked, refusals."""

from __future__ import annotations

import json
import os

import pytest

import litdata as ld
from litdata.core.errors import DatasetFormatError, OutputLockedError
from litdata.plugins.encryption.fernet import FernetEncryption

fns = pytest.importorskip("support.fns")


def _dataset(path, count=100, **options):
    ld.optimize(
        fns.keyed,
        list(range(count)),
        str(path),
        chunk_size=16,
        num_workers=1,
        key_fn=fns.uid,
        verbose=False,
        **options,
    )
    return path


def _values(path, **options):
    reader = ld.DatasetReader(path, verify=True, **options)
    return {reader[i]["uid"]: reader[i]["value"] for i in range(len(reader))}


def _snapshot(path):
    return {
        name: (path / name).read_bytes() for name in os.listdir(path) if (path / name).is_file()
    }


def test_an_update_rewrites_only_the_chunks_it_touches(tmp_path):
    path = _dataset(tmp_path)
    before = json.loads((path / "index.json").read_text())
    with ld.dataset_update(path) as update:
        update["user-3"] = {"uid": "user-3", "value": -3}
        update.replace("user-90", {"uid": "user-90", "value": -90})
        assert len(update) == 2
        update.commit()
    after = json.loads((path / "index.json").read_text())
    changed = [
        (old["filename"], new["filename"])
        for old, new in zip(before["chunks"], after["chunks"], strict=True)
        if old != new
    ]
    assert changed == [("chunk-0-0.bin", "chunk-0-0-u1.bin"), ("chunk-0-5.bin", "chunk-0-5-u1.bin")]
    assert after["updated_at"] != before["updated_at"]
    assert after["keys"] == before["keys"]
    expected = {f"user-{i}": i for i in range(100)} | {"user-3": -3, "user-90": -90}
    assert _values(path) == expected  # every chunk checked against its new checksum
    assert ld.StreamingDataset(str(path))["user-90"] == {"uid": "user-90", "value": -90}


def test_a_reader_opened_before_keeps_its_version(tmp_path):
    path = _dataset(tmp_path)
    old = ld.StreamingDataset(str(path))
    first = [sample["value"] for _, sample in zip(range(5), old, strict=False)]
    with ld.dataset_update(path) as update:
        for i in range(0, 100, 7):
            update[f"user-{i}"] = {"uid": f"user-{i}", "value": 1000 + i}
        update.commit()
    assert first == [0, 1, 2, 3, 4]
    assert sorted(sample["value"] for sample in old) == list(range(100))  # a whole old epoch
    assert old["user-7"]["value"] == 7
    assert ld.StreamingDataset(str(path))["user-7"]["value"] == 1007
    with ld.dataset_update(path) as update:  # the update after next removes the old files
        update["user-1"] = {"uid": "user-1", "value": -1}
        update.commit()
    assert not (path / "chunk-0-0.bin").exists()
    assert _values(path)["user-1"] == -1
    assert _values(path)["user-7"] == 1007


def test_without_commit_nothing_changes(tmp_path):
    path = _dataset(tmp_path)
    before = _snapshot(path)
    with ld.dataset_update(path) as update:
        update["user-1"] = {"uid": "user-1", "value": -1}
    assert _snapshot(path) == before
    with pytest.raises(RuntimeError, match="cannot be used after commit"):
        update["user-2"] = {"uid": "user-2", "value": -2}


def test_an_unknown_key_or_a_new_structure_changes_nothing(tmp_path):
    path = _dataset(tmp_path)
    before = _snapshot(path)
    with ld.dataset_update(path) as update:
        update["user-1"] = {"uid": "user-1", "value": -1}
        update["nobody"] = {"uid": "nobody", "value": 0}
        with pytest.raises(KeyError, match="Unknown dataset key .nobody."):
            update.commit()
    with ld.dataset_update(path) as update:
        update["user-1"] = {"uid": "user-1", "value": -1}
        update["user-50"] = {"uid": "user-50", "value": "fifty", "extra": 1}
        with pytest.raises(DatasetFormatError, match=r"change the dataset's sample structure"):
            update.commit()
    assert _snapshot(path) == before
    assert not (path / ".litdata-update").exists()


def test_commit_happens_once(tmp_path):
    path = _dataset(tmp_path, 20)
    update = ld.dataset_update(path)
    update["user-1"] = {"uid": "user-1", "value": -1}
    update.commit()
    with pytest.raises(RuntimeError, match="already committed"):
        update.commit()


def test_a_second_updater_or_writer_is_refused(tmp_path):
    path = _dataset(tmp_path, 20)
    with ld.dataset_update(path):
        with pytest.raises(OutputLockedError, match=r"being written by dataset_update \(PID"):
            ld.dataset_update(path)
        with pytest.raises(OutputLockedError):
            _dataset(path, 5, mode="append")
    with ld.dataset_update(path) as update:  # free again
        update["user-0"] = {"uid": "user-0", "value": 5}
        update.commit()


def test_compression_and_encryption_are_kept(tmp_path):
    key = FernetEncryption("pw", level="chunk")
    path = _dataset(tmp_path, 40, compression="zstd", encryption=key)
    with ld.dataset_update(path, encryption=key) as update:
        update["user-20"] = {"uid": "user-20", "value": -20}
        update.commit()
    index = json.loads((path / "index.json").read_text())
    assert index["chunks"][1]["filename"] == "chunk-0-1-u1.zstd.bin"
    assert index["config"]["encryption"]["algorithm"] == "fernet"
    assert _values(path, encryption=key)["user-20"] == -20
    with pytest.raises(ValueError, match="encrypted"):
        _values(path)


def test_datasets_without_keys_and_remote_datasets_are_refused(tmp_path, s3_server):
    ld.optimize(fns.keyed, [1, 2], str(tmp_path), chunk_size=4, num_workers=1, verbose=False)
    with pytest.raises(FileNotFoundError, match="has no keys"):
        ld.dataset_update(tmp_path)
    url = s3_server.url(s3_server.new_bucket(), "ds")
    with pytest.raises(NotImplementedError, match="local datasets only"):
        ld.dataset_update(url)
