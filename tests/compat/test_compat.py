"""Drop-in for LitData users: its import paths, names, exception types and helpers work here."""

from __future__ import annotations

import fcntl
import importlib
import json
import os
import pty
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import numpy as np
import pytest

import litdata
from litdata.core.errors import DatasetExistsError, DatasetNotFoundError, UnknownPluginError

ROOT = Path(__file__).resolve().parents[2]
NAMES = json.loads((ROOT / "tests" / "data" / "litdata_0_2_76_public_names.json").read_text())


def test_litdatas_top_level_names_are_here():
    missing = {name for name in NAMES["litdata"] if not hasattr(litdata, name)}
    assert missing == set()


def test_litdatas_streaming_names_are_here():
    import litdata.streaming

    missing = {name for name in NAMES["litdata.streaming"] if not hasattr(litdata.streaming, name)}
    assert missing == set()


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("litdata.streaming", "StreamingDataset StreamingDataLoader CombinedStreamingDataset"),
        ("litdata.streaming", "ParallelStreamingDataset TokensLoader"),
        ("litdata.streaming.item_loader", "TokensLoader PyTreeLoader BaseItemLoader"),
        ("litdata.streaming.item_loader", "ParquetLoader"),
        ("litdata", "ParquetLoader index_parquet_dataset index_hf_dataset optimize_hf"),
        ("litdata.processing.functions", "optimize map merge_datasets walk"),
        ("litdata.utilities.encryption", "FernetEncryption RSAEncryption"),
        ("litdata", "walk breakpoint train_test_split"),
    ],
)
def test_litdatas_import_paths_work(module, names):
    imported = importlib.import_module(module)
    assert all(callable(getattr(imported, name)) for name in names.split())


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("litdata.streaming", "Cache"),
        ("litdata.streaming.writer", "index_parquet_dataset"),
        ("litdata.streaming.collate", "litdata_collate"),
        ("litdata.streaming.dataset_update", "dataset_update"),
        ("litdata.processing.complete", "complete_dataset is_complete_dataset"),
        ("litdata.processing.media_folder", "iter_webdataset_tar list_media_folder"),
        ("litdata.utilities.hf_dataset", "index_hf_dataset"),
        ("litdata.utilities.keys_index", "build_keys_index"),
        ("litdata.raw.dataset", "StreamingRawDataset"),
    ],
)
def test_litdatas_top_level_names_import_from_where_litdata_defines_them(module, names):
    """LitData's own tests and many users import a public name from its defining module."""
    imported = importlib.import_module(module)
    for name in names.split():
        same = (
            litdata
            if hasattr(litdata, name)
            else importlib.import_module("litdata.streaming.cache")
        )
        assert getattr(imported, name) is getattr(same, name)


def test_dir_shows_the_public_api_only():
    names = dir(litdata)
    assert not {"Any", "TYPE_CHECKING", "annotations", "importlib", "_LAZY"} & set(names)
    assert {"optimize", "StreamingDataset", "walk"} <= set(names)


