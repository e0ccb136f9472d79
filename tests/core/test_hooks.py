"""Every hookspec is exercised here through a real plugin distribution (entry-point group
``litdata``), found and loaded by pluggy exactly as ``pip install`` would make it."""

import json

import numpy as np
import pytest

import litdata as ld
from litdata.core.errors import ChunkCorruptError, PluginLoadError, ProcessingError
from litdata.core.registry import hooks, kinds
from litdata.core.registry.manager import get_plugin_manager, hook_origin, reset_plugin_manager
from litdata.engine.boundary.resolve import resolve
from litdata.testing import fake_distribution

pytestmark = pytest.mark.usefixtures("fresh_plugins")

RECORDER = """
import litdata

EVENTS = []

@litdata.hookimpl
def litdata_chunk_written(path, chunk, seconds):
    assert seconds >= 0
    EVENTS.append(("written", chunk["filename"], chunk["chunk_size"]))

@litdata.hookimpl
def litdata_chunk_downloaded(url, path, nbytes):
    EVENTS.append(("downloaded", url.rsplit("/", 1)[-1], nbytes))

@litdata.hookimpl
def litdata_chunk_evicted(path, nbytes):
    EVENTS.append(("evicted", path, nbytes))

@litdata.hookimpl
def litdata_chunk_decompressed(path, nbytes, seconds):
    EVENTS.append(("decompressed", path.rsplit("/", 1)[-1], nbytes, seconds))

@litdata.hookimpl
def litdata_chunk_opened(url, chunk_index, items):
    EVENTS.append(("opened", chunk_index, items))

@litdata.hookimpl
def litdata_chunk_closed(chunk_index):
    EVENTS.append(("closed", chunk_index))

@litdata.hookimpl
def litdata_resolve_storage(url):
    return "file" if url.startswith("mirror://") else None

@litdata.hookimpl
def litdata_detect_format(location, index):
    return "chunks" if location.url.endswith("special") else None

@litdata.hookimpl
def litdata_shuffle_for(url, shuffle):
    return "window:size=2" if shuffle and url.endswith("striped") else None

@litdata.hookimpl
def litdata_default_item_loader(index):
    return "TemporalArrayLoader" if index is None and DEFAULTS else None

@litdata.hookimpl
def litdata_default_executor():
    return "dask" if DEFAULTS else None

DEFAULTS = []

def _log(*event):
    import json, os
    EVENTS.append(event)
    if os.environ.get("RECORDER_LOG"):  # events of worker processes
        with open(os.environ["RECORDER_LOG"], "a") as handle:
            handle.write(json.dumps(event) + chr(10))

@litdata.hookimpl
def litdata_lock_waited(chunk, mode, granted, seconds):
    assert seconds >= 0
    _log("lock", chunk, mode, granted)

@litdata.hookimpl
def litdata_work_began(job, rank):
    _log("began", job, rank)

@litdata.hookimpl
def litdata_work_ended(job, rank, inputs):
    _log("ended", job, rank, inputs)

@litdata.hookimpl
def litdata_failed(where, error):
    _log("failed", where, type(error).__name__)

@litdata.hookimpl
def litdata_process_context(fields):
    _log("context", sorted(fields.items()))

@litdata.hookimpl
def litdata_wrap_batches(batches, epoch):
    def counted():
        for batch in batches:
            _log("batch", epoch)
            yield batch
    return counted() if WRAP else None

@litdata.hookimpl
def litdata_wrap_read(read, chunk_index):
    def counted(chunk, position):
        _log("read", chunk_index, position)
        return read(chunk, position)
    return counted if WRAP else None

WRAP = []
"""


@pytest.fixture
def recorder(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path / "dist"))
    fake_distribution(
        tmp_path / "dist",
        "litdata-plugin-recorder",
        {"litdata": {"recorder": "recorder"}},
        {"recorder": RECORDER},
    )
    reset_plugin_manager()
    module = get_plugin_manager().get_plugin("recorder")
    assert module is not None, "the entry point was not loaded"
    module.EVENTS.clear()  # the module stays imported from one test to the next
    return module


