"""The ``parquet`` format: folders and globs of real Parquet files, streamed as LitData does."""

import json
import multiprocessing
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.parquet_files import read_with_pyarrow, row, write_parquet

import litdata as ld
from litdata.core.errors import DatasetFormatError, DatasetNotFoundError, ProcessingError
from litdata.core.registry import hooks
from litdata.engine.boundary.resolve import resolve
from litdata.plugins.formats.parquet.format import ParquetFormat
from litdata.testing import FormatContract

SIZES = [23, 1, 40, 16]


class TestParquetFormat(FormatContract):
    format_class = ParquetFormat

    @pytest.fixture
    def expected(self):
        return [row(i) for i in range(sum(SIZES))]

    @pytest.fixture
    def dataset(self, tmp_path):
        write_parquet(tmp_path / "pq", SIZES)
        return tmp_path / "pq"


class TestParquetFormatOnS3(TestParquetFormat):
    @pytest.fixture
    def dataset(self, tmp_path, s3_server, monkeypatch):
        write_parquet(tmp_path / "pq", SIZES)
        monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        url = s3_server.url(s3_server.new_bucket(), "pq")
        remote = resolve(url)
        for path in sorted((tmp_path / "pq").iterdir()):
            remote.storage.upload(str(path), remote.join(path.name))
        return url


def _collate(batch):
    return batch


def _stream(dataset, batch_size=4, num_workers=2, **options):
    loader = ld.StreamingDataLoader(
        dataset, batch_size=batch_size, num_workers=num_workers, collate_fn=_collate, **options
    )
    return [sample for batch in loader for sample in batch]


def test_rows_are_pyarrows_rows_in_file_name_order(tmp_path):
    write_parquet(tmp_path, SIZES, row_group_size=5)
    dataset = ld.StreamingDataset(tmp_path, item_loader=ld.ParquetLoader())
    assert list(dataset) == read_with_pyarrow(tmp_path)
    assert dataset[41] == row(41)
    assert len(dataset) == sum(SIZES)
    assert not (tmp_path / "index.json").exists()  # the folder is read, never written


@pytest.mark.parametrize("low_memory", [True, False])
def test_columns_and_low_memory(tmp_path, low_memory):
    write_parquet(tmp_path, SIZES)
    loader = ld.ParquetLoader(columns=["id", "tags"], low_memory=low_memory)
    dataset = ld.StreamingDataset(tmp_path, item_loader=loader, shuffle=True)
    seen = sorted(_stream(dataset), key=lambda sample: sample["id"])
    assert seen == [{"id": i, "tags": row(i)["tags"]} for i in range(sum(SIZES))]


def test_a_glob_or_one_file_selects_files(tmp_path):
    write_parquet(tmp_path, [5, 5], prefix="train")
    write_parquet(tmp_path, [3], prefix="test")
    train = ld.StreamingDataset(tmp_path / "train-*.parquet")
    assert [sample["id"] for sample in train] == list(range(10))
    one = ld.StreamingDataset(tmp_path / "test-00000.parquet")
    assert list(one) == read_with_pyarrow(tmp_path, "test-*.parquet")
    assert len(ld.StreamingDataset(tmp_path)) == 13


def test_index_parquet_dataset_writes_litdatas_layout(tmp_path):
    write_parquet(tmp_path, [4, 6])
    assert ld.index_parquet_dataset(str(tmp_path)) == str(tmp_path)
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["config"] == {
        "chunk_bytes": None,
        "chunk_size": None,
        "compression": None,
        "data_format": [
            "int64",
            "string",
            "double",
            "list<element: string>",
            "struct<even: bool, half: int64>",
            "binary",
            "int64",
        ],
        "data_spec": None,
        "encryption": None,
        "item_loader": "ParquetLoader",
    }
    sizes = [(tmp_path / f"part-0000{i}.parquet").stat().st_size for i in range(2)]
    assert [
        (c["filename"], c["chunk_size"], c["chunk_bytes"], c["dim"]) for c in index["chunks"]
    ] == [
        ("part-00000.parquet", 4, sizes[0], None),
        ("part-00001.parquet", 6, sizes[1], None),
    ]
    float(index["updated_at"])
    # The index is used: a file it does not list is not read.
    write_parquet(tmp_path / "later", [3])
    shutil.copy(tmp_path / "later" / "part-00000.parquet", tmp_path / "part-00009.parquet")
    assert len(ld.StreamingDataset(tmp_path)) == 10


