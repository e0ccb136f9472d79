"""Parquet indexes cross between litdata and LitData 0.2.76, both ways.

Runs when ``LITDATA_PEER_PYTHON`` points at a python with LitData installed. LitData's Parquet
support needs pyarrow, which the peers' venv leaves out (see bench/README.md); it is put on the
peer's path from ``LITDATA_PEER_PYARROW`` (default ``~/.cache/litdata-bench/peer-pyarrow``,
made with ``<peer python> -m pip install --target <dir> --no-deps pyarrow``).
"""

import json
import os
import subprocess
from pathlib import Path

import pytest
from peer import MARKS, PEER, run_peer
from support.parquet_files import read_with_pyarrow, row, write_parquet

import litdata as ld

PYARROW = os.environ.get(
    "LITDATA_PEER_PYARROW", str(Path.home() / ".cache" / "litdata-bench" / "peer-pyarrow")
)
pytestmark = MARKS
COLUMNS = ["id", "text", "tags"]


def _peer(code, cwd):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if os.path.isdir(PYARROW):
        env["PYTHONPATH"] = PYARROW
    found = subprocess.run(
        [PEER, "-c", "import pyarrow"], env=env, cwd=cwd, capture_output=True, check=False
    )
    if found.returncode:
        pytest.skip(f"LitData's Parquet support needs pyarrow in the peer; see {__doc__}")
    return run_peer("-c", code, cwd=cwd, env=env)


def test_we_read_the_index_litdata_wrote(tmp_path):
    write_parquet(tmp_path / "pq", [30, 12, 25], row_group_size=8)
    _peer(f"import litdata; litdata.index_parquet_dataset({str(tmp_path / 'pq')!r})", tmp_path)
    index = json.loads((tmp_path / "pq" / "index.json").read_text())
    assert index["config"]["item_loader"] == "ParquetLoader"
    dataset = ld.StreamingDataset(tmp_path / "pq", item_loader=ld.ParquetLoader())
    order = [chunk["filename"] for chunk in index["chunks"]]  # LitData's listing order
    expected = [r for name in order for r in read_with_pyarrow(tmp_path / "pq", name)]
    assert list(dataset) == expected
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(tmp_path / "pq", shuffle=True),
        batch_size=5,
        num_workers=2,
        collate_fn=list,
    )
    assert sorted(s["id"] for b in loader for s in b) == list(range(67))


def test_litdata_reads_the_index_we_wrote(tmp_path):
    rows = write_parquet(tmp_path / "pq", [30, 12, 25], row_group_size=8)
    ld.index_parquet_dataset(str(tmp_path / "pq"))
    code = (
        "import json, litdata\n"
        "from litdata.streaming.item_loader import ParquetLoader\n"
        f"ds = litdata.StreamingDataset({str(tmp_path / 'pq')!r}, item_loader=ParquetLoader())\n"
        "for sample in ds:\n"
        f"    print(json.dumps({{k: sample[k] for k in {COLUMNS!r}}}))\n"
        "print(json.dumps({k: ds[40][k] for k in " + repr(COLUMNS) + "}))\n"
    )
    lines = [json.loads(line) for line in _peer(code, tmp_path).splitlines()]
    assert lines[:-1] == [{k: r[k] for k in COLUMNS} for r in rows]
    assert lines[-1] == {k: row(40)[k] for k in COLUMNS}
