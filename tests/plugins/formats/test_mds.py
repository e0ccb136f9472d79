"""MosaicML MDS datasets, as the real MDSWriter wrote them, stream as they are.

The fixtures in ``tests/data/mds-0.13.0`` were written by mosaicml-streaming 0.13.0; every
sample is compared with what Mosaic's own ``StreamingDataset`` returned for it.
"""

import json
import pickle
from collections import Counter
from pathlib import Path

import pytest
from support.mds_fixtures import canonical, copy_fixture, mds_samples, mosaic_read, write_shards

import litdata as ld
from litdata.core.errors import (
    ChunkCorruptError,
    DatasetFormatError,
    DatasetNotFoundError,
    UnsafeDataError,
)
from litdata.core.registry import hooks
from litdata.engine.boundary.resolve import resolve
from litdata.plugins.formats.mds.format import MDSFormat
from litdata.testing import FormatContract


def _canonical_all(dataset):
    return [canonical.canonical(dataset[i]) for i in range(len(dataset))]


class TestMDSFormat(FormatContract):
    format_class = MDSFormat

    @pytest.fixture
    def expected(self):
        return [mds_samples.simple_sample(i) for i in range(120)]

    @pytest.fixture
    def dataset(self, tmp_path):
        return copy_fixture("simple", tmp_path / "ds")


@pytest.mark.parametrize("name", ["encodings", "encodings_zstd"])
def test_every_encoding_reads_as_mosaic_reads_it(tmp_path, name):
    reader = ld.DatasetReader(copy_fixture(name, tmp_path / "ds"))
    want = mosaic_read("encodings")  # both hold the same samples
    assert len(reader) == len(want) == 12
    assert canonical.first_difference(_canonical_all(reader), want, name) is None


def test_the_simple_fixture_reads_as_mosaic_reads_it(tmp_path):
    reader = ld.DatasetReader(copy_fixture("simple", tmp_path / "ds"))
    assert canonical.first_difference(_canonical_all(reader), mosaic_read("simple"), "s") is None


def test_the_dataset_is_read_in_place_and_never_modified(tmp_path):
    folder = copy_fixture("encodings_zstd", tmp_path / "ds")
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    stream = ld.StreamingDataset(folder)
    assert len(list(stream)) == 12
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before


def test_a_mosaic_cache_folder_with_only_decompressed_shards_reads(tmp_path):
    folder = copy_fixture("encodings_zstd", tmp_path / "ds")
    import zstandard

    for shard in folder.glob("*.zstd"):
        plain = zstandard.ZstdDecompressor().decompressobj().decompress(shard.read_bytes())
        shard.with_suffix("").write_bytes(plain)
        shard.unlink()
    reader = ld.DatasetReader(folder)
    assert canonical.first_difference(_canonical_all(reader), mosaic_read("encodings"), "c") is None


def test_streaming_honours_shuffle_drop_last_and_subsample(tmp_path):
    folder = copy_fixture("simple", tmp_path / "ds")
    ordered = [int(s["id"]) for s in ld.StreamingDataset(folder)]
    assert ordered == list(range(120))
    shuffled = [int(s["id"]) for s in ld.StreamingDataset(folder, shuffle=True, seed=3)]
    assert sorted(shuffled) == ordered
    assert shuffled != ordered
    half = ld.StreamingDataset(folder, subsample=0.5)
    assert len(half) == 60
    assert len({int(s["id"]) for s in half}) == 60
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(folder, drop_last=True), batch_size=7, num_workers=2
    )
    assert all(len(batch["id"]) == 7 for batch in loader)


def _take(loader, count=None):
    out = []
    for batch in loader:
        out.append([int(i) for i in batch["id"]])
        if count is not None and len(out) == count:
            return out, json.loads(json.dumps(loader.state_dict()))
    return out, None


def _loader(folder, workers):
    return ld.StreamingDataLoader(
        ld.StreamingDataset(folder, shuffle=True, seed=11), batch_size=6, num_workers=workers
    )


def test_two_workers_resume_mid_epoch_with_exactly_the_next_batches(tmp_path):
    folder = copy_fixture("simple", tmp_path / "ds")
    whole, _ = _take(_loader(folder, 2))
    head, state = _take(_loader(folder, 2), 7)
    resumed = _loader(folder, 2)
    resumed.load_state_dict(state)
    tail, _ = _take(resumed)
    assert head + tail == whole
    assert sorted(i for batch in whole for i in batch) == list(range(120))


def test_elastic_resume_with_another_worker_count_yields_the_unseen_samples(tmp_path):
    folder = copy_fixture("simple", tmp_path / "ds")
    head, state = _take(_loader(folder, 2), 5)
    resumed = _loader(folder, 1)
    resumed.load_state_dict(state)
    tail, _ = _take(resumed)
    seen = [i for batch in head + tail for i in batch]
    assert sorted(seen) == list(range(120))


