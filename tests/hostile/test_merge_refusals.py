"""``merge_datasets`` of inputs that must not merge: refused, with nothing left in the output."""

from __future__ import annotations

import os

import pytest
from support import fns

import litdata as ld
from litdata.core.errors import DatasetFormatError, DecryptionError
from litdata.plugins.encryption.fernet import FernetEncryption

pytestmark = pytest.mark.timeout(120)


@pytest.mark.fault("merge_datasets of two datasets encrypted with different Fernet keys")
def test_datasets_of_different_keys_do_not_merge(tmp_path, record):
    keys = [FernetEncryption("one password"), FernetEncryption("another password")]
    for number, key in enumerate(keys):
        samples = [{"id": number * 100 + i} for i in range(20)]
        ld.write_dataset(samples, tmp_path / f"in{number}", chunk_size=10, encryption=key)
    record.start()
    with pytest.raises(ValueError, match="encrypted with different keys"):
        ld.merge_datasets([str(tmp_path / "in0"), str(tmp_path / "in1")], str(tmp_path / "out"))
    record.failed()
    assert not (tmp_path / "out").exists() or not os.listdir(tmp_path / "out")
    with pytest.raises(DecryptionError, match="does not decrypt"):  # named at open, not per item
        ld.StreamingDataset(str(tmp_path / "in1"), encryption=keys[0])[0]
    same = FernetEncryption("one password")  # the same password, another salt: another key
    ld.write_dataset([{"id": 1}], tmp_path / "in2", chunk_size=10, encryption=same)
    with pytest.raises(ValueError, match="encrypted with different keys"):
        ld.merge_datasets([str(tmp_path / "in0"), str(tmp_path / "in2")], str(tmp_path / "out"))
    record("ValueError naming the two key ids; no output written")


@pytest.mark.fault("merge_datasets refused for duplicate keys")
def test_a_merge_refused_for_duplicate_keys_leaves_nothing(tmp_path, record):
    for name in ("a", "b"):
        ld.optimize(fns.keyed, list(range(30)), str(tmp_path / name), chunk_size=8, key_fn=fns.uid)
    output = tmp_path / "out"
    record.start()
    with pytest.raises(DatasetFormatError, match="Duplicate keys"):
        ld.merge_datasets([str(tmp_path / "a"), str(tmp_path / "b")], str(output))
    record.failed()
    assert not output.exists(), sorted(os.listdir(output))
    (output).mkdir()  # an output folder the user made: kept, and still empty
    with pytest.raises(DatasetFormatError, match="Duplicate keys"):
        ld.merge_datasets([str(tmp_path / "a"), str(tmp_path / "b")], str(output))
    assert os.listdir(output) == []
    record("DatasetFormatError naming the keys; no chunk, lock file or keys/ left")
