"""A keys sidecar (``keys/shard-00000.parquet``) that lies or is cut short."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support import fns

import litdata as ld
from litdata.core.errors import DatasetFormatError

pytestmark = pytest.mark.timeout(120)


def _keyed(folder):
    ld.optimize(
        fns.keyed, list(range(100)), str(folder), chunk_size=16, key_fn=fns.uid, num_workers=1
    )
    return folder / "keys" / "shard-00000.parquet"


@pytest.mark.fault("keys sidecar: a row gives a key the index -1")
def test_a_negative_index_in_the_sidecar_is_refused(tmp_path, record):
    shard = _keyed(tmp_path / "ds")
    table = pq.read_table(shard)
    rows = table.to_pydict()
    rows["index"][rows["key"].index("user-7")] = -1
    pq.write_table(pa.Table.from_pydict(rows, schema=table.schema), shard)
    data = ld.StreamingDataset(str(tmp_path / "ds"))
    assert data["user-8"] == {"uid": "user-8", "value": 8}
    record.start()
    with pytest.raises(DatasetFormatError, match="index -1") as error:
        data["user-7"]
    record.failed()
    assert str(shard) in str(error.value)
    record("DatasetFormatError naming the sidecar and the index; no other sample returned")


@pytest.mark.fault("keys sidecar truncated")
def test_a_truncated_sidecar_names_the_file(tmp_path, record):
    shard = _keyed(tmp_path / "ds")
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    data = ld.StreamingDataset(str(tmp_path / "ds"))
    assert data[3]["value"] in range(100)  # positional reads need no sidecar
    record.start()
    with pytest.raises(DatasetFormatError, match="keys sidecar") as error:
        data["user-7"]
    record.failed()
    assert str(shard) in str(error.value)
    record("DatasetFormatError naming the sidecar file")
