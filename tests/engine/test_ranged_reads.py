"""``ds[i]`` of a remote chunk that is not cached reads just that item, with ranged requests."""

import json
import uuid

import numpy as np
import pytest

import litdata as ld
from litdata.core.chunks.blocks import BLOCK_KEY, BLOCK_SIZE
from litdata.core.errors import ChunkCorruptError, DatasetFormatError
from litdata.core.registry import kinds
from litdata.plugins.storage.memory import MemoryStorage

pytestmark = pytest.mark.usefixtures("fresh_plugins")

CALLS: list[tuple[str, str]] = []


class CountingStorage(MemoryStorage):
    """The memory backend, counting the requests the core makes."""

    name = "counting"

    def download(self, url, local_path):
        CALLS.append(("download", url, 0))
        super().download(url, local_path)

    def read_range(self, url, start, end):
        CALLS.append(("range", url, end - start))
        return super().read_range(url, start, end)


@pytest.fixture
def url():
    kinds.storage.register("counting", CountingStorage)
    CALLS.clear()
    return f"counting://ranged-{uuid.uuid4().hex[:8]}/ds"


def _ranges():
    return [url for kind, url, _ in CALLS if kind == "range"]


def _edit_index(url, edit):
    storage = CountingStorage()
    path = storage.path(f"{url}/index.json")
    index = json.loads(storage.fs.cat_file(path))
    edit(index)
    storage.fs.pipe_file(path, json.dumps(index).encode())


def test_an_item_costs_two_small_requests_then_one(url):
    samples = [{"id": i, "blob": np.full(20_000, i, dtype=np.uint8)} for i in range(40)]
    ld.write_dataset(samples, url, chunk_size=10)  # 200 KB chunks: 4 blocks of 64 KiB each
    reader = ld.DatasetReader(url)
    CALLS.clear()
    assert reader[13]["id"] == 13
    assert (reader[13]["blob"] == 13).all()
    # the offsets' block, the item's blocks; then the item's again (offsets kept)
    assert len(_ranges()) == 3
    assert not [call for call in CALLS if call[0] == "download"]
    assert all(size <= 20_000 + 2 * BLOCK_SIZE for *_, size in CALLS)
    assert reader[17]["id"] == 17
    assert len(_ranges()) == 4
    assert all(name.endswith("chunk-0-1.bin") for name in _ranges())


def test_a_chunk_within_one_block_costs_one_request(url):
    ld.write_dataset(({"id": i} for i in range(20)), url, chunk_size=10)
    reader = ld.DatasetReader(url)
    CALLS.clear()
    assert [reader[i]["id"] for i in (3, 7, 2)] == [3, 7, 2]
    assert [kind for kind, *_ in CALLS] == ["range"]  # the whole (small) chunk, verified


def test_a_token_window_costs_one_request(url):
    tokens = (np.arange(1000, dtype=np.uint16) + i for i in range(8))
    ld.write_dataset(tokens, url, chunk_size=4000, item_loader=ld.TokensLoader())
    reader = ld.DatasetReader(url, item_loader=ld.TokensLoader(block_size=100))
    CALLS.clear()
    window = reader[23]
    assert window.tolist() == list(range(302, 402))  # tokens 2300..2399: the third array
    assert len(_ranges()) == 1


def test_cached_chunks_are_read_from_the_cache(url, tmp_path):
    ld.write_dataset(({"id": i} for i in range(30)), url, chunk_size=10)
    ds = ld.StreamingDataset(url, cache_dir=str(tmp_path / "cache"))
    assert sorted(sample["id"] for sample in ds) == list(range(30))
    CALLS.clear()
    assert ds[25]["id"] == 25
    assert CALLS == []


def test_compressed_chunks_are_downloaded_whole(url):
    ld.write_dataset(({"id": i} for i in range(30)), url, chunk_size=10, compression="zstd")
    reader = ld.DatasetReader(url)
    CALLS.clear()
    assert reader[25]["id"] == 25
    assert [kind for kind, *_ in CALLS] == ["download"]


def test_inconsistent_offsets_are_an_error(url):
    """A chunk without checksums (LitData's) has nothing to verify: its offsets are checked."""
    ld.write_dataset(({"id": i} for i in range(20)), url, chunk_size=10)
    _edit_index(url, lambda index: [chunk.pop("checksum") for chunk in index["chunks"]])
    storage = CountingStorage()
    data = bytearray(storage.fs.cat_file(storage.path(f"{url}/chunk-0-0.bin")))
    data[4 + 4 * 3 : 8 + 4 * 3] = (10**6).to_bytes(4, "little")  # item 3 ends past the chunk
    storage.fs.pipe_file(storage.path(f"{url}/chunk-0-0.bin"), bytes(data))
    with pytest.raises(ChunkCorruptError, match="item 2: its offsets"):
        ld.DatasetReader(url)[2]


def test_a_flipped_byte_fails_its_block_checksum(url):
    ld.write_dataset(({"id": i, "blob": bytes(20_000)} for i in range(20)), url, chunk_size=10)
    storage = CountingStorage()
    data = bytearray(storage.fs.cat_file(storage.path(f"{url}/chunk-0-0.bin")))
    data[-100] ^= 1  # in item 9
    storage.fs.pipe_file(storage.path(f"{url}/chunk-0-0.bin"), bytes(data))
    reader = ld.DatasetReader(url)
    assert reader[0]["id"] == 0
    with pytest.raises(ChunkCorruptError, match=r"chunk-0-0\.bin is corrupt: bytes .* block"):
        reader[9]


def test_a_chunk_with_only_a_whole_checksum_is_downloaded_and_checked(url, monkeypatch):
    """An older litdata's chunk: no block table, so it is verified whole, once."""
    ld.write_dataset(({"id": i, "blob": bytes(20_000)} for i in range(20)), url, chunk_size=10)
    _edit_index(url, lambda index: [chunk.pop(BLOCK_KEY) for chunk in index["chunks"]])
    reader = ld.DatasetReader(url)
    CALLS.clear()
    assert [reader[i]["id"] for i in (3, 4)] == [3, 4]
    assert [kind for kind, *_ in CALLS] == ["download"]
    monkeypatch.setenv("LITDATA_RANGED_READS", "unverified")
    reader = ld.DatasetReader(url)
    CALLS.clear()
    assert reader[13]["id"] == 13
    assert [kind for kind, *_ in CALLS] == ["range", "range"]


def test_a_malformed_block_table_is_an_error(url):
    ld.write_dataset(({"id": i, "blob": bytes(20_000)} for i in range(20)), url, chunk_size=10)
    _edit_index(url, lambda index: index["chunks"][1].update({BLOCK_KEY: "xxh3:65536:AAAA"}))
    with pytest.raises(DatasetFormatError, match=BLOCK_KEY):
        ld.DatasetReader(url)[13]
