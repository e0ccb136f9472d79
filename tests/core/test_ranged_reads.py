"""``ds[i]`` of a remote chunk that is not cached reads just that item, with ranged requests."""

import uuid

import numpy as np
import pytest

import litdata as ld
from litdata.core.errors import ChunkCorruptError
from litdata.core.registry import registries
from litdata.plugins.storage.memory import MemoryStorage

pytestmark = pytest.mark.usefixtures("fresh_plugins")

CALLS: list[tuple[str, str]] = []


class CountingStorage(MemoryStorage):
    """The memory backend, counting the requests the core makes."""

    name = "counting"

    def download(self, url, local_path):
        CALLS.append(("download", url))
        super().download(url, local_path)

    def read_range(self, url, start, end):
        CALLS.append(("range", url))
        return super().read_range(url, start, end)


@pytest.fixture
def url():
    registries.storage.register("counting", CountingStorage)
    CALLS.clear()
    return f"counting://ranged-{uuid.uuid4().hex[:8]}/ds"


def _ranges():
    return [url for kind, url in CALLS if kind == "range"]


def test_an_item_costs_two_small_requests_then_one(url):
    samples = [{"id": i, "blob": np.full(5000, i, dtype=np.uint8)} for i in range(40)]
    ld.write_dataset(samples, url, chunk_size=10)
    CALLS.clear()
    reader = ld.DatasetReader(url)
    CALLS.clear()
    assert reader[13]["id"] == 13
    assert (reader[13]["blob"] == 13).all()
    assert len(_ranges()) == 3  # the offsets, the item; then the item again (offsets kept)
    assert not [call for call in CALLS if call[0] == "download"]
    assert reader[17]["id"] == 17
    assert len(_ranges()) == 4
    assert all(name.endswith("chunk-0-1.bin") for name in _ranges())


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
    assert [kind for kind, _ in CALLS] == ["download"]


def test_inconsistent_offsets_are_an_error(url):
    ld.write_dataset(({"id": i} for i in range(20)), url, chunk_size=10)
    storage = CountingStorage()
    data = bytearray(storage.fs.cat_file(storage.path(f"{url}/chunk-0-0.bin")))
    data[4 + 4 * 3 : 8 + 4 * 3] = (10**6).to_bytes(4, "little")  # item 3 ends past the chunk
    storage.fs.pipe_file(storage.path(f"{url}/chunk-0-0.bin"), bytes(data))
    with pytest.raises(ChunkCorruptError, match="item 2: its offsets"):
        ld.DatasetReader(url)[2]
