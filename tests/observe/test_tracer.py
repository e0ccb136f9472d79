"""The pipeline tracer on real datasets: real files, real worker processes, a real S3 server."""

import json
import os
import re
import subprocess
import sys
import textwrap

import jsonschema
import numpy as np
import pytest

import litdata as ld
from litdata.core.errors import ChunkCorruptError
from litdata.observe import convert_trace, enable_tracer
from litdata.observe import tracer as tracing
from litdata.observe.convert import parse_line

# LitData's line format, field by field (Litracer parses exactly this).
LINE = re.compile(
    r"^ts:\d+\.\d{3};PID:\d+; TID:\d+; name: [a-z]+;ph: [BEI];cat: [a-z]+;cname: [a-z_]+;"
    r"(?:[a-z_]+: [^;\n]*;)*dist_world_size: \d+;dist_global_rank: \d+;dist_num_nodes: \d+;"
    r"worker_world_size: \d+;worker_rank: \d+;$"
)

# What Perfetto's JSON importer needs of each event (the Chrome trace event format).
TRACE_SCHEMA = {
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "traceEvents": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["ph", "pid", "tid", "name"],
                "properties": {
                    "ph": {"enum": ["X", "B", "E", "i", "M"]},
                    "pid": {"type": "integer"},
                    "tid": {"type": "integer", "minimum": 0, "maximum": 2**31 - 1},
                    "ts": {"type": "number", "minimum": 0},
                    "dur": {"type": "number", "minimum": 0},
                    "name": {"type": "string", "minLength": 1},
                    "args": {"type": "object"},
                },
                "allOf": [
                    {
                        "if": {"properties": {"ph": {"const": "X"}}},
                        "then": {"required": ["ts", "dur", "cat"]},
                    },
                    {
                        "if": {"properties": {"ph": {"enum": ["B", "E", "i"]}}},
                        "then": {"required": ["ts", "cat"]},
                    },
                    {
                        "if": {"properties": {"ph": {"const": "i"}}},
                        "then": {"required": ["s"]},
                    },
                ],
            },
        }
    },
}


def square(i):
    return {"x": np.full(64, i, dtype=np.int32), "i": i}


@pytest.fixture
def traced(tmp_path, monkeypatch):
    """Tracing on for this test (into tmp_path/trace.log), off again after it."""
    log = tmp_path / "trace.log"
    for name in ("LITDATA_TRACE_LEVEL", "LITDATA_TRACE_CATEGORIES", "LITDATA_LOG_FILE"):
        monkeypatch.delenv(name, raising=False)

    def enable(**options):
        enable_tracer(log_file=str(log), **options)
        return log

    yield enable
    for name in ("LITDATA_TRACE_LEVEL", "LITDATA_TRACE_CATEGORIES", "LITDATA_LOG_FILE"):
        os.environ.pop(name, None)  # enable_tracer exported them, as it does for workers
    assert tracing.reload() is None


def _events(log):
    lines = log.read_text().splitlines()
    bad = [line for line in lines if not LINE.match(line)]
    assert not bad, bad[:3]
    return [parse_line(line) for line in lines]


def test_levels_and_categories():
    assert tracing.categories_for("off", None) == frozenset()
    assert tracing.categories_for("batch", None) == {"epoch", "batch", "crash"}
    chunk = tracing.categories_for("chunk", None)
    assert {"download", "read", "delete", "decompress"} <= chunk
    assert "sample" not in chunk
    assert tracing.categories_for("sample", None) == chunk | {"sample"}
    assert "lock" in tracing.categories_for("debug", None)
    assert tracing.categories_for("debug", "download, read") == {"download", "read"}
    assert tracing.categories_for(None, None) == frozenset()
    with pytest.raises(ValueError, match="Unknown trace level 'loud'"):
        tracing.categories_for("loud", None)
    with pytest.raises(ValueError, match=r"Unknown trace categories \['disk'\]"):
        tracing.categories_for(None, ["disk", "read"])


def test_enable_tracer_exports_its_settings_and_legacy_options(traced):
    traced(level="sample", iterating_dataset=False, item_loader=False)
    assert os.environ["LITDATA_TRACE_LEVEL"] == "sample"
    categories = set(os.environ["LITDATA_TRACE_CATEGORIES"].split(","))
    assert "epoch" not in categories
    assert "sample" not in categories
    assert "read" in categories
    assert tracing.current() is not None
    traced(level="off")
    assert tracing.current() is None
    traced(categories=["epoch"], iterating_dataset=False)  # nothing left to record
    assert tracing.current() is None
    with pytest.raises(ValueError, match="Unknown trace level"):
        enable_tracer(level="verbose")


