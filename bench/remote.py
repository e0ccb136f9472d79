"""The remote rows' S3 server: a moto server on loopback, its request log, uploads, cache disk.

The parent (``run.py``) starts one ``moto_server -H 127.0.0.1 -p PORT`` (from the ours venv's
``bin``) for every invocation that runs a remote row, waits for ``GET /moto-api/``, uploads each
system's prepared datasets to ``s3://bench/<system>/<W>/`` and stops the server at the end.
moto keeps its objects in memory, so the uploads are redone by every invocation.

moto's HTTP server (werkzeug) writes one line per request to its log, which is how requests are
counted: ``RequestLog.count`` counts the lines for the ``bench`` bucket after an offset. A child
may be given the log's path (``--request-log``) to count the requests of single calls itself.

Only the standard library here: the parent and every child interpreter import this module.
The uploads run under the ours interpreter (``python bench/remote.py upload ...``, boto3).
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

BUCKET = "bench"
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
REGION = "us-east-1"
#: moto keeps objects up to this size in memory (every chunk here is smaller).
KEY_BUFFER_BYTES = 256 << 20
#: A request line of werkzeug's log for the bench bucket (colour codes may wrap the request).
_REQUEST = re.compile(rb"(GET|HEAD|PUT|POST|DELETE) /" + BUCKET.encode() + rb"[/? ]")
_RANGED = re.compile(rb'HTTP/1\.[01](?:\x1b\[0m)?" 206 ')


def storage_options(endpoint: str) -> dict[str, Any]:
    """LitData's spelling (boto3's names) of the options that reach the server."""
    return {"endpoint_url": endpoint, **CREDENTIALS, "region_name": REGION}


def url(system: str, workload: str) -> str:
    """Where ``system``'s dataset of ``workload`` is uploaded."""
    return f"s3://{BUCKET}/{system}/{workload}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RequestLog:
    """Counts the requests for the bench bucket in moto's log after an offset."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def offset(self) -> int:
        """The log's current end (count from here later)."""
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def count(self, since: int) -> tuple[int, int]:
        """``(requests, ranged ones answered 206)`` logged after byte ``since``."""
        with open(self.path, "rb") as log:
            log.seek(since)
            lines = [line for line in log.read().splitlines() if _REQUEST.search(line)]
        return len(lines), sum(1 for line in lines if _RANGED.search(line))


class MotoServer:
    """``moto_server`` on a free loopback port, logging to ``log_dir/moto.log``."""

    def __init__(self, bin_dir: Path, log_dir: Path, scratch: Path) -> None:
        self.binary = Path(bin_dir) / "moto_server"
        self.log_path = Path(log_dir) / "moto.log"
        self.scratch = scratch
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> RequestLog:
        """The server's request log."""
        return RequestLog(self.log_path)

    def start(self, timeout: float = 60.0) -> None:
        """Start it and wait until ``GET /moto-api/`` answers."""
        if not self.binary.exists():
            raise RuntimeError(f"{self.binary} not found: install the ours venv with '.[test,all]'")
        self.port = _free_port()
        self.scratch.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "TMPDIR": str(self.scratch),
            "PYTHONUNBUFFERED": "1",
            # Keep objects in memory (moto spools those over ~5 MB to TMPDIR files otherwise,
            # whose reads would depend on this VM's page cache).
            "MOTO_S3_DEFAULT_KEY_BUFFER_SIZE": str(KEY_BUFFER_BYTES),
        }
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [str(self.binary), "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=env,
            )
        deadline = time.monotonic() + timeout
        while True:
            try:
                ready = f"{self.endpoint}/moto-api/"  # http://127.0.0.1:PORT only
                with urllib.request.urlopen(ready, timeout=1):  # noqa: S310
                    return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"moto_server did not start; see {self.log_path}")
            time.sleep(0.05)

    def stop(self) -> None:
        """Terminate it (kill it if it lingers)."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def __enter__(self) -> MotoServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def upload(python: str, endpoint: str, source: Path, target: str) -> None:
    """Upload every file of ``source`` (not the bench's marker) to the prefix ``target``."""
    subprocess.run(
        [python, __file__, "upload", "--endpoint", endpoint, str(source), target], check=True
    )


def _upload_main(endpoint: str, source: Path, target: str) -> None:
    import boto3

    client = boto3.client("s3", **storage_options(endpoint))
    existing = {bucket["Name"] for bucket in client.list_buckets().get("Buckets", [])}
    bucket, _, prefix = target.removeprefix("s3://").partition("/")
    if bucket not in existing:
        client.create_bucket(Bucket=bucket)
    for path in sorted(source.iterdir()):
        if path.is_file() and not path.name.startswith(".bench-"):
            client.upload_file(str(path), bucket, f"{prefix}/{path.name}".lstrip("/"))


def _size(entry: os.DirEntry[str], folders: list[str]) -> int:
    """A file's size (a folder is queued in ``folders``); 0 for what vanished meanwhile."""
    try:
        if entry.is_dir(follow_symlinks=False):
            folders.append(entry.path)
        elif entry.is_file(follow_symlinks=False):
            return entry.stat(follow_symlinks=False).st_size
    except OSError:
        pass
    return 0


def dir_bytes(path: Path) -> int:
    """Bytes of the files under ``path`` now (files that vanish while scanned count 0)."""
    total = 0
    folders = [str(path)]
    while folders:
        try:
            entries = list(os.scandir(folders.pop()))
        except OSError:
            entries = []
        total += sum(_size(entry, folders) for entry in entries)
    return total


class PeakDisk:
    """Samples the bytes under ``path`` every ``interval`` s while entered; see ``peak_mb``."""

    def __init__(self, path: Path, interval: float = 0.02) -> None:
        self.path = path
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, dir_bytes(self.path))
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakDisk:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, dir_bytes(self.path))

    @property
    def peak_mb(self) -> float:
        """Peak bytes in MB (10^6 bytes)."""
        return self.peak / 1e6


def main(argv: list[str] | None = None) -> int:
    """``python bench/remote.py upload --endpoint URL DIR s3://bucket/prefix``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("upload")
    up.add_argument("--endpoint", required=True)
    up.add_argument("source")
    up.add_argument("target")
    args = parser.parse_args(argv)
    _upload_main(args.endpoint, Path(args.source), args.target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