def test_hook_litdata_chunk_written(recorder, tmp_path):
    ld.write_dataset(({"x": i} for i in range(5)), tmp_path / "ds", chunk_size=2)
    assert [e for e in recorder.EVENTS if e[0] == "written"] == [
        ("written", "chunk-0-0.bin", 2),
        ("written", "chunk-0-1.bin", 2),
        ("written", "chunk-0-2.bin", 1),
    ]


def test_hook_litdata_chunk_downloaded(recorder, tmp_path):
    ld.write_dataset(
        ({"x": np.zeros(100)} for _ in range(4)), tmp_path / "ds", chunk_size=2, compression="zstd"
    )
    reader = ld.DatasetReader(tmp_path / "ds")
    reader[0], reader[3]
    names = [e[1] for e in recorder.EVENTS if e[0] == "downloaded"]
    assert names == ["chunk-0-0.zstd.bin", "chunk-0-1.zstd.bin"]


def test_hook_litdata_chunk_evicted(recorder, tmp_path):
    # Compressed chunks are decompressed into the cache; a budget of about one chunk makes the
    # cache evict the first once the reader is done with it and needs the second.
    samples = ({"x": np.full(1000, i, dtype=np.uint8)} for i in range(4))
    ld.write_dataset(samples, tmp_path / "ds", chunk_size=2, compression="zstd")
    reader = ld.DatasetReader(tmp_path / "ds", max_cache_size=3000)
    assert reader[0]["x"][0] == 0
    reader.done_with(0)
    assert reader[2]["x"][0] == 2
    evicted = [e for e in recorder.EVENTS if e[0] == "evicted"]
    assert len(evicted) == 1
    assert evicted[0][1].endswith("chunk-0-0.bin")
    assert evicted[0][2] > 2000


def test_hook_litdata_chunk_decompressed(recorder, tmp_path):
    ld.write_dataset(
        ({"x": np.zeros(100)} for _ in range(4)), tmp_path / "ds", chunk_size=2, compression="zstd"
    )
    ld.write_dataset(range(4), tmp_path / "plain", chunk_size=2)
    ld.DatasetReader(tmp_path / "plain")[3]  # read in place: nothing to decompress
    reader = ld.DatasetReader(tmp_path / "ds")
    reader[0], reader[3]
    events = [e for e in recorder.EVENTS if e[0] == "decompressed"]
    assert [e[1] for e in events] == ["chunk-0-0.bin", "chunk-0-1.bin"]  # the plain cache files
    assert all(e[2] == reader.index.chunks[0].chunk_bytes and e[3] > 0 for e in events)


def test_hook_litdata_chunk_opened(recorder, tmp_path):
    ld.write_dataset(range(5), tmp_path / "ds", chunk_size=2)
    assert list(ld.StreamingDataset(tmp_path / "ds")) == [0, 1, 2, 3, 4]
    assert [e for e in recorder.EVENTS if e[0] == "opened"] == [
        ("opened", 0, 2),
        ("opened", 1, 2),
        ("opened", 2, 1),
    ]


def test_hook_litdata_chunk_closed(recorder, tmp_path):
    ld.write_dataset(range(5), tmp_path / "ds", chunk_size=2)
    iterator = iter(ld.StreamingDataset(tmp_path / "ds"))
    assert [next(iterator) for _ in range(3)] == [0, 1, 2]
    assert [e for e in recorder.EVENTS if e[0] == "closed"] == [("closed", 0)]
    assert list(iterator) == [3, 4]
    opened_and_closed = [e[:2] for e in recorder.EVENTS if e[0] in {"opened", "closed"}]
    assert opened_and_closed == [
        ("opened", 0),
        ("closed", 0),
        ("opened", 1),
        ("closed", 1),
        ("opened", 2),
        ("closed", 2),
    ]


def test_hook_litdata_resolve_storage(recorder, tmp_path):
    assert hooks.resolve_storage("mirror://anything") == "file"  # the plugin decided
    assert hooks.resolve_storage("s3://bucket/x") == "s3"  # the built-in default decided
    assert hooks.resolve_storage(str(tmp_path)) == "file"