def test_a_trace_across_two_optimize_workers_and_two_loader_workers(traced, tmp_path):
    log = traced(level="chunk")
    out = tmp_path / "ds"
    ld.optimize(
        square, list(range(120)), str(out), chunk_size=10, num_workers=2, compression="zstd"
    )
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(str(out), shuffle=True), batch_size=8, num_workers=2
    )
    assert sum(len(batch["i"]) for batch in loader) == 120
    events = _events(log)

    def pids(name, **context):
        return {
            e["pid"]
            for e in events
            if e["name"] == name and all(e["context"][k] == v for k, v in context.items())
        }

    optimize_workers = pids("optimize")
    assert len(optimize_workers) == 2
    assert {e["context"]["worker_rank"] for e in events if e["pid"] in optimize_workers} == {0, 1}
    ends = [e for e in events if e["name"] == "optimize" and e["ph"] == "E"]
    assert sum(int(e["args"]["inputs"]) for e in ends) == 120  # each worker counts its own
    written = {e["args"]["chunk"] for e in events if e["name"] == "write"}
    index = json.loads((out / "index.json").read_text())
    assert written == {chunk["filename"] for chunk in index["chunks"]}
    loader_workers = pids("read", worker_world_size=2)
    assert len(loader_workers) == 2
    assert pids("read", worker_rank=0)
    assert pids("read", worker_rank=1)
    assert pids("decompress") <= loader_workers
    assert pids("download") <= loader_workers
    [main] = pids("dataloader")
    assert main not in loader_workers | optimize_workers
    waits = [e for e in events if e["name"] == "batch" and e["ph"] == "B"]
    assert len(waits) == len(loader)  # one per batch, as LitData records them

    trace_file = tmp_path / "trace.json.gz"
    summary = convert_trace(log, trace_file)
    assert (summary.unmatched_begin, summary.unmatched_end, summary.crashes) == (0, 0, 0)
    assert summary.processes == 5
    assert {"download", "decompress", "read", "batch", "write", "epoch"} <= summary.seconds.keys()
    import gzip

    trace = json.loads(gzip.decompress(trace_file.read_bytes()))
    jsonschema.validate(trace, TRACE_SCHEMA)
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(spans) == summary.spans == len(events) // 2
    names = {e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"}
    assert sum(name.startswith("optimize worker") for name in names) == 2
    assert sum(name.startswith("rank 0 worker") for name in names) == 2
    assert sum("training loop" in name for name in names) == 1


def test_a_remote_dataset_traces_its_downloads(traced, tmp_path, s3_server):
    url = s3_server.url(s3_server.new_bucket(), "ds")
    options = s3_server.storage_options
    ld.write_dataset((square(i) for i in range(40)), url, chunk_size=10, storage_options=options)
    log = traced(categories=["download", "read", "delete"])
    dataset = ld.StreamingDataset(url, storage_options=options, max_cache_size=3 * 400)
    assert len(list(ld.StreamingDataLoader(dataset, batch_size=4, num_workers=2))) == 10
    events = _events(log)
    assert {e["cat"] for e in events} <= {"download", "read", "delete"}
    downloads = [e for e in events if e["name"] == "download" and e["ph"] == "E"]
    assert sorted(e["args"]["chunk"] for e in downloads) == [f"chunk-0-{n}.bin" for n in range(4)]
    assert all(e["args"]["bytes"] > 0 for e in downloads)
    summary = convert_trace(log, tmp_path / "trace.json")
    assert summary.unmatched_begin == summary.unmatched_end == 0
    jsonschema.validate(json.loads((tmp_path / "trace.json").read_text()), TRACE_SCHEMA)


def test_sample_level_traces_every_sample(traced, tmp_path):
    ld.write_dataset((square(i) for i in range(12)), tmp_path / "ds", chunk_size=5)
    log = traced(level="sample")
    assert len(list(ld.StreamingDataset(str(tmp_path / "ds")))) == 12
    samples = [e for e in _events(log) if e["name"] == "sample" and e["ph"] == "B"]
    assert sorted((e["args"]["chunk"], e["args"]["index"]) for e in samples) == sorted(
        [(0, i) for i in range(5)] + [(1, i) for i in range(5)] + [(2, i) for i in range(2)]
    )


def test_off_and_not_enabled_write_nothing(tmp_path):
    ld.write_dataset(range(10), tmp_path / "ds", chunk_size=3)
    script = textwrap.dedent(
        f"""
        import litdata as ld
        from litdata.observe import tracer as tracing
        assert len(list(ld.StreamingDataLoader(ld.StreamingDataset({str(tmp_path / "ds")!r}),
                                               num_workers=2))) == 10
        assert tracing.current() is None
        """
    )
    for level in (None, "off"):
        env = {"LITDATA_LOG_FILE": str(tmp_path / "trace.log"), "PATH": "/usr/bin"}
        if level:
            env["LITDATA_TRACE_LEVEL"] = level
        subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=120)
        assert not (tmp_path / "trace.log").exists()