def test_index_parquet_dataset_into_a_cache_dir(tmp_path):
    write_parquet(tmp_path / "data", [4, 6])
    written = ld.index_parquet_dataset(str(tmp_path / "data"), cache_dir=str(tmp_path / "index"))
    assert not (tmp_path / "data" / "index.json").exists()
    dataset = ld.StreamingDataset(tmp_path / "data", index_path=written)
    assert [sample["id"] for sample in dataset] == list(range(10))


def test_parquet_on_gcs(tmp_path, gcs_server):
    rows = write_parquet(tmp_path, [9, 12])
    url = gcs_server.url(gcs_server.new_bucket(), "pq")
    options = gcs_server.storage_options
    remote = resolve(url, storage_options=options)
    for path in sorted(tmp_path.glob("*.parquet")):
        remote.storage.upload(str(path), remote.join(path.name))
    dataset = ld.StreamingDataset(url, storage_options=options, shuffle=True)
    assert sorted(_stream(dataset), key=lambda sample: sample["id"]) == rows
    assert ld.index_parquet_dataset(url, storage_options=options) == url
    assert remote.storage.exists(remote.join("index.json"))
    assert ld.StreamingDataset(url, storage_options=options)[20] == rows[20]


def test_a_remote_index_reads_only_footers(tmp_path, s3_server):
    write_parquet(tmp_path, [500, 500], row_group_size=100)
    url = s3_server.url(s3_server.new_bucket(), "pq")
    options = s3_server.storage_options
    remote = resolve(url, storage_options=options)
    for path in sorted(tmp_path.glob("*.parquet")):
        remote.storage.upload(str(path), remote.join(path.name))
    ld.index_parquet_dataset(url, storage_options=options)
    index = json.loads(remote.read("index.json"))
    assert [chunk["chunk_size"] for chunk in index["chunks"]] == [500, 500]
    dataset = ld.StreamingDataset(url, storage_options=options, item_loader=ld.ParquetLoader())
    assert dataset[999] == row(999)


@pytest.mark.parametrize("stop", [3, 11])
def test_resume_mid_epoch_matches_pyarrow(tmp_path, stop):
    write_parquet(tmp_path, SIZES, row_group_size=6)
    truth = {sample["id"]: sample for sample in read_with_pyarrow(tmp_path)}

    def loader():
        dataset = ld.StreamingDataset(tmp_path, shuffle=True, seed=7)
        return ld.StreamingDataLoader(dataset, batch_size=4, num_workers=2, collate_fn=_collate)

    whole = list(loader())
    head, state = [], None
    first = loader()
    for batch in first:
        head.append(batch)
        if len(head) == stop:
            state = first.state_dict()
            break
    resumed = loader()
    resumed.load_state_dict(state)
    tail = list(resumed)
    assert head + tail == whole
    samples = [sample for batch in head + tail for sample in batch]
    assert sorted(sample["id"] for sample in samples) == sorted(truth)
    assert all(sample == truth[sample["id"]] for sample in samples)


def test_elastic_resume_with_another_worker_count(tmp_path):
    write_parquet(tmp_path, SIZES, row_group_size=6)
    dataset = ld.StreamingDataset(tmp_path, shuffle=True)
    first = ld.StreamingDataLoader(dataset, batch_size=4, num_workers=2, collate_fn=_collate)
    head = []
    for batch in first:
        head += batch
        if len(head) >= 20:
            state = first.state_dict()
            break
    resumed_set = ld.StreamingDataset(tmp_path, shuffle=True)
    resumed = ld.StreamingDataLoader(resumed_set, batch_size=4, num_workers=1, collate_fn=_collate)
    resumed.load_state_dict(state)
    tail = [sample for batch in resumed for sample in batch]
    assert sorted(s["id"] for s in head + tail) == list(range(sum(SIZES)))


