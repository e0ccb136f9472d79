"""A damaged or forged provenance log is an error naming the file and the byte, never a crash."""

from __future__ import annotations

import struct

import pytest

import litdata as ld
from litdata.cli import main
from litdata.streaming.control.provenance_log import MAGIC


@pytest.fixture
def log(tmp_path):
    folder = tmp_path / "data"
    ld.write_dataset(({"id": i} for i in range(100)), folder, chunk_size=10)
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(folder), batch_size=10, provenance_dir=tmp_path / "ids"
    )
    assert len(list(loader)) == 10
    return tmp_path / "ids" / "rank-0.ids"


@pytest.mark.fault("provenance log cut short, forged count or not a log")
@pytest.mark.parametrize("damage", ["cut record", "cut header", "huge count", "no magic"])
def test_a_damaged_log_is_named(log, record, capsys, damage):
    record.fault += f": {damage}"
    data = log.read_bytes()
    if damage == "cut record":
        forged = data[:-3]
        expected = "says 10 samples, more than the 97 bytes left"
    elif damage == "cut header":
        forged = data + b"\x01\x02\x03"
        expected = "cut short"
    elif damage == "huge count":
        forged = data + struct.pack("<IQI", 1, 10, 2**32 - 1)
        expected = "says 4294967295 samples"
    else:
        forged = b"NOTLOG" + data[len(MAGIC) - 1 :]
        expected = "does not start with"
    log.write_bytes(forged)
    record.start()
    code = main(["provenance", str(log.parent), "--step", "9"])
    record.failed()
    err = capsys.readouterr().err
    assert code == 1
    assert expected in err
    assert str(log) in err
    record(f"exit 1, one error line naming {log.name} and what is wrong")