def test_importing_dunder_main_does_not_run_the_cli():
    result = subprocess.run(
        [sys.executable, "-c", "import litdata.__main__; print('imported')"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.stdout.strip() == "imported", result.stderr


def test_errors_are_the_builtins_litdata_raises(tmp_path):
    with pytest.raises(ValueError, match="The provided dataset path"):  # LitData: ValueError
        litdata.StreamingDataset(str(tmp_path / "nothing"))
    with pytest.raises(ValueError, match="nope"):  # and for an unknown compression
        litdata.write_dataset([{"a": 1}], tmp_path / "c", chunk_size=1, compression="nope")
    litdata.write_dataset([{"a": 1}], tmp_path / "ds", chunk_size=1)
    with pytest.raises(RuntimeError):  # LitData: optimize over an existing dataset
        litdata.optimize(abs, [1], str(tmp_path / "ds"), chunk_size=1, num_workers=1)
    assert issubclass(DatasetExistsError, ValueError)  # merge_datasets into an existing output
    assert issubclass(DatasetNotFoundError, FileNotFoundError)  # and still what it was
    assert issubclass(UnknownPluginError, KeyError)


def test_walk_lists_a_tree_like_os_walk(tmp_path):
    for path in ("a/b/c.txt", "a/d.txt", "e/f/g/h.txt", "top.txt"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(path)
    ours = {(d, tuple(sorted(n)), tuple(sorted(f))) for d, n, f in litdata.walk(tmp_path, 4)}
    theirs = {(d, tuple(sorted(n)), tuple(sorted(f))) for d, n, f in os.walk(tmp_path)}
    assert ours == theirs
    pruned = []
    for dirpath, dirnames, _ in litdata.walk(str(tmp_path)):
        pruned.append(dirpath)
        dirnames[:] = [name for name in dirnames if name != "e"]
    assert not [path for path in pruned if "/e" in path[len(str(tmp_path)) :]]


def test_walk_yields_folders_breadth_first_in_sorted_order(tmp_path):
    names = [f"d{i:02d}" for i in range(24)]
    for name in reversed(names):  # created in reverse: the directory order is not sorted
        for sub in ("b", "a"):
            (tmp_path / name / sub).mkdir(parents=True)
            (tmp_path / name / sub / "f").touch()
    expected = [
        str(tmp_path),
        *(str(tmp_path / name) for name in names),
        *(str(tmp_path / name / sub) for name in names for sub in ("a", "b")),
    ]
    for _ in range(3):  # whichever listing thread finishes first
        walked = list(litdata.walk(tmp_path, 8))
        assert [folder for folder, _, _ in walked] == expected
        assert walked[0][1] == names
    pruned = []
    for folder, dirnames, _ in litdata.walk(tmp_path, 8):
        pruned.append(folder)
        dirnames[:] = [name for name in dirnames if name != "a"]
    assert str(tmp_path / "d00" / "a") not in pruned
    assert str(tmp_path / "d00" / "b") in pruned


BREAKING_WORKER = """
import multiprocessing as mp
import litdata

def work(i):
    value = 40 + i
    litdata.breakpoint()
    print("after", value, flush=True)

if __name__ == "__main__":
    process = mp.get_context("spawn").Process(target=work, args=(2,))
    process.start()
    process.join()
"""


def test_breakpoint_prompts_on_the_terminal_from_a_worker_process(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(BREAKING_WORKER)
    master, slave = pty.openpty()

    def own_terminal():
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    process = subprocess.Popen(
        [sys.executable, str(script)],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        preexec_fn=own_terminal,  # noqa: PLW1509  # the pty must be the child's terminal
    )
    seen = b""

    def wait_for(token: bytes) -> None:
        nonlocal seen
        deadline = time.monotonic() + 60
        while token not in seen and time.monotonic() < deadline:
            if select.select([master], [], [], 0.5)[0]:
                seen += os.read(master, 4096)
        assert token in seen, seen.decode(errors="replace")

    try:
        wait_for(b"(Pdb)")
        os.write(master, b"p value * 2\n")
        wait_for(b"84")
        os.write(master, b"c\n")
        wait_for(b"after 42")
        assert process.wait(30) == 0
    finally:
        process.kill()
        os.close(master)
        os.close(slave)


@pytest.mark.parametrize(
    ("samples", "expected_format"),
    [
        ([{"n": 1}, {"n": np.int64(2)}, {"n": np.uint8(3)}], ["int"]),
        ([{"a": 1, "b": None}, {"a": 2, "b": None}], ["int", "pickle"]),
        ([{"ids": [1, 2]}, {"ids": [1, 2, 3]}, {"ids": []}], ["json"]),
        ([{"meta": {"tags": ["x"]}}, {"meta": {"tags": ["y", "z"]}}], ["json"]),
    ],
    ids=["numpy-int-after-int", "none-leaves", "list-lengths-vary", "nested-lists"],
)
def test_sample_sequences_litdata_reads_back_are_written(tmp_path, samples, expected_format):
    litdata.write_dataset(samples, tmp_path, chunk_size=2)
    reader = litdata.DatasetReader(tmp_path)
    assert [reader[i] for i in range(len(reader))] == samples
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["config"]["data_format"] == expected_format  # what LitData 0.2.76 writes


def test_an_optimize_that_writes_no_sample_makes_an_empty_dataset(tmp_path):
    fns = pytest.importorskip("support.fns")
    output = tmp_path / "empty"
    litdata.optimize(fns.record_or_none, [0, 3, 6], str(output), chunk_size=2, num_workers=2)
    dataset = litdata.StreamingDataset(str(output))
    assert len(dataset) == 0
    assert list(litdata.StreamingDataLoader(dataset, batch_size=2, num_workers=2)) == []
    litdata.optimize(fns.record_or_none, [1, 2], str(output), chunk_size=2, mode="append")
    assert sorted(sample["id"] for sample in litdata.StreamingDataset(str(output))) == [1, 2]


def test_litdatas_index_of_an_empty_run_reads_as_empty(tmp_path):
    (tmp_path / "index.json").write_text('{"chunks": [], "config": null, "updated_at": "1"}')
    assert list(litdata.StreamingDataset(str(tmp_path))) == []


def test_chunks_litdata_decompressed_in_place_are_read(tmp_path):
    from litdata.core.chunks.stored import plain_chunk
    from litdata.core.errors import ChunkCorruptError
    from litdata.core.index import index_from_bytes
    from litdata.plugins import resolve

    samples = [{"id": i, "text": f"row {i}" * 5} for i in range(30)]
    litdata.write_dataset(samples, tmp_path, chunk_size=10, compression="zstd")
    index = index_from_bytes((tmp_path / "index.json").read_bytes(), "index.json")
    codec = resolve("compression", "zstd")
    for chunk in index.chunks:  # what LitData's reader leaves behind
        stored = tmp_path / chunk.filename
        plain = plain_chunk(stored.read_bytes(), chunk, compressor=codec, level=None, where="x")
        (tmp_path / chunk.filename.replace(".zstd", "")).write_bytes(bytes(plain))
        stored.unlink()
    reader = litdata.DatasetReader(tmp_path)
    assert [reader[i] for i in range(len(reader))] == samples
    with open(tmp_path / "chunk-0-2.bin", "ab") as handle:
        handle.write(b"extra")
    with pytest.raises(ChunkCorruptError, match="decompresses it in place"):
        litdata.DatasetReader(tmp_path)[25]


# -- LitData's import paths that users and serializer authors write -----------------------------
LITDATA_PATHS = [
    ("litdata.streaming.serializers", "Serializer"),
    ("litdata.streaming.cache", "Cache"),
    ("litdata.utilities.train_test_split", "train_test_split"),
    ("litdata.utilities.dataset_utilities", "load_index_file"),
    ("litdata.constants", "_INDEX_FILENAME"),
]


@pytest.mark.parametrize(("module", "name"), LITDATA_PATHS)
def test_litdatas_import_paths_import_in_a_fresh_interpreter(module, name):
    code = f"from {module} import {name}; print({name}.__name__ if callable({name}) else {name})"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() in (name, "index.json")


def test_litdata_serializer_names_match_litdata_0_2_76s():
    """Every public serializer class LitData 0.2.76 defines is importable from its path here."""
    from litdata.streaming import serializers

    theirs = {
        "AudioSerializer BooleanSerializer BytesSerializer FileSerializer FloatSerializer "
        "GraphSerializer ImageSerializer IntegerSerializer JPEGArraySerializer JPEGSerializer "
        "JsonSerializer MeshSerializer NiftiSerializer NoHeaderNumpySerializer "
        "NoHeaderTensorSerializer NumpySerializer PDFSerializer PILSerializer PickleSerializer "
        "Serializer StringSerializer TIFFSerializer TensorSerializer TextSerializer "
        "VideoSerializer"
    }.pop().split()
    assert [name for name in theirs if not hasattr(serializers, name)] == []
    assert serializers.IntegerSerializer().serialize(7)[0] == (7).to_bytes(8, "little", signed=True)


def test_a_serializer_written_for_litdata_subclasses_serializer_and_round_trips(tmp_path):
    from fractions import Fraction

    from litdata.streaming.serializers import Serializer

    class FractionSerializer(Serializer):  # as a LitData user writes one
        def serialize(self, item):
            return f"{item.numerator}/{item.denominator}".encode(), None

        def deserialize(self, data):
            return Fraction(data.decode())  # LitData hands bytes to its serializers

        def can_serialize(self, item):
            return isinstance(item, Fraction)

    chosen = {"fraction": FractionSerializer()}
    litdata.write_dataset(
        [Fraction(1, 3), Fraction(2, 7)], tmp_path, chunk_size=2, serializers=chosen
    )
    reader = litdata.DatasetReader(tmp_path, serializers=chosen)
    assert [reader[0], reader[1]] == [Fraction(1, 3), Fraction(2, 7)]


def test_cache_writes_by_index_then_reads_back_as_litdatas_did(tmp_path):
    from litdata.streaming.cache import Cache

    cache = Cache(str(tmp_path / "cache"), chunk_size=3)
    for index in (1, 0, 2, 3, 5, 4, 6):  # out of order: written in index order
        cache[index] = {"id": index, "x": np.full(2, index)}
    assert not cache.filled
    with pytest.raises(DatasetNotFoundError, match=r"call done\(\) and merge\(\)"):
        cache[0]
    written = cache.done()
    cache.merge()
    assert cache.filled
    assert [os.path.basename(path) for path in written] == [
        "chunk-0-0.bin",
        "chunk-0-1.bin",
        "chunk-0-2.bin",
    ]
    reader = Cache(str(tmp_path / "cache"), chunk_size=3)
    assert len(reader) == 7
    assert [reader[i]["id"] for i in range(7)] == list(range(7))
    assert reader.get_chunk_intervals() == [(0, 0, 3, 3), (3, 3, 6, 6), (6, 6, 7, 7)]


def test_load_index_file_returns_the_index_as_json(tmp_path):
    from litdata.utilities.dataset_utilities import load_index_file

    litdata.write_dataset(range(5), tmp_path, chunk_size=2)
    index = load_index_file(str(tmp_path))
    assert [chunk["chunk_size"] for chunk in index["chunks"]] == [2, 2, 1]
    assert index["config"]["data_format"] == ["int"]
    with pytest.raises(DatasetNotFoundError):
        load_index_file(str(tmp_path / "missing"))


def test_the_exceptions_are_litdata_errors_and_top_level_names():
    import litdata.errors

    for name in litdata.errors.__all__:
        cls = getattr(litdata.errors, name)
        assert getattr(litdata, name) is cls
        assert issubclass(cls, (litdata.errors.LitdataError, litdata.errors.LitdataWarning))
    assert issubclass(litdata.ChunkCorruptError, litdata.DatasetFormatError)
