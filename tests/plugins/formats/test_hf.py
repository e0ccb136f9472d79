"""``hf://`` datasets through ``huggingface_hub``'s ``HfFileSystem``, against a local Hub.

``hub_server.py`` serves folders as dataset repositories on the Hub's API and resolve URLs;
``HF_ENDPOINT`` points the real client at it, so the code path is the one users run.
"""

import json
from pathlib import Path

import pytest
from support.parquet_files import read_with_pyarrow, row, write_parquet
from support.servers import start_hub

import litdata as ld
from litdata.core.errors import DatasetNotFoundError

pytest.importorskip("huggingface_hub")


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """The local Hub: its root folder (``<root>/<org>/<name>`` is a repo) and its log."""
    root = tmp_path_factory.mktemp("hub")
    log = tmp_path_factory.mktemp("hub-log") / "hub.log"
    server, endpoint = start_hub(root, log)
    try:
        yield root, endpoint, log
    finally:
        server.stop()


@pytest.fixture
def repo(hub, monkeypatch, request):
    """A fresh dataset repo ``org/<test name>`` with ``data/train-*`` and ``data/test-*``."""
    root, endpoint, _ = hub
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    name = request.node.name.replace("[", "-").replace("]", "")[:60]
    folder = root / "org" / name / "data"
    train = write_parquet(folder, [40, 25, 35], row_group_size=10, prefix="train")
    write_parquet(folder, [10], prefix="test")
    (root / "org" / name / "README.md").write_text("# a dataset\n")
    return f"org/{name}", folder, train


def _requests(hub):
    return hub[2].read_text().splitlines()


def test_stream_hf_parquet_with_workers(repo):
    name, folder, train = repo
    dataset = ld.StreamingDataset(f"hf://datasets/{name}/data/train-*.parquet", shuffle=True)
    loader = ld.StreamingDataLoader(dataset, batch_size=8, num_workers=2, collate_fn=list)
    seen = sorted((s for batch in loader for s in batch), key=lambda sample: sample["id"])
    assert seen == train == read_with_pyarrow(folder, "train-*.parquet")
    whole = ld.StreamingDataset(f"hf://datasets/{name}/data", item_loader=ld.ParquetLoader())
    assert len(whole) == 110
    assert whole[105] == row(95)  # test-00000.parquet (ids 0-9) comes first in name order
    assert [sample["id"] for sample in whole][8:12] == [8, 9, 0, 1]


def test_footers_are_read_with_ranged_requests(repo, hub):
    name, _, _ = repo
    before = len(_requests(hub))
    ld.StreamingDataset(f"hf://datasets/{name}/data")
    made = _requests(hub)[before:]
    reads = [line for line in made if "/resolve/" in line]
    # At most one tail read per file (fewer when fsspec's block cache already holds a tail),
    # and every one ranged: no file is downloaded to be indexed.
    assert 1 <= len(reads) <= 4, reads
    assert all(line.split()[-1].startswith("bytes=") for line in reads)


def test_index_hf_dataset_is_kept_and_reused(repo, hub, tmp_path):
    name, _, train = repo
    url = f"hf://datasets/{name}/data/train-*.parquet"
    folder = ld.index_hf_dataset(url, cache_dir=str(tmp_path))
    index = json.loads((Path(folder) / "index.json").read_text())
    assert index["config"]["item_loader"] == "ParquetLoader"
    assert [chunk["chunk_size"] for chunk in index["chunks"]] == [40, 25, 35]
    before = len(_requests(hub))
    assert ld.index_hf_dataset(url, cache_dir=str(tmp_path)) == folder
    assert len(_requests(hub)) == before  # reused: not a request
    dataset = ld.StreamingDataset(url, index_path=folder, cache_dir=str(tmp_path / "c"))
    assert sorted((s for s in dataset), key=lambda sample: sample["id"]) == train


def test_hf_token_is_sent(repo, hub, monkeypatch):
    name, _, train = repo
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    before = len(_requests(hub))
    dataset = ld.StreamingDataset(f"hf://datasets/{name}/data/train-00001.parquet")
    assert list(dataset) == train[40:65]
    made = _requests(hub)[before:]
    assert made
    assert all(line.split()[2] == "Bearer:hf_secret" for line in made)


def test_the_hub_is_read_only(repo):
    name, _, _ = repo
    with pytest.raises(PermissionError, match="cache_dir="):
        ld.index_parquet_dataset(f"hf://datasets/{name}/data")


def test_a_missing_repo_or_folder(repo):
    name, _, _ = repo
    with pytest.raises(DatasetNotFoundError):
        ld.StreamingDataset("hf://datasets/org/no-such-repo/data")
    with pytest.raises(DatasetNotFoundError):
        ld.StreamingDataset(f"hf://datasets/{name}/nothing-here")


def _upper_text(sample):
    return {"id": sample["id"], "text": sample["text"].upper(), "tags": sample["tags"]}


def test_optimize_hf(repo, tmp_path):
    name, _, train = repo
    with pytest.raises(ValueError, match="Column 'maybe' of train-00000.parquet has nulls"):
        ld.optimize_hf(name, str(tmp_path / "opt"), split="train")
    columns = ["id", "text", "score", "tags", "meta", "blob"]
    output = ld.optimize_hf(
        name, str(tmp_path / "opt"), split="train", chunk_size=16, num_workers=2, columns=columns
    )
    dataset = ld.StreamingDataset(output)
    rows = sorted(dataset, key=lambda sample: sample["id"])
    # lists (of any length) as one JSON leaf, structs as dicts, bytes as bytes
    assert rows == [{column: sample[column] for column in columns} for sample in train]
    index = json.loads((tmp_path / "opt" / "index.json").read_text())
    assert index["config"]["data_format"][3] == "json"
    assert ld.optimize_hf(name, output, split="train") == output  # done already: kept
    mapped = ld.optimize_hf(
        name, str(tmp_path / "mapped"), split="test", fn=_upper_text, chunk_size=4, num_workers=1
    )
    assert [s["text"] for s in ld.StreamingDataset(mapped)] == [f"ROW {i}" for i in range(10)]
    with pytest.raises(DatasetNotFoundError, match="split='validation'"):
        ld.optimize_hf(name, str(tmp_path / "none"), split="validation")
