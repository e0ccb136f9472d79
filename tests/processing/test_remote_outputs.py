"""optimize, map, merge_datasets and verify on a real S3 server: modes, checkpoints, locks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import fns
from support.servers import both_s3_servers  # noqa: F401  # s3_server: moto, SeaweedFS

import litdata as ld
from litdata.cli import main
from litdata.core.errors import DatasetExistsError, OutputLockedError
from litdata.engine.boundary.resolve import resolve

TESTS = Path(__file__).resolve().parents[1]


def _ids(url, options):
    reader = ld.DatasetReader(url, storage_options=options)
    return sorted(reader[i]["id"] for i in range(len(reader)))


@pytest.fixture
def bucket(s3_server):
    return s3_server.url(s3_server.new_bucket())


def test_append_and_overwrite_on_s3(bucket, s3_server):
    options, url = s3_server.storage_options, f"{bucket}/ds"
    ld.optimize(
        fns.record,
        range(30),
        url,
        chunk_size=10,
        num_workers=2,
        storage_options=options,
        verbose=False,
    )
    with pytest.raises(DatasetExistsError, match="already holds a dataset"):
        ld.optimize(
            fns.record, range(5), url, chunk_size=10, storage_options=options, verbose=False
        )
    ld.optimize(
        fns.record,
        range(30, 50),
        url,
        chunk_size=10,
        num_workers=2,
        mode="append",
        storage_options=options,
        verbose=False,
    )
    assert _ids(url, options) == list(range(50))
    ld.optimize(
        fns.record,
        range(100, 110),
        url,
        chunk_size=10,
        num_workers=1,
        mode="overwrite",
        storage_options=options,
        verbose=False,
    )
    assert _ids(url, options) == list(range(100, 110))
    names = resolve(url, storage_options=options).storage.list(url)
    assert ".litdata.lock" not in names
    assert not [name for name in names if name.endswith(".index.json") and name != "index.json"]
    assert len([name for name in names if name.endswith(".bin")]) == 1  # old chunks removed


SCRIPT = """
import sys, fns, litdata as ld
options = {"endpoint_url": sys.argv[2], "aws_access_key_id": "testing",
           "aws_secret_access_key": "testing", "region_name": "us-east-1"}
ld.optimize(fns.slow_record, range(200), sys.argv[1], chunk_size=10, num_workers=2,
            use_checkpoint=True, storage_options=options, verbose=False)
"""


def test_a_killed_run_to_s3_resumes_from_its_checkpoints(bucket, s3_server):
    options, url = s3_server.storage_options, f"{bucket}/ds"
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    run = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, url, s3_server.endpoint], env=env, start_new_session=True
    )
    checkpoints = resolve(f"{url}/.checkpoints", storage_options=options)

    def done():
        names = checkpoints.storage.list(checkpoints.url)
        states = [json.loads(checkpoints.read(n)) for n in names if n.startswith("checkpoint-")]
        return sum(state["inputs_done"] for state in states)

    deadline = time.monotonic() + 60
    while done() < 40 and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    assert not ld.is_complete_dataset(resolve(url, storage_options=options))
    ld.optimize(
        fns.slow_record,
        range(200),
        url,
        chunk_size=10,
        num_workers=2,
        use_checkpoint=True,
        storage_options=options,
        verbose=False,
    )
    reader = ld.DatasetReader(url, storage_options=options)
    assert [reader[i]["id"] for i in range(len(reader))] == list(range(200))
    assert checkpoints.storage.list(checkpoints.url) == []


def test_a_second_writer_to_the_same_prefix_is_refused(bucket, s3_server):
    options, url = s3_server.storage_options, f"{bucket}/ds"
    location = resolve(url, storage_options=options)
    holder = {"host": "elsewhere", "pid": 1, "command": "optimize", "since": 0, "active": True}
    location.write(".litdata.lock", json.dumps(holder).encode())
    with pytest.raises(OutputLockedError, match="PID 1 on host elsewhere"):
        ld.optimize(int, [1, 2], url, chunk_size=1, storage_options=options, verbose=False)


def test_map_uploads_what_fn_writes(bucket, s3_server):
    options, url = s3_server.storage_options, f"{bucket}/out"
    ld.map(
        fns.write_file,
        list(range(8)),
        url,
        num_workers=2,
        storage_options=options,
        verbose=False,
    )
    location = resolve(url, storage_options=options)
    assert sorted(location.storage.list(url)) == [f"item-{i}.txt" for i in range(8)]
    assert location.read("item-3.txt") == b"value 6"


def test_merge_and_verify_on_s3(bucket, s3_server, capsys, monkeypatch):
    options = s3_server.storage_options
    for part, start in (("a", 0), ("b", 20)):
        ld.optimize(
            fns.record,
            range(start, start + 20),
            f"{bucket}/{part}",
            chunk_size=10,
            num_workers=1,
            storage_options=options,
            verbose=False,
        )
    ld.merge_datasets([f"{bucket}/a", f"{bucket}/b"], f"{bucket}/ab", storage_options=options)
    assert _ids(f"{bucket}/ab", options) == list(range(40))
    # The CLI takes no storage options: the standard environment variables reach the server.
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    assert main(["verify", f"{bucket}/ab", "--quiet"]) == 0
    location = resolve(f"{bucket}/ab")
    data = bytearray(location.read("chunk-0-2.bin"))
    data[-2] ^= 0x20
    flipped = Path(f"/tmp/flipped-{os.getpid()}")
    flipped.write_bytes(bytes(data))
    location.storage.upload(str(flipped), location.join("chunk-0-2.bin"))
    flipped.unlink()
    assert main(["verify", f"{bucket}/ab", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "chunk-0-2.bin" in out
    assert "corrupt" in out