def test_hook_litdata_detect_format(recorder, tmp_path):
    (tmp_path / "special").mkdir()
    assert hooks.detect_format(resolve(tmp_path / "special")) == "chunks"  # the plugin decided
    assert hooks.detect_format(resolve(tmp_path)) is None
    ld.write_dataset([1, 2], tmp_path / "ds", chunk_size=2)
    assert hooks.detect_format(resolve(tmp_path / "ds")) == "chunks"  # the built-in decided


def test_hook_litdata_shuffle_for(recorder, tmp_path):
    ld.write_dataset(range(10), tmp_path / "striped", chunk_size=2)
    ld.write_dataset(range(10), tmp_path / "plain", chunk_size=2)
    striped = ld.StreamingDataset(tmp_path / "striped", shuffle=True)
    assert (striped.strategy.name, striped.strategy.strategy.size) == ("window", 2)
    assert ld.StreamingDataset(tmp_path / "plain", shuffle=True).strategy.name == "full"
    assert ld.StreamingDataset(tmp_path / "striped").strategy.name == "none"
    assert sorted(striped) == list(range(10))


def test_hook_litdata_default_item_loader(recorder, tmp_path):
    from litdata.engine.items.loaders import default_item_loader
    from litdata.engine.opening import open_dataset

    assert default_item_loader().name == "PyTreeLoader"  # litdata's own answer
    recorder.DEFAULTS.append(True)
    assert default_item_loader().name == "TemporalArrayLoader"
    old = ld.write_dataset(
        (np.arange(4, dtype=np.int64) for _ in range(3)),
        tmp_path / "t",
        chunk_size=8,
        item_loader=ld.TokensLoader(),
    )
    index = (old / "index.json").read_text().replace('"item_loader": "TokensLoader"', '"x": 0')
    (old / "index.json").write_text(index)  # an index of LitData before item_loader existed
    recorder.DEFAULTS.clear()
    assert hooks.default_item_loader(open_dataset(str(old)).index) == "TokensLoader"
    reader = ld.DatasetReader(old, item_loader=ld.TokensLoader(block_size=4))
    assert reader[1].tolist() == [0, 1, 2, 3]


def test_hook_litdata_default_executor(recorder):
    from litdata.processing.arguments import resolve_executor

    assert resolve_executor(None, None).name == "local"
    recorder.DEFAULTS.append(True)
    try:
        assert hooks.default_executor() == "dask"
    finally:
        recorder.DEFAULTS.clear()


def test_hook_litdata_lock_waited(recorder, tmp_path):
    ld.write_dataset(range(20), tmp_path / "ds", chunk_size=10, compression="zstd")
    assert sorted(ld.StreamingDataset(tmp_path / "ds", cache_dir=str(tmp_path / "c"))) == list(
        range(20)
    )
    locks = [e for e in recorder.EVENTS if e[0] == "lock"]
    assert ("lock", "chunk-0-0.bin", "exclusive", True) in locks
    assert ("lock", "chunk-0-1.bin", "shared", True) in locks


def test_hook_litdata_work_began(recorder, tmp_path, monkeypatch):
    log = tmp_path / "events.jsonl"
    monkeypatch.setenv("RECORDER_LOG", str(log))
    ld.optimize(int, range(6), str(tmp_path / "out"), chunk_size=2, num_workers=2, verbose=False)
    events = [tuple(json.loads(line)) for line in log.read_text().splitlines()]
    assert sorted(e for e in events if e[0] == "began") == [
        ("began", "optimize", 0),
        ("began", "optimize", 1),
    ]
    assert sum(e[3] for e in events if e[0] == "ended") == 6


def test_hook_litdata_work_ended(recorder, tmp_path, monkeypatch):
    log = tmp_path / "events.jsonl"
    monkeypatch.setenv("RECORDER_LOG", str(log))
    with pytest.raises(ProcessingError):
        ld.optimize(
            _fails_on_3, range(6), str(tmp_path / "out"), chunk_size=2, num_workers=1, verbose=False
        )
    events = [tuple(json.loads(line)) for line in log.read_text().splitlines()]
    assert ("failed", "optimize", "ValueError") in events
    assert [e[:3] for e in events if e[0] == "ended"] == [("ended", "optimize", 0)]


