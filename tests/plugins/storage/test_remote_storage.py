"""The S3, GCS and Azure backends against real servers on loopback (moto, gcp-storage-emulator,
azurite): the storage contract, every scheme, failures that are errors naming the URL (never a
hang), and fork safety."""

import multiprocessing
import pickle
import threading
import time

import pytest
from support.servers import ObjectStore, azurite_connection_string

import litdata as ld
from litdata.core.errors import StorageError
from litdata.engine.boundary.resolve import resolve
from litdata.plugins.storage.azure import AzStorage
from litdata.plugins.storage.gcs import GSStorage
from litdata.plugins.storage.s3 import S3Storage
from litdata.testing import StorageContract

STORES = ["s3_server", "gcs_server", "azurite_server"]


@pytest.fixture(params=STORES)
def store(request) -> ObjectStore:
    return request.getfixturevalue(request.param)


class TestS3Storage(StorageContract):
    @pytest.fixture
    def storage(self, s3_server):
        return S3Storage(storage_options=s3_server.storage_options)

    @pytest.fixture
    def base_url(self, s3_server):
        return s3_server.url(s3_server.new_bucket(), "contract")


class TestGcsStorage(StorageContract):
    @pytest.fixture
    def storage(self, gcs_server):
        return GSStorage(storage_options=gcs_server.storage_options)

    @pytest.fixture
    def base_url(self, gcs_server):
        return gcs_server.url(gcs_server.new_bucket(), "contract")


class TestAzureStorage(StorageContract):
    @pytest.fixture
    def storage(self, azurite_server):
        return AzStorage(storage_options=azurite_server.storage_options)

    @pytest.fixture
    def base_url(self, azurite_server):
        return azurite_server.url(azurite_server.new_bucket(), "contract")


@pytest.mark.parametrize(
    ("server", "scheme"),
    [
        ("s3_server", "s3"),
        ("gcs_server", "gs"),
        ("gcs_server", "gcs"),
        ("azurite_server", "az"),
        ("azurite_server", "azure"),
        ("azurite_server", "abfs"),
    ],
)
def test_every_scheme_resolves_to_its_backend(request, server, scheme):
    store = request.getfixturevalue(server)
    bucket = store.new_bucket()
    location = resolve(f"{scheme}://{bucket}/data", storage_options=store.storage_options)
    assert location.backend == scheme
    assert location.storage.ranged
    assert not location.storage.in_place
    location.write("hello.txt", b"hello")
    assert location.read("hello.txt") == b"hello"
    assert location.storage.list(location.url) == ["hello.txt"]
    assert location.storage.read_range(location.join("hello.txt"), 1, 4) == b"ell"


def test_a_dead_server_is_an_error_naming_the_url_within_seconds(store):
    url = store.url(store.new_bucket(), "ds/index.json")
    location = resolve(url.rsplit("/", 1)[0], storage_options=store.storage_options)
    location.write("index.json", b"{}")
    store.stop()
    try:
        started = time.monotonic()
        with pytest.raises(StorageError, match=f"{url} failed 5 times"):
            location.read("index.json")
        assert time.monotonic() - started < 15
    finally:
        store.start()
    assert location.read("index.json") == b"{}"  # the same backend, once the server is back


def test_a_server_back_within_the_retries_is_not_an_error(store, monkeypatch):
    monkeypatch.setenv("LITDATA_STORAGE_ATTEMPTS", "8")
    location = resolve(store.url(store.new_bucket(), "ds"), storage_options=store.storage_options)
    location.write("chunk.bin", b"x" * 1000)
    store.stop()
    restart = threading.Timer(1.0, store.start)
    restart.start()
    try:
        assert location.read("chunk.bin") == b"x" * 1000
    finally:
        restart.join()
        store.start()


def test_a_missing_bucket_is_file_not_found_naming_it(store, tmp_path):
    url = store.url("b-no-such-bucket", "ds/index.json")
    location = resolve(url.rsplit("/", 1)[0], storage_options=store.storage_options)
    source = tmp_path / "data"
    source.write_bytes(b"x")
    calls = [
        lambda: location.storage.download(url, str(tmp_path / "out")),
        lambda: location.storage.exists(url),
        lambda: location.storage.list(location.url),
        lambda: location.storage.upload(str(source), url),
        lambda: location.storage.read_range(url, 0, 1),
    ]
    for call in calls:
        started = time.monotonic()
        with pytest.raises(FileNotFoundError, match=r"(bucket|container) 'b-no-such-bucket' of"):
            call()
        assert time.monotonic() - started < 5  # not retried


def _sample(i):
    return {"id": i}


def test_writing_into_a_missing_bucket_says_to_create_it_and_how(store):
    url = store.url("b-not-created-yet", "ds")
    with pytest.raises(FileNotFoundError) as caught:
        ld.optimize(
            _sample,
            range(4),
            url,
            chunk_size=2,
            num_workers=1,
            storage_options=store.storage_options,
        )
    message = str(caught.value)
    assert "'b-not-created-yet'" in message
    assert "litdata writes objects, never " in message
    command = {
        "s3": "aws s3 mb s3://",
        "gs": "gcloud storage buckets create gs://",
        "az": "az storage container create --name ",
    }
    assert command[url.split(":", 1)[0]] + "b-not-created-yet" in message


