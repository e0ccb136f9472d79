"""Keys sidecars cross between litdata and LitData 0.2.76, both ways.

Runs when ``LITDATA_PEER_PYTHON`` points at a python with LitData installed.
"""

import json
from pathlib import Path

import pytest
from peer import MARKS, run_peer

import litdata as ld

fns = pytest.importorskip("support.fns")
pytestmark = MARKS
SCRIPT = Path(__file__).with_name("keyed_with_litdata.py")


def _peer(*args, cwd):
    return run_peer(SCRIPT, *args, cwd=cwd)


def test_we_look_up_keys_litdata_wrote(tmp_path):
    _peer("write", tmp_path / "ds", cwd=tmp_path)
    ds = ld.StreamingDataset(str(tmp_path / "ds"))
    assert all(ds[f"user-{i}"] == {"uid": f"user-{i}", "value": i} for i in range(60))
    with pytest.raises(KeyError):
        ds["user-60"]


def test_litdata_looks_up_keys_we_wrote(tmp_path):
    ld.optimize(
        fns.keyed,
        list(range(60)),
        str(tmp_path / "ds"),
        chunk_size=16,
        num_workers=2,
        key_fn=fns.uid,
        verbose=False,
    )
    wanted = ["user-0", "user-37", "user-59"]
    rows = [
        json.loads(line)
        for line in _peer("read", tmp_path / "ds", *wanted, cwd=tmp_path).splitlines()
    ]
    assert rows == [{"uid": key, "value": int(key.split("-")[1])} for key in wanted]


def test_litdata_reads_a_dataset_we_updated(tmp_path):
    ld.optimize(
        fns.keyed,
        list(range(60)),
        str(tmp_path / "ds"),
        chunk_size=16,
        num_workers=1,
        key_fn=fns.uid,
        verbose=False,
    )
    with ld.dataset_update(tmp_path / "ds") as update:
        update["user-37"] = {"uid": "user-37", "value": -37}
        update.commit()
    rows = [
        json.loads(line)
        for line in _peer("read", tmp_path / "ds", "user-37", "user-36", cwd=tmp_path).splitlines()
    ]
    assert rows == [{"uid": "user-37", "value": -37}, {"uid": "user-36", "value": 36}]