def test_ranks_drop_last_and_subsample(tmp_path, monkeypatch):
    write_parquet(tmp_path, SIZES)
    seen = []
    for rank in range(2):
        monkeypatch.setenv("WORLD_SIZE", "2")
        monkeypatch.setenv("RANK", str(rank))
        dataset = ld.StreamingDataset(tmp_path, shuffle=True, drop_last=True)
        seen.append([sample["id"] for sample in _stream(dataset, batch_size=5)])
    assert len(seen[0]) == len(seen[1])
    assert len(seen[0]) % 5 == 0
    assert not set(seen[0]) & set(seen[1])
    monkeypatch.delenv("WORLD_SIZE")
    monkeypatch.delenv("RANK")
    half = ld.StreamingDataset(tmp_path, subsample=0.5)
    ids = [sample["id"] for sample in half]
    assert len(ids) == len(half) == sum(SIZES) // 2
    assert all(row(i) == half_row for i, half_row in zip(ids, half, strict=True))


def test_combined_with_a_chunk_dataset(tmp_path):
    write_parquet(tmp_path / "pq", [30, 30])
    ld.write_dataset(({"id": 1000 + i} for i in range(40)), tmp_path / "chunks", chunk_size=8)
    combined = ld.CombinedStreamingDataset(
        [
            ld.StreamingDataset(tmp_path / "pq", item_loader=ld.ParquetLoader(columns=["id"])),
            ld.StreamingDataset(tmp_path / "chunks"),
        ]
    )
    loader = ld.StreamingDataLoader(combined, batch_size=4, num_workers=2)
    ids = sorted(int(i) for batch in loader for i in batch["id"])
    assert ids == [*range(60), *range(1000, 1040)]


def _read_in_forked_worker(path, queue):
    dataset = ld.StreamingDataset(path)
    queue.put([sample["id"] for sample in dataset])


def test_forked_workers_after_the_parent_read_parquet(tmp_path):
    """pyarrow read in the parent, then 2 forked workers read: no deadlock (a timeout fails)."""
    write_parquet(tmp_path, [300, 300], row_group_size=50)
    dataset = ld.StreamingDataset(tmp_path, shuffle=True)
    assert dataset[599] == row(599)  # the parent has used pyarrow
    pq.read_table(tmp_path / "part-00000.parquet", use_threads=True)  # and its thread pool
    loader = ld.StreamingDataLoader(
        dataset,
        batch_size=8,
        num_workers=2,
        collate_fn=_collate,
        multiprocessing_context="fork",
        timeout=60,
    )
    assert sorted(sample["id"] for batch in loader for sample in batch) == list(range(600))
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_read_in_forked_worker, args=(str(tmp_path), queue))
    child.start()
    assert sorted(queue.get(timeout=60)) == list(range(600))
    child.join(30)
    assert child.exitcode == 0


def test_hook_litdata_detect_format(tmp_path):
    write_parquet(tmp_path / "pq", [3])
    ld.write_dataset(range(3), tmp_path / "native", chunk_size=2)
    assert hooks.detect_format(resolve(tmp_path / "pq")) == "parquet"
    assert hooks.detect_format(resolve(tmp_path / "native")) == "chunks"
    ld.index_parquet_dataset(str(tmp_path / "pq"))
    assert hooks.detect_format(resolve(tmp_path / "pq")) == "parquet"


# -- bad input -------------------------------------------------------------------------------


def test_a_glob_matching_nothing(tmp_path):
    write_parquet(tmp_path, [3])
    with pytest.raises(DatasetNotFoundError, match=r"matches 'valid-\*.parquet'"):
        ld.StreamingDataset(tmp_path / "valid-*.parquet")
    with pytest.raises(DatasetNotFoundError, match="No .parquet files"):
        ld.index_parquet_dataset(str(tmp_path / "valid-*.parquet"))