def test_ranks_read_disjoint_samples_and_resume_on_another_world_size(tmp_path, monkeypatch):
    folder = copy_fixture("simple", tmp_path / "ds")
    seen, states = [], []
    for rank in range(2):
        monkeypatch.setenv("WORLD_SIZE", "2")
        monkeypatch.setenv("RANK", str(rank))
        head, state = _take(_loader(folder, 2), 4)
        seen.append({i for batch in head for i in batch})
        states.append(state)
    assert not seen[0] & seen[1]
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("RANK", "0")
    resumed = _loader(folder, 1)
    resumed.load_state_dict(states[0])
    tail, _ = _take(resumed)
    rest = [i for batch in tail for i in batch]
    assert not (seen[0] | seen[1]) & set(rest)
    assert len(set(rest)) == len(rest)
    missing = set(range(120)) - seen[0] - seen[1] - set(rest)
    assert len(missing) < 2 * 6 + 6  # drop_last (on under DDP) drops less than a batch a rank


def test_an_mds_and_a_chunk_dataset_combine(tmp_path):
    folder = copy_fixture("simple", tmp_path / "ds")
    native = [
        {"id": 1000 + i, "name": f"n{i}", "vec": mds_samples.simple_sample(i)["vec"]}
        for i in range(50)
    ]
    ld.write_dataset(native, tmp_path / "native", chunk_size=8)
    combined = ld.CombinedStreamingDataset(
        [ld.StreamingDataset(folder, shuffle=True), ld.StreamingDataset(tmp_path / "native")],
        seed=5,
    )
    loader = ld.StreamingDataLoader(combined, batch_size=5, num_workers=2)
    seen = sorted(int(i) for batch in loader for i in batch["id"])
    assert seen == list(range(120)) + list(range(1000, 1050))


def test_pickled_code_needs_allow_pickle(tmp_path):
    values = [pickle.dumps(Counter("ab" * i)) for i in range(1, 6)]
    folder = write_shards(tmp_path / "ds", {"obj": "pkl"}, [[v] for v in values])
    with pytest.raises(UnsafeDataError, match="allow_pickle=True"):
        ld.DatasetReader(folder)[0]
    trusted = ld.DatasetReader(folder, allow_pickle=True)
    assert [trusted[i]["obj"] for i in range(5)] == [Counter("ab" * i) for i in range(1, 6)]


def test_an_unknown_encoding_names_the_index_and_the_column(tmp_path):
    folder = write_shards(tmp_path / "ds", {"id": "str", "pic": "heif"}, [[b"1", b"x"]])
    with pytest.raises(DatasetFormatError, match=r"index\.json.*'pic'.*'heif'"):
        ld.StreamingDataset(folder)


def test_a_bad_ndarray_spec_is_an_unknown_encoding(tmp_path):
    folder = write_shards(tmp_path / "ds", {"x": "ndarray:complex64"}, [[b"1"]])
    with pytest.raises(DatasetFormatError, match="'x'.*ndarray:complex64"):
        ld.DatasetReader(folder)


@pytest.mark.parametrize("name", ["simple", "encodings_zstd"])
def test_a_truncated_shard_is_an_error_naming_it(tmp_path, name):
    folder = copy_fixture(name, tmp_path / "ds")
    shard = sorted(folder.glob("shard.*"))[1]
    shard.write_bytes(shard.read_bytes()[:-40])
    reader = ld.DatasetReader(folder)
    with pytest.raises(ChunkCorruptError, match=shard.name):
        [reader[i] for i in range(len(reader))]


def test_a_compressed_shard_without_a_valid_raw_size_is_refused(tmp_path):
    folder = copy_fixture("encodings_zstd", tmp_path / "ds")
    index = json.loads((folder / "index.json").read_text())
    index["shards"][0]["raw_data"]["bytes"] = -1  # the bound its decompression would have
    (folder / "index.json").write_text(json.dumps(index))
    with pytest.raises(DatasetFormatError, match=r"shards\[0\]\.raw_data\.bytes is -1"):
        ld.DatasetReader(folder)[0]


def test_a_missing_shard_is_an_error_naming_it(tmp_path):
    folder = copy_fixture("simple", tmp_path / "ds")
    (folder / "shard.00003.mds").unlink()
    with pytest.raises(FileNotFoundError, match=r"shard\.00003\.mds"):
        list(ld.StreamingDataset(folder))


def test_a_shard_failing_its_hash_is_an_error(tmp_path):
    folder = copy_fixture("encodings", tmp_path / "ds")  # written with sha1 and xxh64 hashes
    shard = folder / "shard.00000.mds"
    data = bytearray(shard.read_bytes())
    data[-1] ^= 0xFF
    shard.write_bytes(bytes(data))
    with pytest.raises(
        ChunkCorruptError, match=r"shard\.00000\.mds is corrupt: its checksum is xxh64"
    ):
        ld.DatasetReader(folder)[0]