def _fails_on_3(i):
    if i == 3:
        raise ValueError("three")
    return i


def test_hook_litdata_failed(recorder, tmp_path):
    folder = ld.write_dataset(range(40), tmp_path / "ds", chunk_size=10, compression="zstd")
    (folder / "chunk-0-2.zstd.bin").write_bytes(b"not zstd")
    with pytest.raises(ChunkCorruptError):
        list(ld.StreamingDataset(folder, cache_dir=str(tmp_path / "c")))
    assert ("failed", "prefetch", "ChunkCorruptError") in recorder.EVENTS


def test_hook_litdata_process_context(recorder, tmp_path):
    ld.write_dataset(range(10), tmp_path / "ds", chunk_size=5)
    list(ld.StreamingDataset(tmp_path / "ds"))
    contexts = [dict(e[1]) for e in recorder.EVENTS if e[0] == "context"]
    assert {"dist_global_rank": 0, "worker_rank": 0}.items() <= contexts[-1].items()


def test_hook_litdata_wrap_batches(recorder, tmp_path):
    ld.write_dataset(range(10), tmp_path / "ds", chunk_size=5)
    recorder.WRAP.append(True)
    try:
        loader = ld.StreamingDataLoader(ld.StreamingDataset(tmp_path / "ds"), batch_size=4)
        assert sum(len(batch) for batch in loader) == 10
    finally:
        recorder.WRAP.clear()
    assert [e for e in recorder.EVENTS if e[0] == "batch"] == [("batch", 1)] * 3


def test_hook_litdata_wrap_read(recorder, tmp_path):
    ld.write_dataset(range(10), tmp_path / "ds", chunk_size=5)
    recorder.WRAP.append(True)
    try:
        assert sorted(ld.StreamingDataset(tmp_path / "ds")) == list(range(10))
    finally:
        recorder.WRAP.clear()
    reads = [e for e in recorder.EVENTS if e[0] == "read"]
    assert sorted((chunk, position) for _, chunk, position in reads) == [
        (chunk, position) for chunk in (0, 1) for position in range(5)
    ]


def test_blocked_and_disabled_plugins_are_not_loaded(recorder, monkeypatch):
    monkeypatch.setenv("LITDATA_BLOCK_PLUGINS", "recorder")
    reset_plugin_manager()
    assert get_plugin_manager().get_plugin("recorder") is None
    monkeypatch.delenv("LITDATA_BLOCK_PLUGINS")
    monkeypatch.setenv("LITDATA_DISABLE_PLUGIN_AUTOLOAD", "1")
    reset_plugin_manager()
    assert get_plugin_manager().get_plugin("recorder") is None
    assert hooks.resolve_storage("/data") == "file"  # built-in defaults still apply


def test_unknown_storage_scheme_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(KeyError, match=r"No storage backend serves nosuch:// URLs.*file://"):
        ld.DatasetReader("nosuch://bucket/data")
    assert "file" in kinds.storage.names()
    assert list(tmp_path.iterdir()) == []  # nothing was created, no folder named "nosuch:"


def test_hook_plugin_origin_names_its_distribution(recorder):
    assert hook_origin("recorder") == "litdata-plugin-recorder 0.1.0"
    assert hook_origin("builtin").startswith("litdata ")


def test_hook_plugin_that_fails_to_import_names_itself_and_the_way_out(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path / "dist"))
    fake_distribution(
        tmp_path / "dist",
        "litdata-plugin-broken",
        {"litdata": {"broken": "broken_hooks"}},
        {"broken_hooks": "import a_module_that_is_not_installed\n"},
    )
    reset_plugin_manager()
    with pytest.raises(PluginLoadError) as error:
        get_plugin_manager()
    message = str(error.value)
    assert "'broken'" in message
    assert "litdata-plugin-broken 0.1.0" in message
    assert "a_module_that_is_not_installed" in message
    assert "LITDATA_BLOCK_PLUGINS=broken" in message
    monkeypatch.setenv("LITDATA_BLOCK_PLUGINS", "broken")
    reset_plugin_manager()
    assert get_plugin_manager().get_plugin("broken") is None