def test_different_schemas_name_both_files_and_the_column(tmp_path):
    write_parquet(tmp_path, [3, 3])
    table = pa.table({"id": ["x"], "text": ["y"]})
    pq.write_table(table, tmp_path / "part-00002.parquet")
    message = (
        r"part-00000.parquet and part-00002.parquet differ: column 'id' is int64 in .* but string"
    )
    with pytest.raises(DatasetFormatError, match=message):
        ld.StreamingDataset(tmp_path)
    with pytest.raises(DatasetFormatError, match="same schema"):
        ld.index_parquet_dataset(str(tmp_path))


@pytest.mark.parametrize("damage", ["truncated", "not parquet"])
def test_an_unreadable_file_is_named(tmp_path, damage):
    write_parquet(tmp_path, [10, 10])
    bad = tmp_path / "part-00001.parquet"
    data = bad.read_bytes()
    bad.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"hello, world")
    with pytest.raises(DatasetFormatError, match=r"part-00001.parquet is not a readable Parquet"):
        ld.StreamingDataset(tmp_path)


def test_a_file_truncated_after_indexing_is_named_when_read(tmp_path):
    write_parquet(tmp_path, [10, 10])
    ld.index_parquet_dataset(str(tmp_path))
    bad = tmp_path / "part-00001.parquet"
    bad.write_bytes(bad.read_bytes()[:-30])
    dataset = ld.StreamingDataset(tmp_path)
    with pytest.raises(Exception, match="part-00001.parquet") as caught:
        list(_stream(dataset, num_workers=2))
    assert "truncated" in str(caught.value) or "Parquet" in str(caught.value)


def test_another_item_loader_is_refused(tmp_path):
    write_parquet(tmp_path, [3])
    with pytest.raises(DatasetFormatError, match=r"Use item_loader=ParquetLoader"):
        ld.StreamingDataset(tmp_path, item_loader=ld.TokensLoader(4))
    with pytest.raises(ProcessingError, match="does not write"):
        ld.optimize(
            fn=str,
            inputs=[1],
            output_dir=str(tmp_path / "o"),
            chunk_size=1,
            item_loader=ld.ParquetLoader(),
        )
    with pytest.raises(DatasetFormatError, match="does not have"):
        ld.StreamingDataset(tmp_path, item_loader=ld.ParquetLoader(columns=["nope"]))[0]


def test_a_glob_or_one_file_on_s3(tmp_path, s3_server):
    write_parquet(tmp_path, [5, 5], prefix="train")
    write_parquet(tmp_path, [3], prefix="test")
    url = s3_server.url(s3_server.new_bucket(), "pq")
    options = s3_server.storage_options
    remote = resolve(url, storage_options=options)
    for path in sorted(tmp_path.glob("*.parquet")):
        remote.storage.upload(str(path), remote.join(path.name))
    train = ld.StreamingDataset(f"{url}/train-*.parquet", storage_options=options)
    assert [sample["id"] for sample in train] == list(range(10))
    one = ld.StreamingDataset(f"{url}/test-00000.parquet", storage_options=options)
    assert list(one) == read_with_pyarrow(tmp_path, "test-*.parquet")
    with pytest.raises(DatasetNotFoundError, match="matches 'valid-"):
        ld.StreamingDataset(f"{url}/valid-*.parquet", storage_options=options)


def test_spawned_workers_read_a_glob(tmp_path):
    write_parquet(tmp_path, [20, 20], prefix="train")
    write_parquet(tmp_path, [5], prefix="test")
    loader = ld.ParquetLoader(columns=["id"])
    dataset = ld.StreamingDataset(tmp_path / "train-*.parquet", item_loader=loader, shuffle=True)
    stream = ld.StreamingDataLoader(
        dataset, batch_size=8, num_workers=2, multiprocessing_context="spawn"
    )
    assert sorted(int(i) for batch in stream for i in batch["id"]) == list(range(40))
