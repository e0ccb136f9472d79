"""Datasets written right now by the real MosaicML Streaming and WebDataset, read here.

Runs when ``LITDATA_PEER_PYTHON`` points at the peers' python (``bench/peers.py`` builds it,
with mosaicml-streaming and webdataset). Every sample is compared with what Mosaic's own
``StreamingDataset`` returns for it.
"""

import json
from pathlib import Path

import pytest
from canonical import canonical, first_difference
from mds_samples import wds_rows, wds_sample
from peer import MARKS, run_peer

import litdata as ld

pytestmark = MARKS
SCRIPT = Path(__file__).with_name("mds_with_mosaic.py")


def _peer(tmp_path, *args, env=None):
    run_peer(SCRIPT, *args, cwd=tmp_path, env=env)


def _mosaic_read(tmp_path, folder):
    out = tmp_path / "mosaic.json"
    _peer(tmp_path, "read", folder, out)
    return json.loads(out.read_text())["samples"]


@pytest.mark.parametrize("codec", ["none", "zstd:7", "gz", "bz2", "snappy", "br"])
def test_every_codec_reads_as_mosaic_reads_it(tmp_path, codec):
    folder = tmp_path / "ds"
    _peer(tmp_path, "write", folder, codec, 40, 20000, "--hashes")
    want = _mosaic_read(tmp_path, folder)
    reader = ld.DatasetReader(folder)
    got = [canonical(reader[i]) for i in range(len(reader))]
    assert len(got) == len(want) == 40
    assert first_difference(got, want, codec) is None
    stream = ld.StreamingDataLoader(
        ld.StreamingDataset(folder, shuffle=True), batch_size=3, num_workers=2, collate_fn=list
    )
    streamed = sorted(json.dumps(canonical(s)) for batch in stream for s in batch)
    assert streamed == sorted(json.dumps(w) for w in want)


def test_what_mdswriter_uploads_to_s3_streams(s3_server, tmp_path):
    url = s3_server.url(s3_server.new_bucket(), "mds")
    options = s3_server.storage_options
    env = {
        "S3_ENDPOINT_URL": s3_server.endpoint,
        "AWS_ACCESS_KEY_ID": options["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": options["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": options["region_name"],
    }
    _peer(tmp_path, "write", url, "zstd", 60, 400, "--simple", env=env)
    stream = ld.StreamingDataset(url, shuffle=True, storage_options=options)
    loader = ld.StreamingDataLoader(stream, batch_size=8, num_workers=2)
    seen = sorted(int(i) for batch in loader for i in batch["id"])
    assert seen == list(range(60))


def test_webdataset_shards_ingest_into_optimize(tmp_path):
    _peer(tmp_path, "wds", tmp_path / "shard-%03d.tar", 50, 20)
    tars = sorted(tmp_path.glob("shard-*.tar"))
    assert len(tars) == 3
    samples = [sample for tar in tars for sample in ld.iter_webdataset_tar(tar)]
    assert [s["__key__"] for s in samples] == [f"sample{i:05d}" for i in range(50)]
    for index, sample in enumerate(samples):
        written = wds_sample(index)
        assert sample["txt"] == written["txt"].encode()
        assert sample["bin"] == written["bin"]
        assert json.loads(sample["json"]) == {"index": index}
    ld.optimize(
        fn=wds_rows,
        inputs=[str(tar) for tar in tars],
        output_dir=str(tmp_path / "optimized"),
        chunk_size=16,
        num_workers=2,
    )
    rows = sorted(ld.StreamingDataset(tmp_path / "optimized"), key=lambda row: row["key"])
    assert [row["key"] for row in rows] == [f"sample{i:05d}" for i in range(50)]
    assert rows[7]["label"] == 7


def test_webdataset_shards_stream_as_they_are(tmp_path):
    folder = tmp_path / "shards"
    folder.mkdir()
    _peer(tmp_path, "wds", folder / "shard-%03d.tar", 70, 16)
    stream = ld.StreamingDataset(folder, shuffle=True)
    loader = ld.StreamingDataLoader(stream, batch_size=5, num_workers=2, collate_fn=list)
    samples = sorted((s for batch in loader for s in batch), key=lambda s: s["__key__"])
    assert [s["__key__"] for s in samples] == [f"sample{i:05d}" for i in range(70)]
    for index, sample in enumerate(samples):
        assert sample["txt"] == wds_sample(index)["txt"].encode()
        assert sample["bin"] == wds_sample(index)["bin"]
