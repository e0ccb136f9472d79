"""A corrupt dataset is an error that names the file, never wrong samples."""

import json

import pytest

import litdata as ld
from litdata.core.errors import ChunkCorruptError, DatasetFormatError


@pytest.fixture
def dataset(tmp_path):
    ld.write_dataset(
        ({"id": i, "text": f"sample {i}" * 3} for i in range(20)), tmp_path / "ds", chunk_size=5
    )
    return tmp_path / "ds"


def test_truncated_chunk(dataset):
    chunk = dataset / "chunk-0-1.bin"
    chunk.write_bytes(chunk.read_bytes()[:-7])
    reader = ld.DatasetReader(dataset)
    assert reader[0]["id"] == 0  # other chunks still read
    with pytest.raises(ChunkCorruptError, match="chunk-0-1.bin is truncated or padded"):
        reader[5]
    with pytest.raises(ChunkCorruptError, match="chunk-0-1.bin is corrupt or truncated"):
        ld.DatasetReader(dataset, verify=False)[5]  # the header check alone still catches it


def test_bit_flip_in_a_compressed_chunk_fails_its_checksum(tmp_path):
    ld.write_dataset(({"id": i} for i in range(10)), tmp_path, chunk_size=5, compression="zstd")
    chunk = tmp_path / "chunk-0-0.zstd.bin"
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0x40
    chunk.write_bytes(bytes(data))
    with pytest.raises(ChunkCorruptError, match=r"chunk-0-0.zstd.bin is corrupt: its checksum"):
        ld.DatasetReader(tmp_path)[0]


def test_item_sizes_that_do_not_add_up(dataset):
    chunk = dataset / "chunk-0-0.bin"
    data = bytearray(chunk.read_bytes())
    header = 4 * 7  # 5 items: count + 6 offsets
    data[header] += 1  # the first leaf's size field of item 0
    chunk.write_bytes(bytes(data))
    with pytest.raises(ChunkCorruptError, match="chunk-0-0.bin is corrupt: its checksum"):
        ld.DatasetReader(dataset)[0]
    # Without the checksum, the item's own sizes catch it; the message names file and item.
    with pytest.raises(ChunkCorruptError, match=r"chunk-0-0.bin, item 0: .*leaf sizes add up"):
        ld.DatasetReader(dataset, verify=False)[0]


def test_missing_chunk_file_is_named(dataset):
    (dataset / "chunk-0-2.bin").unlink()
    with pytest.raises(FileNotFoundError, match="chunk-0-2.bin listed in index.json is missing"):
        ld.DatasetReader(dataset)[10]


def test_unknown_data_format_says_what_to_install(dataset):
    index = json.loads((dataset / "index.json").read_text())
    index["config"]["data_format"][1] = "arrow_table"
    index["plugins"] = {"serializers": {"arrow_table": "litdata-plugin-arrow 1.2"}}
    (dataset / "index.json").write_text(json.dumps(index))
    with pytest.raises(KeyError) as caught:
        ld.DatasetReader(dataset)[0]
    message = str(caught.value)
    assert "'arrow_table'" in message
    assert "pip install litdata-plugin-arrow" in message


def test_data_format_and_spec_that_disagree(dataset):
    index = json.loads((dataset / "index.json").read_text())
    index["config"]["data_format"].append("int")
    (dataset / "index.json").write_text(json.dumps(index))
    with pytest.raises(DatasetFormatError, match="data_spec has 2 leaves but data_format lists 3"):
        ld.DatasetReader(dataset)


def test_malformed_index(dataset):
    (dataset / "index.json").write_text('{"chunks": "nope", "config": {}}')
    with pytest.raises(DatasetFormatError, match=r"index.json is not a valid litdata index"):
        ld.DatasetReader(dataset)


def test_verify_reports_every_problem(dataset, capsys):
    from litdata.cli import main

    assert main(["verify", str(dataset), "--quiet"]) == 0
    chunk = dataset / "chunk-0-3.bin"
    data = bytearray(chunk.read_bytes())
    data[-1] ^= 1
    chunk.write_bytes(bytes(data))
    (dataset / "chunk-0-1.bin").unlink()
    assert main(["verify", str(dataset), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "chunk-0-3.bin: Chunk" in out
    assert "checksum" in out
    assert "chunk-0-1.bin" in out
    assert "2 problems" in out


def test_crc32_checksums_of_earlier_datasets_still_verify(dataset):
    # Datasets written before xxh3 record crc32: they read, and a flipped byte is still caught.
    import zlib

    index = json.loads((dataset / "index.json").read_text())
    for chunk in index["chunks"]:
        data = (dataset / chunk["filename"]).read_bytes()
        chunk["checksum"] = f"crc32:{zlib.crc32(data):08x}"
    (dataset / "index.json").write_text(json.dumps(index))
    assert [ld.DatasetReader(dataset)[i]["id"] for i in range(20)] == list(range(20))
    chunk = dataset / "chunk-0-2.bin"
    data = bytearray(chunk.read_bytes())
    data[-3] ^= 0x01
    chunk.write_bytes(bytes(data))
    with pytest.raises(ChunkCorruptError, match="its checksum is crc32:"):
        ld.DatasetReader(dataset)[10]


@pytest.mark.parametrize("algorithm", ["xxh3", "crc32"])
def test_a_file_checked_block_by_block_agrees_with_its_bytes_checked_whole(
    tmp_path, monkeypatch, algorithm
):
    # Fetched chunks are checked from the downloaded file, a block at a time.
    from litdata.core.chunks import checksum
    from litdata.core.index import ChunkEntry

    monkeypatch.setattr(checksum, "FILE_BLOCK", 1000)  # several blocks, the last one partial
    data = bytes(range(256)) * 20
    path = tmp_path / "chunk.bin"
    path.write_bytes(data)
    entry = ChunkEntry("chunk.bin", 1, len(data), checksum=checksum.checksum_of(data, algorithm))
    checksum.verify_checksum(data, entry, "whole")
    checksum.verify_file(path, entry, "by blocks")
    path.write_bytes(data[:-1] + b"\x00")
    corrupt = f"by blocks is corrupt: its checksum is {algorithm}"
    with pytest.raises(ChunkCorruptError, match=corrupt):
        checksum.verify_file(path, entry, "by blocks")