def test_environment_alone_turns_tracing_on_in_every_worker(tmp_path):
    """No enable_tracer call: LITDATA_TRACE_LEVEL reaches spawned workers too."""
    ld.write_dataset(range(20), tmp_path / "ds", chunk_size=5)
    script = textwrap.dedent(
        f"""
        import litdata as ld
        if __name__ == "__main__":
            ds = ld.StreamingDataset({str(tmp_path / "ds")!r})
            loader = ld.StreamingDataLoader(ds, batch_size=5, num_workers=2,
                                            multiprocessing_context="spawn")
            assert len(list(loader)) == 4
        """
    )
    (tmp_path / "run.py").write_text(script)
    env = {
        "LITDATA_LOG_FILE": str(tmp_path / "trace.log"),
        "LITDATA_TRACE_LEVEL": "batch",
        "PATH": "/usr/bin",
    }
    subprocess.run([sys.executable, "run.py"], env=env, cwd=tmp_path, check=True, timeout=120)
    events = _events(tmp_path / "trace.log")
    assert {e["cat"] for e in events} == {"epoch", "batch"}  # no chunk events at this level
    env.update(LITDATA_TRACE_CATEGORIES="read", LITDATA_LOG_FILE=str(tmp_path / "read.log"))
    subprocess.run([sys.executable, "run.py"], env=env, cwd=tmp_path, check=True, timeout=120)
    events = _events(tmp_path / "read.log")
    assert {e["name"] for e in events} == {"read"}  # the categories win over the level
    assert len({e["pid"] for e in events}) == 2  # both spawned workers


def test_a_failed_background_fetch_is_a_crash_instant(traced, tmp_path):
    ld.write_dataset(
        (square(i) for i in range(20)), tmp_path / "ds", chunk_size=5, compression="zstd"
    )
    chunk = tmp_path / "ds" / "chunk-0-2.zstd.bin"
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0xFF
    chunk.write_bytes(bytes(data))
    log = traced(level="batch")
    with pytest.raises(ChunkCorruptError):
        list(ld.StreamingDataLoader(ld.StreamingDataset(str(tmp_path / "ds")), batch_size=5))
    crashes = [e for e in _events(log) if e["name"] == "crash"]
    assert len(crashes) == 1
    assert crashes[0]["ph"] == "I"
    assert crashes[0]["args"]["exception"] == "ChunkCorruptError"
    assert "chunk-0-2.zstd.bin" in crashes[0]["args"]["error"]


def test_debug_level_traces_waits_for_chunk_locks(traced, tmp_path):
    samples = (square(i) for i in range(20))
    ld.write_dataset(samples, tmp_path / "ds", chunk_size=10, compression="zstd")
    log = traced(level="debug")
    assert len(list(ld.StreamingDataset(str(tmp_path / "ds")))) == 20
    locks = [e for e in _events(log) if e["name"] == "lock"]
    ends = [e for e in locks if e["ph"] == "E"]
    assert len(ends) == len(locks) // 2
    assert {(e["args"]["chunk"], e["args"]["mode"]) for e in ends} == {
        (f"chunk-0-{n}.bin", mode) for n in (0, 1) for mode in ("shared", "exclusive")
    }
    assert all(e["args"]["granted"] == "True" for e in ends)
    summary = convert_trace(log, tmp_path / "trace.json")
    assert summary.unmatched_begin == summary.unmatched_end == 0
    assert "lock" in summary.seconds


def test_a_loop_that_breaks_off_closes_its_spans(traced, tmp_path):
    ld.write_dataset((square(i) for i in range(40)), tmp_path / "ds", chunk_size=10)
    log = traced(level="batch")
    loader = ld.StreamingDataLoader(ld.StreamingDataset(str(tmp_path / "ds")), batch_size=4)
    for number, _ in enumerate(loader):
        if number == 2:
            break
    events = _events(log)
    assert [(e["name"], e["ph"]) for e in events][-2:] == [("batch", "E"), ("dataloader", "E")]
    summary = convert_trace(log, tmp_path / "trace.json")
    assert (summary.spans, summary.unmatched_begin, summary.unmatched_end) == (4, 0, 0)


@pytest.mark.parametrize("workers", [0, 2])
def test_an_epoch_of_32_batches_records_32_batch_spans_as_litdata_does(traced, tmp_path, workers):
    ld.write_dataset((square(i) for i in range(128)), tmp_path / "ds", chunk_size=16)
    log = traced(level="batch")
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(str(tmp_path / "ds")), batch_size=4, num_workers=workers
    )
    assert len(list(loader)) == 32
    events = [e for e in _events(log) if e["name"] == "batch"]
    assert sum(e["ph"] == "B" for e in events) == 32
    assert sum(e["ph"] == "E" for e in events) == 32
    summary = convert_trace(log, tmp_path / "trace.json")
    assert (summary.spans, summary.unmatched_begin, summary.unmatched_end) == (33, 0, 0)