def test_a_sha1_digest_is_checked_too(tmp_path):
    folder = copy_fixture("encodings", tmp_path / "ds")
    index = json.loads((folder / "index.json").read_text())
    for shard in index["shards"]:
        del shard["raw_data"]["hashes"]["xxh64"]  # only the sha1 digest is left
    (folder / "index.json").write_text(json.dumps(index))
    assert len(ld.DatasetReader(folder)) == 12
    shard = folder / "shard.00001.mds"
    data = bytearray(shard.read_bytes())
    data[-2] ^= 0x01
    shard.write_bytes(bytes(data))
    reader = ld.DatasetReader(folder)
    with pytest.raises(
        ChunkCorruptError, match=r"shard\.00001\.mds is corrupt: its checksum is sha1"
    ):
        [reader[i] for i in range(len(reader))]


def test_an_empty_index_and_an_empty_folder_are_no_dataset(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetNotFoundError):
        ld.StreamingDataset(tmp_path / "empty")
    (tmp_path / "noshards").mkdir()
    (tmp_path / "noshards" / "index.json").write_text('{"shards": [], "version": 2}')
    with pytest.raises(DatasetNotFoundError, match="no shards"):
        ld.StreamingDataset(tmp_path / "noshards")


def test_other_mosaic_shard_formats_are_refused_clearly(tmp_path):
    folder = copy_fixture("simple", tmp_path / "ds")
    index = json.loads((folder / "index.json").read_text())
    index["shards"][0]["format"] = "jsonl"
    (folder / "index.json").write_text(json.dumps(index))
    with pytest.raises(DatasetFormatError, match="'jsonl' format"):
        ld.StreamingDataset(folder)


def test_native_datasets_are_still_chunks(tmp_path):
    ld.write_dataset([{"id": 1}], tmp_path / "ds", chunk_size=1)
    assert hooks.detect_format(resolve(tmp_path / "ds")) == "chunks"


def _upload(folder: Path, url: str, options) -> None:
    location = resolve(url, storage_options=options)
    for path in sorted(folder.iterdir()):
        location.write(path.name, path.read_bytes())


@pytest.mark.parametrize("name", ["simple", "encodings_zstd"])
def test_streams_from_s3_with_two_workers(s3_server, tmp_path, name):
    url = s3_server.url(s3_server.new_bucket(), "mds")
    _upload(copy_fixture(name, tmp_path / "ds"), url, s3_server.storage_options)
    options = {"storage_options": s3_server.storage_options, "cache_dir": str(tmp_path / "c")}
    reader = ld.DatasetReader(url, **options)
    want = mosaic_read("encodings" if name != "simple" else "simple")
    assert canonical.first_difference(_canonical_all(reader), want, name) is None
    stream = ld.StreamingDataset(url, shuffle=True, **options)
    loader = ld.StreamingDataLoader(stream, batch_size=4, num_workers=2, collate_fn=list)
    seen = sorted(json.dumps(canonical.canonical(s)) for batch in loader for s in batch)
    assert seen == sorted(json.dumps(w) for w in want)


def _merged(tmp_path):
    """The encodings_zstd fixture as Mosaic's merge_index leaves it: shards in subfolders."""
    folder = copy_fixture("encodings_zstd", tmp_path / "merged")
    index = json.loads((folder / "index.json").read_text())
    for number, shard in enumerate(index["shards"]):
        part = f"part{number % 2}"
        (folder / part).mkdir(exist_ok=True)
        for key in ("raw_data", "zip_data"):
            if shard[key] is not None:
                name = shard[key]["basename"]
                if (folder / name).exists():
                    (folder / name).rename(folder / part / name)
                shard[key]["basename"] = f"{part}/{name}"
    (folder / "index.json").write_text(json.dumps(index))
    return folder


def test_a_merged_index_with_shards_in_subfolders_streams(s3_server, tmp_path):
    folder = _merged(tmp_path)
    want = mosaic_read("encodings")
    assert canonical.first_difference(_canonical_all(ld.DatasetReader(folder)), want, "m") is None
    url = s3_server.url(s3_server.new_bucket(), "merged")
    location = resolve(url, storage_options=s3_server.storage_options)
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            location.write(path.relative_to(folder).as_posix(), path.read_bytes())
    options = {"storage_options": s3_server.storage_options, "cache_dir": str(tmp_path / "c")}
    stream = ld.StreamingDataset(url, **options)
    assert sorted(json.dumps(canonical.canonical(s)) for s in stream) == sorted(
        json.dumps(w) for w in want
    )