def test_a_wrong_azure_account_key_is_a_permission_error(azurite_server):
    bucket = azurite_server.new_bucket()
    wrong = azurite_connection_string(azurite_server.endpoint, key="d3Jvbmcta2V5" * 8)
    location = resolve(f"az://{bucket}/ds", storage_options={"connection_string": wrong})
    started = time.monotonic()
    with pytest.raises(PermissionError, match=f"az://{bucket}/ds/index.json"):
        location.storage.exists(location.join("index.json"))
    assert time.monotonic() - started < 5  # not retried


def test_the_environment_configures_each_backend(store, monkeypatch):
    bucket = store.new_bucket()
    if store.scheme == "s3":
        monkeypatch.setenv("AWS_ENDPOINT_URL", store.endpoint)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        options = {}
    elif store.scheme == "gs":
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", store.endpoint)
        options = {"token": "anon", "project": "test"}
    else:
        monkeypatch.setenv(
            "AZURE_STORAGE_CONNECTION_STRING", store.storage_options["connection_string"]
        )
        options = {}
    location = resolve(store.url(bucket, "env"), storage_options=options)
    location.write("a.bin", b"from the environment")
    assert location.read("a.bin") == b"from the environment"


def _read_in_child(storage, url, results):
    results.put(storage.read_range(url, 0, 5))


def test_a_forked_child_uses_a_backend_made_and_used_in_the_parent(store):
    location = resolve(store.url(store.new_bucket(), "fork"), storage_options=store.storage_options)
    location.write("a.bin", b"hello world")
    backend = location.storage.backend
    assert backend.read_range(location.join("a.bin"), 0, 5) == b"hello"  # a client in the parent
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_read_in_child, args=(backend, location.join("a.bin"), results))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert results.get(timeout=5) == b"hello"
    copy = pickle.loads(pickle.dumps(backend))
    assert copy.read_range(location.join("a.bin"), 6, 11) == b"world"


def _requests_for(log, key):
    """How many requests for ``key`` the server's log shows (one line per request)."""
    return sum(1 for line in log.read_text(errors="replace").splitlines() if f"/{key} " in line)


def test_s3_downloads_an_object_with_one_streamed_get(s3_server, tmp_path):
    bucket = s3_server.new_bucket()
    location = resolve(s3_server.url(bucket, "dl"), storage_options=s3_server.storage_options)
    data = bytes(range(256)) * 8192  # 2 MB
    location.write("big.bin", data)
    log = s3_server.server.log
    before = _requests_for(log, f"{bucket}/dl/big.bin")
    location.storage.download(location.join("big.bin"), str(tmp_path / "big.bin"))
    assert (tmp_path / "big.bin").read_bytes() == data
    # fs.open would ask for the size (HEAD) and then a range; get_file streams one GET.
    assert _requests_for(log, f"{bucket}/dl/big.bin") - before == 1


def test_a_remote_chunk_is_fetched_and_checked_without_holding_it_in_memory(
    s3_server, tmp_path, monkeypatch
):
    import os
    import tracemalloc

    import litdata as ld

    url = s3_server.url(s3_server.new_bucket(), "ds")
    options = s3_server.storage_options
    samples = ({"id": i, "blob": os.urandom(1 << 20)} for i in range(24))
    ld.write_dataset(samples, url, chunk_bytes="64MB", storage_options=options)
    reader = ld.DatasetReader(url, storage_options=options, cache_dir=str(tmp_path / "cache"))
    assert len(reader.index.chunks) == 1  # one chunk of ~24 MB
    # parts of at most 2 MiB in flight, two at once: 4 MiB of them, and their copies in s3fs
    monkeypatch.setenv("LITDATA_PART_MEMORY_MB", "4")
    tracemalloc.start()
    try:
        path = reader.cache.hold(0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert os.path.getsize(path) > 24 << 20
    assert peak < 12 << 20  # written and checked part by part, never whole
    assert [reader[i]["id"] for i in (0, 23)] == [0, 23]


def test_s3_with_no_cache_streams_from_memory_with_workers(s3_server, tmp_path):
    import os

    import litdata as ld

    url = s3_server.url(s3_server.new_bucket(), "ds")
    options = s3_server.storage_options
    samples = ({"id": i, "blob": os.urandom(256 << 10)} for i in range(48))
    ld.write_dataset(samples, url, chunk_bytes="4MB", storage_options=options)
    cache = tmp_path / "cache"
    ds = ld.StreamingDataset(url, storage_options=options, cache_dir=str(cache), max_cache_size=0)
    loader = ld.StreamingDataLoader(ds, batch_size=4, num_workers=2)
    ids = [int(i) for batch in loader for i in batch["id"]]
    assert sorted(ids) == list(range(48))
    assert not [p for p in cache.rglob("chunk-*") if p.is_file()]  # nothing written to disk
