"""A server that accepts connections and never answers: an error naming the URL, never a hang.

The frozen server is a real listening socket on loopback that accepts every connection and
holds it without a byte. Each test goes through the public API (opening a dataset, ``ds[i]``,
a streaming epoch, ``optimize``, ``write_dataset``) and checks that the answer is a
``StorageError`` naming the URL within ``LITDATA_STORAGE_TIMEOUT`` (3 s here, where the test is
about the mechanism; the default 30 s once), and that no litdata thread or worker process is
left behind. A server that is slow but keeps sending is not cut off.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator

import numpy as np
import psutil
import pytest
from support.servers import ObjectStore, azurite_connection_string

import litdata as ld
from litdata.core.errors import StorageError
from litdata.core.location import Location
from litdata.engine.boundary.resolve import resolve

#: ``LITDATA_STORAGE_TIMEOUT`` where a test is about the mechanism.
QUICK = 3
#: How long the first request may take beyond it: the client library starts (sessions,
#: credentials, endpoints) inside the first attempt; generous, for a loaded 2-core CI machine
#: (a wait that is not bounded takes minutes).
SETUP = 10.0
SAMPLES = 240


class FrozenServer:
    """Accepts connections on 127.0.0.1 and never answers; holds them until closed.

    Args:
        port: The port (0: any free one).
        serve: Called with each connection accepted (by default nothing is: it is held).
    """

    def __init__(self, port: int = 0, serve: Callable[[socket.socket], None] | None = None) -> None:
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", port))
        self._listener.listen(128)
        self._listener.settimeout(0.05)
        self.port = int(self._listener.getsockname()[1])
        self.held: list[socket.socket] = []
        self._serve = serve
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="frozen-server", daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            self.held.append(connection)
            if self._serve is not None:
                self._serve(connection)

    def close(self) -> None:
        """Stop accepting, and close every connection held."""
        self._stop.set()
        self._thread.join()
        self._listener.close()
        for connection in self.held:
            connection.close()


@pytest.fixture
def frozen() -> Iterator[FrozenServer]:
    server = FrozenServer()
    yield server
    server.close()


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITDATA_STORAGE_TIMEOUT", str(QUICK))


@contextlib.contextmanager
def frozen_in_place_of(store: ObjectStore) -> Iterator[FrozenServer]:
    """The store's address answers nothing for the block: its gate is replaced by a frozen
    server on the same port (clients that opened the dataset keep their endpoint)."""
    store.stop()
    server = FrozenServer(store.gate.port)
    try:
        yield server
    finally:
        server.close()
        store.start()


def _imported(url: str, options: dict[str, object]) -> None:
    """Import the streaming layer and the URL's storage plugin: the time to an error is the
    network's, not the imports' (resolving a location makes no request)."""
    assert ld.StreamingDataset is not None
    resolve(url, storage_options=options)


@pytest.fixture
def nothing_left() -> Callable[..., None]:
    """A check that, within a few seconds, no new litdata thread and no new child process (but
    the ``stores`` given, whose gates the tests restart) is left."""
    threads_before = set(threading.enumerate())
    children_before = {child.pid for child in psutil.Process().children()}

    def check(*stores: ObjectStore) -> None:
        servers = children_before | {
            process.pid
            for store in stores
            for process in (store.server.process, store.gate.process)
            if process is not None
        }
        deadline = time.monotonic() + QUICK + SETUP
        while True:
            threads = [
                thread.name
                for thread in threading.enumerate()
                if thread.name.startswith("litdata") and thread not in threads_before
            ]
            children = [
                child.pid
                for child in psutil.Process().children()
                if child.pid not in servers and child.status() != psutil.STATUS_ZOMBIE
            ]
            if not threads and not children:
                return
            assert time.monotonic() < deadline, f"left behind: threads {threads}, {children}"
            time.sleep(0.05)

    return check


def _sample(i: int) -> dict[str, object]:
    return {"id": i, "value": np.full(2000, i % 251, dtype=np.uint8)}


def _wrong(sample: dict[str, object]) -> bool:
    return not (np.asarray(sample["value"]) == int(sample["id"]) % 251).all()  # type: ignore[call-overload]


def _put_dataset(
    store: ObjectStore, tmp_path: os.PathLike[str], chunk_size: int = 5
) -> tuple[str, Location]:
    """A dataset of ``chunk_size``-sample chunks (48 by default) in a fresh bucket of ``store``.

    More chunks than two workers prefetch ahead (at most 8 each, see ``MOST_AHEAD``), so an
    epoch that meets a frozen server still has chunks to fetch. The uploads wait the default
    timeout, whatever the test set: they are its setup, and the first one starts the client
    library (TLS contexts, sessions), which on a loaded 2-core machine can take longer than a
    quick timeout's one-second request (CI saw it).
    """
    url = store.url(store.new_bucket(), "ds")
    local = ld.write_dataset(
        (_sample(i) for i in range(SAMPLES)), os.path.join(tmp_path, "src"), chunk_size=chunk_size
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("LITDATA_STORAGE_TIMEOUT", raising=False)
        remote = resolve(url, storage_options=store.storage_options)
        for path in sorted(local.iterdir()):
            remote.storage.upload(str(path), remote.join(path.name))
    return url, remote


def _options(scheme: str, endpoint: str) -> dict[str, object]:
    if scheme == "s3":
        return {
            "endpoint_url": endpoint,
            "aws_access_key_id": "testing",
            "aws_secret_access_key": "testing",
            "region_name": "us-east-1",
        }
    if scheme == "gs":
        return {"endpoint_url": endpoint, "token": "anon", "project": "test"}
    if scheme == "az":
        return {"connection_string": azurite_connection_string(endpoint)}
    return {"endpoint": endpoint}


#: ``(scheme, dataset URL, bound in seconds)``: hf's requests wait huggingface_hub's own 10 s
#: (``HF_HUB_ETAG_TIMEOUT``, ``HF_HUB_DOWNLOAD_TIMEOUT``), whatever LITDATA_STORAGE_TIMEOUT is.
OPENED = [
    ("s3", "s3://bucket/ds", QUICK + SETUP),
    ("gs", "gs://bucket/ds", QUICK + SETUP),
    ("az", "az://container/ds", QUICK + SETUP),
    ("hf", "hf://datasets/org/name/ds", 30),
]


@pytest.mark.fault("frozen server: opening a dataset")
@pytest.mark.parametrize(("scheme", "url", "bound"), OPENED, ids=[row[0] for row in OPENED])
@pytest.mark.usefixtures("quick")
def test_opening_a_dataset_on_a_frozen_server_is_an_error_naming_the_url(
    nothing_left, frozen, record, scheme, url, bound
):
    record.fault += f" ({scheme})"
    options = _options(scheme, frozen.endpoint)
    _imported(url, options)
    record.start()
    with pytest.raises(StorageError, match=rf"{url}/index\.json failed \d times"):
        ld.StreamingDataset(url, storage_options=options)
    record.failed()
    assert record.seconds is not None
    assert record.seconds < bound
    assert frozen.held  # it did reach the server
    nothing_left()
    record(f"StorageError naming index.json's URL within {bound:g} s; nothing left behind")


@pytest.mark.fault("frozen server: opening a dataset, default timeout")
def test_a_frozen_server_is_an_error_within_30_seconds_by_default(
    nothing_left, frozen, record, monkeypatch
):
    monkeypatch.delenv("LITDATA_STORAGE_TIMEOUT", raising=False)
    url = "s3://bucket/ds"
    options = _options("s3", frozen.endpoint)
    _imported(url, options)
    record.start()
    with pytest.raises(StorageError, match=rf"{url}/index\.json failed 2 times"):
        ld.StreamingDataset(url, storage_options=options)
    record.failed()
    assert record.seconds is not None
    assert record.seconds < 30
    nothing_left()
    record("StorageError naming index.json's URL after 2 attempts of 10 s, within 30 s")


@pytest.mark.fault("frozen server: ds[i] of a dataset opened before")
@pytest.mark.usefixtures("quick")
def test_a_single_item_from_a_server_that_froze_is_an_error_naming_the_chunk(
    nothing_left, s3_server, tmp_path, record
):
    url, _ = _put_dataset(s3_server, tmp_path)
    ds = ld.StreamingDataset(url, storage_options=s3_server.storage_options)
    assert ds[5]["id"] == 5
    with frozen_in_place_of(s3_server) as frozen:
        record.start()
        with pytest.raises(StorageError, match=rf"{url}/chunk-0-13\.bin failed \d times"):
            ds[65]
        record.failed()
        assert frozen.held
    assert record.seconds is not None
    assert record.seconds < QUICK + SETUP
    assert ds[65]["id"] == 65  # the same dataset, once the server answers again
    nothing_left(s3_server)
    record("StorageError naming the chunk's URL; the dataset reads again once it answers")


@pytest.mark.fault("frozen server: a streaming epoch")
@pytest.mark.parametrize("num_workers", [0, 2])
@pytest.mark.usefixtures("quick")
def test_a_server_that_freezes_mid_epoch_is_an_error_naming_a_chunk(
    nothing_left, s3_server, tmp_path, record, num_workers
):
    record.fault += f", {num_workers} workers"
    url, _ = _put_dataset(s3_server, tmp_path)
    ds = ld.StreamingDataset(
        url, storage_options=s3_server.storage_options, cache_dir=str(tmp_path / "cache")
    )
    loader = ld.StreamingDataLoader(ds, batch_size=10, num_workers=num_workers, collate_fn=list)
    seen: list[dict[str, object]] = []
    with contextlib.ExitStack() as stack:
        record.start()
        failed = rf"{url}/chunk-\d+-\d+\.bin failed \d times"
        with pytest.raises(StorageError, match=failed) as caught:
            for batch in loader:
                seen.extend(batch)
                if len(seen) == 30:
                    frozen = stack.enter_context(frozen_in_place_of(s3_server))
                    record.start()
        record.failed()
        assert frozen.held
    del caught, loader  # the traceback holds the loader's iterator, and so its workers
    gc.collect()
    assert record.seconds is not None
    assert record.seconds < QUICK + SETUP
    nothing_left(s3_server)
    ids = [int(sample["id"]) for sample in seen]  # type: ignore[call-overload]
    record(
        f"StorageError naming the URL after {len(seen)} samples; nothing left behind",
        duplicated=len(ids) - len(set(ids)),
        wrong=sum(map(_wrong, seen)),
    )


@pytest.mark.fault("frozen server: optimize to a frozen output")
@pytest.mark.usefixtures("quick")
def test_optimize_to_a_frozen_output_is_an_error_naming_it(nothing_left, frozen, tmp_path, record):
    url = "s3://bucket/out"
    options = _options("s3", frozen.endpoint)
    _imported(url, options)
    record.start()
    with pytest.raises(StorageError, match=rf"{url}/\S+ failed \d times"):
        ld.optimize(
            _sample, list(range(40)), url, chunk_size=10, num_workers=2, storage_options=options
        )
    record.failed()
    assert record.seconds is not None
    assert record.seconds < QUICK + SETUP
    nothing_left()
    record("StorageError naming the output's URL; no worker started or left")


@pytest.mark.fault("frozen server: uploads of a write in progress")
@pytest.mark.usefixtures("quick")
def test_a_server_that_freezes_while_chunks_upload_is_an_error_naming_a_chunk(
    nothing_left, s3_server, record
):
    url = s3_server.url(s3_server.new_bucket(), "out")

    def samples() -> Iterator[dict[str, object]]:
        for i in range(SAMPLES):
            if i == 60:  # three chunks written (and uploading): the rest go to a frozen server
                stack.enter_context(frozen_in_place_of(s3_server))
                record.start()
            yield _sample(i)

    with contextlib.ExitStack() as stack:
        with pytest.raises(
            StorageError, match=rf"{url}/chunk-0-\d+\.bin failed \d times"
        ) as caught:
            ld.write_dataset(
                samples(), url, chunk_size=20, storage_options=s3_server.storage_options
            )
        record.failed()
    error: BaseException | None = caught.value
    while error is not None and not str(error).startswith("Uploading"):
        error = error.__context__  # the writer's clean-up (deleting what it uploaded) failed too
    assert error is not None
    assert isinstance(error, StorageError)
    assert record.seconds is not None
    assert record.seconds < 2 * QUICK + SETUP  # the upload's retries, then one try to clean up
    nothing_left(s3_server)
    record("StorageError naming the chunk's URL (an S3 PUT waits for 100 Continue: bounded)")


class Trickle:
    """A proxy to ``127.0.0.1:upstream`` that passes bytes slowly but steadily.

    Each direction sends at most ``piece`` bytes every ``pause`` seconds: well within the
    per-request read timeout, while a whole transfer takes longer than
    ``LITDATA_STORAGE_TIMEOUT``. With ``cut``, only the first connection is slow, and it is
    cut off (closed) ``cut`` seconds after it opened; the next ones pass bytes at full speed.
    """

    def __init__(self, upstream: int, piece: int, pause: float, cut: float | None = None) -> None:
        self._upstream, self._piece, self._pause, self._cut = upstream, piece, pause, cut
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self._server = FrozenServer(serve=self._connect)

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return self._server.endpoint

    def _connect(self, client: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self._upstream))
        first = not self._sockets
        self._sockets.append(upstream)
        pace = (self._piece, self._pause) if first or self._cut is None else (1 << 20, 0.0)
        for source, target in ((client, upstream), (upstream, client)):
            self._start(threading.Thread(target=self._pump, args=(source, target, *pace)))
        if first and self._cut is not None:
            self._start(threading.Timer(self._cut, self._close, (client, upstream)))

    def _start(self, thread: threading.Thread) -> None:
        thread.daemon = True
        thread.start()
        self._threads.append(thread)

    def _pump(self, source: socket.socket, target: socket.socket, piece: int, pause: float) -> None:
        with contextlib.suppress(OSError):
            while not self._stop.is_set() and (data := source.recv(piece)):
                target.sendall(data)
                time.sleep(pause)
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)

    @staticmethod
    def _close(*connections: socket.socket) -> None:
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        """Stop passing bytes; close every connection."""
        self._stop.set()
        self._server.close()
        for connection in self._sockets:
            connection.close()
        for thread in self._threads:
            if isinstance(thread, threading.Timer):
                thread.cancel()
            thread.join()


@pytest.mark.fault("slow but steady server: a chunk taking longer than the timeout")
@pytest.mark.usefixtures("quick")
def test_a_slow_but_steady_transfer_is_not_cut(s3_server, tmp_path, record, caplog):
    url, remote = _put_dataset(s3_server, tmp_path, chunk_size=20)  # a 39 KiB chunk
    chunk = remote.join("chunk-0-0.bin")
    expected = remote.read("chunk-0-0.bin")
    # 2 KiB every 0.25 s: a byte well within the 1 s read timeout, the chunk in over 3 s.
    trickle = Trickle(int(s3_server.endpoint.rsplit(":", 1)[1]), 2 << 10, 0.25)
    try:
        options = {**s3_server.storage_options, "endpoint_url": trickle.endpoint}
        slow = resolve(url, storage_options=options)
        started = time.monotonic()
        slow.storage.download(chunk, str(tmp_path / "chunk.bin"), len(expected))
        took = time.monotonic() - started
    finally:
        trickle.close()
    assert (tmp_path / "chunk.bin").read_bytes() == expected
    assert took > QUICK  # longer than LITDATA_STORAGE_TIMEOUT, in one attempt
    assert "failed" not in caplog.text
    record(f"a {len(expected) // 1024} KiB chunk arrived whole in {took:.1f} s, in one attempt")


@pytest.mark.fault("a long transfer cut off half way")
def test_a_long_transfer_cut_off_half_way_is_tried_again(
    s3_server, tmp_path, record, monkeypatch, caplog
):
    monkeypatch.setenv("LITDATA_STORAGE_TIMEOUT", "1")
    url = s3_server.url(s3_server.new_bucket(), "big")
    location = resolve(url, storage_options=s3_server.storage_options)
    # 8 MiB: 8 s more than the 1 s timeout for its retries, so the second attempt fits even
    # when the first one's client setup took a second or two
    payload = os.urandom(8 << 20)
    (tmp_path / "big.bin").write_bytes(payload)
    location.storage.upload(str(tmp_path / "big.bin"), location.join("big.bin"))
    # The first GET gets 64 KiB every 0.05 s, and is cut after 1.5 s (longer than the timeout).
    proxy = Trickle(int(s3_server.endpoint.rsplit(":", 1)[1]), 64 << 10, 0.05, cut=1.5)
    try:
        options = {**s3_server.storage_options, "endpoint_url": proxy.endpoint}
        storage = resolve(url, storage_options=options).storage
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="litdata.engine.boundary.storage"):
            storage.download(location.join("big.bin"), str(tmp_path / "copy.bin"), len(payload))
        took = time.monotonic() - started
    finally:
        proxy.close()
    assert (tmp_path / "copy.bin").read_bytes() == payload
    # the S3 backend resumed the cut body (a GET of the bytes it lacked), not the core whole
    assert "retrying" not in caplog.text
    record(f"cut off after 1.5 s, resumed: the object arrived whole in {took:.1f} s")
