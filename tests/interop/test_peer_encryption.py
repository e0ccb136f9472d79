"""Fernet-encrypted datasets and key files cross between litdata and LitData 0.2.76, both ways.

Runs when ``LITDATA_PEER_PYTHON`` points at a python with LitData installed.
"""

import json
from pathlib import Path

import pytest
from peer import MARKS, run_peer

import litdata as ld
from litdata.plugins.encryption.fernet import FernetEncryption

pytestmark = MARKS
SCRIPT = Path(__file__).with_name("encrypted_with_litdata.py")
PASSWORD = "interop password"


def _peer(*args, cwd):
    return run_peer(SCRIPT, *args, cwd=cwd)


@pytest.mark.parametrize("level", ["sample", "chunk"])
def test_we_read_what_litdata_encrypted(tmp_path, level):
    _peer("write", tmp_path / "ds", tmp_path / "key.json", level, cwd=tmp_path)
    key = FernetEncryption.load(tmp_path / "key.json", PASSWORD)
    reader = ld.DatasetReader(tmp_path / "ds", encryption=key)
    assert [reader[i] for i in range(len(reader))] == [
        {"id": i, "text": f"secret {i}" * 20} for i in range(40)
    ]


@pytest.mark.parametrize("level", ["sample", "chunk"])
def test_litdata_reads_what_we_encrypted(tmp_path, level):
    key = FernetEncryption(PASSWORD, level=level)
    samples = [{"id": i, "text": f"ours {i}" * 20} for i in range(40)]
    ld.write_dataset(samples, tmp_path / "ds", chunk_size=10, encryption=key)
    key.save(tmp_path / "key.json")
    rows = [
        json.loads(line)
        for line in _peer("read", tmp_path / "ds", tmp_path / "key.json", cwd=tmp_path).splitlines()
    ]
    assert rows == samples
