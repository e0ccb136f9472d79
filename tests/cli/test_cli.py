"""The ``litdata`` command line on real datasets: local folders and a real S3 server."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import litdata as ld
from litdata.cli import main
from litdata.observe import enable_tracer
from litdata.observe import tracer as tracing


def _sample(i):
    return {"image": np.full((4, 4), i, dtype=np.uint8), "label": i, "name": f"s{i}"}


@pytest.fixture
def dataset(tmp_path):
    ld.write_dataset((_sample(i) for i in range(30)), tmp_path / "ds", chunk_size=10)
    return tmp_path / "ds"


def test_without_a_command_it_prints_help_with_examples():
    result = subprocess.run(
        [sys.executable, "-m", "litdata.cli"], capture_output=True, text=True, check=True
    )
    assert "inspect" in result.stdout
    assert "examples:" in result.stdout
    assert "trace convert" in result.stdout
    assert "130 stopped with Ctrl-C" in result.stdout
    wrong = subprocess.run(
        [sys.executable, "-m", "litdata.cli", "cache", "nuke"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert wrong.returncode == 2
    assert "invalid choice: 'nuke'" in wrong.stderr


def test_inspect_shows_size_codecs_structure_and_samples(dataset, capsys):
    assert main(["inspect", str(dataset), "--samples", "2"]) == 0
    out = capsys.readouterr().out
    assert "items        30" in out
    assert "chunks       3 (target 10 items each)" in out
    assert "leaf codecs" in out
    assert "written by   litdata, format version" in out
    assert "'image': ndarray(shape=(4, 4), dtype=uint8)" in out
    assert "'label': int 0" in out
    assert "'name': str 's0'" in out
    assert "sample 1: {'image': array(" in out


def test_inspect_a_missing_dataset_is_an_error_for_humans(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "nothing")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: The provided dataset path `")
    assert "does not exist" in err
    assert "Traceback" not in err


def test_inspect_and_verify_an_s3_dataset(s3_server, capsys, monkeypatch):
    url = s3_server.url(s3_server.new_bucket(), "ds")
    options = s3_server.storage_options
    ld.write_dataset((_sample(i) for i in range(30)), url, chunk_size=10, storage_options=options)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    assert main(["inspect", url, "--samples", "1"]) == 0
    out = capsys.readouterr().out
    assert f"location     {url}" in out
    assert "items        30" in out
    assert main(["verify", url, "--quiet"]) == 0
    assert "3 chunks, 30 items, 0 problems" in capsys.readouterr().out

    import boto3

    client = boto3.client("s3", **options)
    bucket, prefix = url.removeprefix("s3://").split("/", 1)
    key = f"{prefix}/chunk-0-1.bin"
    data = bytearray(client.get_object(Bucket=bucket, Key=key)["Body"].read())
    data[len(data) // 2] ^= 0x10
    client.put_object(Bucket=bucket, Key=key, Body=bytes(data))
    client.delete_object(Bucket=bucket, Key=f"{prefix}/chunk-0-2.bin")
    assert main(["verify", url, "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "error: chunk-0-1.bin:" in out
    assert "error: chunk-0-2.bin: missing" in out
    assert "chunk-0-0.bin" not in out


def test_verify_names_the_chunk_with_a_flipped_byte_and_says_truncated(dataset, capsys):
    chunk = dataset / "chunk-0-2.bin"
    data = bytearray(chunk.read_bytes())
    data[-2] ^= 0x01
    chunk.write_bytes(bytes(data))
    (dataset / "chunk-0-0.bin").write_bytes((dataset / "chunk-0-0.bin").read_bytes()[:-5])
    assert main(["verify", str(dataset), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "error: chunk-0-2.bin:" in out
    assert "error: chunk-0-0.bin: truncated" in out
    assert "chunk-0-1.bin" not in out
    assert "2 problems" in out


def test_cache_du_lists_each_cached_dataset(tmp_path, capsys):
    ld.write_dataset(
        (_sample(i) for i in range(30)), tmp_path / "z", chunk_size=10, compression="zstd"
    )
    cache = tmp_path / "cache"
    assert len(list(ld.StreamingDataset(str(tmp_path / "z"), cache_dir=str(cache)))) == 30
    assert main(["cache", "du", "--cache-dir", str(cache)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert "3 chunks" in lines[0]
    assert lines[1].endswith(f"total in {cache}")
    assert main(["cache", "du", "--cache-dir", str(tmp_path / "none")]) == 0
    assert "nothing cached" in capsys.readouterr().out


def test_optimize_from_the_command_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "prep.py").write_text(
        textwrap.dedent(
            """
        def to_sample(name):
            return {"name": name, "length": len(name)}

        def inputs():
            return [f"file-{i}" for i in range(25)]
        """
        )
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    args = [
        "optimize",
        "prep.py:to_sample",
        "--inputs-fn",
        "prep:inputs",
        "--output",
        str(out),
        "--chunk-size",
        "10",
        "--num-workers",
        "2",
    ]
    assert main(args) == 0
    assert sorted(s["name"] for s in ld.StreamingDataset(str(out))) == sorted(
        f"file-{i}" for i in range(25)
    )
    listed = [
        "optimize",
        "prep:to_sample",
        "--inputs",
        "a",
        "bb",
        "--output",
        str(tmp_path / "o2"),
        "--num-workers",
        "1",
    ]
    assert main(listed) == 0
    assert [s["length"] for s in ld.StreamingDataset(str(tmp_path / "o2"))] == [1, 2]
    capsys.readouterr()
    assert main(["optimize", "prep:nope", "--inputs", "a", "--output", str(tmp_path / "o3")]) == 1
    assert "error: 'prep:nope': prep has no function 'nope'" in capsys.readouterr().err
    assert main(["optimize", "to_sample", "--inputs", "a", "--output", str(tmp_path / "o3")]) == 1
    assert "is not MODULE:FN" in capsys.readouterr().err


def test_bench_reports_samples_and_megabytes_per_second_per_worker_count(dataset, capsys):
    assert (
        main(["bench", str(dataset), "--workers", "0,1", "--seconds", "0.5", "--batch-size", "5"])
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"Streaming {dataset} with 2 worker count(s), about 0.5 s each")
    assert lines[1].split() == ["workers", "samples/s", "MB/s", "startup"]
    rows = [line.split() for line in lines[2:4]]
    assert [row[0] for row in rows] == ["0", "1"]
    assert all(float(row[1].replace(",", "")) > 0 for row in rows)
    assert lines[4].startswith("num_workers=")
    assert main(["bench", str(dataset), "--workers", "two"]) == 2


def test_trace_convert(dataset, tmp_path, capsys, monkeypatch):
    log = tmp_path / "trace.log"
    for name in ("LITDATA_TRACE_LEVEL", "LITDATA_TRACE_CATEGORIES", "LITDATA_LOG_FILE"):
        monkeypatch.setenv(name, "")  # enable_tracer exports its settings; undone after the test
    try:
        enable_tracer(level="chunk", log_file=str(log))
        assert (
            len(list(ld.StreamingDataLoader(ld.StreamingDataset(str(dataset)), batch_size=10))) == 3
        )
    finally:
        enable_tracer(level="off", log_file=str(log))
    assert tracing.current() is None
    output = tmp_path / "trace.json"
    assert main(["trace", "convert", str(log), "-o", str(output), "--cat", "read,batch"]) == 0
    out = capsys.readouterr().out
    assert "unmatched: 0 begin, 0 end; crashes: 0" in out
    events = json.loads(output.read_text())["traceEvents"]
    assert {e["cat"] for e in events if e["ph"] == "X"} == {"read", "batch"}
    assert main(["trace", "convert", str(tmp_path / "missing.log")]) == 1
    assert "error: no trace log at" in capsys.readouterr().err
    assert main(["trace", "convert", str(log), "--cat", "downlaod"]) == 2
    assert "Unknown trace categories ['downlaod']" in capsys.readouterr().err
    not_a_log = tmp_path / "passwd"
    not_a_log.write_text("root:x:0:0:root:/root:/bin/bash\n")
    assert main(["trace", "convert", str(not_a_log), "-o", str(tmp_path / "x.json")]) == 1
    assert "holds no trace events" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()  # nothing written before failing


@pytest.mark.parametrize("codec", ["zstd", "lz4"])
def test_verify_says_truncated_for_a_cut_compressed_chunk(tmp_path, capsys, codec):
    samples = ({"x": np.arange(200) + i} for i in range(30))
    ld.write_dataset(samples, tmp_path / "ds", chunk_size=10, compression=codec)
    chunk = tmp_path / "ds" / f"chunk-0-1.{codec}.bin"
    chunk.write_bytes(chunk.read_bytes()[:-9])
    assert main(["verify", str(tmp_path / "ds"), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert f"error: chunk-0-1.{codec}.bin: truncated" in out
    assert "checksum" not in out.splitlines()[0]
