"""``StreamingRawDataset`` over real folders and the S3 server, with real DataLoader workers."""

import json
import os
from pathlib import Path

import pytest
import zstandard
from torch.utils.data import DataLoader

import litdata as ld
from litdata.engine.boundary.resolve import resolve
from litdata.engine.cache.directory import cache_home
from litdata.plugins.formats.raw import FileIndexer, FileMetadata


def _files(root: Path, count: int = 30) -> dict[str, bytes]:
    """``count`` files in two class folders and one nested folder; returns path -> bytes."""
    written = {}
    for index in range(count):
        folder = root / ("cats" if index % 2 else "dogs") / ("deep" if index % 5 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"img{index:03d}.jpg"
        data = bytes([index]) * (100 + index * 37)
        path.write_bytes(data)
        written[str(path)] = data
    return written


def _kept_index(url: str, cache: Path) -> dict:
    data = (cache_home(url, str(cache)) / "index.json.zstd").read_bytes()
    return json.loads(zstandard.ZstdDecompressor().decompressobj().decompress(data))


def test_items_are_the_files_bytes_in_path_order(tmp_path):
    written = _files(tmp_path / "data")
    dataset = ld.StreamingRawDataset(tmp_path / "data", cache_dir=str(tmp_path / "cache"))
    assert len(dataset) == 30
    assert [dataset[i] for i in range(30)] == [written[p] for p in sorted(written)]
    assert dataset[-1] == written[max(written)]
    with pytest.raises(IndexError):
        dataset[30]
    kept = _kept_index(dataset.input_dir, tmp_path / "cache")
    assert sorted(kept) == ["created_at", "files", "source"]
    assert kept["files"][0] == {"path": min(written), "size": len(written[min(written)])}


def test_the_kept_list_is_reused_until_recompute_index(tmp_path):
    _files(tmp_path / "data", 10)
    cache = str(tmp_path / "cache")
    assert len(ld.StreamingRawDataset(tmp_path / "data", cache_dir=cache)) == 10
    (tmp_path / "data" / "new.jpg").write_bytes(b"new")
    assert len(ld.StreamingRawDataset(tmp_path / "data", cache_dir=cache)) == 10
    fresh = ld.StreamingRawDataset(tmp_path / "data", cache_dir=cache, recompute_index=True)
    assert len(fresh) == 11


def test_indexer_filters_extensions_and_depth(tmp_path):
    _files(tmp_path / "data", 20)
    (tmp_path / "data" / "notes.txt").write_text("x")
    only_jpg = FileIndexer(extensions=["JPG"])
    shallow = FileIndexer(max_depth=2)
    cache = str(tmp_path / "cache")
    jpgs = ld.StreamingRawDataset(tmp_path / "data", cache_dir=cache, indexer=only_jpg)
    assert len(jpgs) == 20
    top = ld.StreamingRawDataset(
        tmp_path / "data", cache_dir=cache, indexer=shallow, recompute_index=True
    )
    assert len(top) == 21 - 4  # the four files in */deep/ are three levels down


class Pairs(ld.StreamingRawDataset):
    """An image and its mask per item."""

    def setup(self, files):
        by_stem = {}
        for file in files:
            by_stem.setdefault(Path(file.path).stem.split("_")[0], []).append(file)
        return [sorted(group, key=lambda f: f.path) for _, group in sorted(by_stem.items())]


def test_setup_groups_files_into_items(tmp_path):
    for index in range(6):
        (tmp_path / f"s{index}_image.png").write_bytes(b"i" * index)
        (tmp_path / f"s{index}_mask.png").write_bytes(b"m" * index)
    dataset = Pairs(tmp_path, cache_dir=str(tmp_path / "cache"))
    assert len(dataset) == 6
    assert dataset[4] == [b"i" * 4, b"m" * 4]


class NotAList(ld.StreamingRawDataset):
    def setup(self, files):
        return tuple(files)


def test_setup_must_return_a_list(tmp_path):
    _files(tmp_path / "data", 3)
    with pytest.raises(TypeError, match="must return a list"):
        NotAList(tmp_path / "data", cache_dir=str(tmp_path / "cache"))


def test_transform_and_path_items(tmp_path):
    written = _files(tmp_path / "data", 8)
    cache = str(tmp_path / "cache")
    sized = ld.StreamingRawDataset(tmp_path / "data", cache_dir=cache, transform=len)
    assert [sized[i] for i in range(8)] == [len(written[p]) for p in sorted(written)]
    with pytest.raises(ValueError, match="cache_files=True"):
        ld.StreamingRawDataset(tmp_path / "data", cache_dir=cache, item_type="path")
    paths = ld.StreamingRawDataset(
        tmp_path / "data", cache_dir=cache, item_type="path", cache_files=True
    )
    local = paths[3]
    assert local.startswith(cache)
    assert Path(local).read_bytes() == written[sorted(written)[3]]


def test_two_dataloader_workers_read_every_file_once(tmp_path):
    written = _files(tmp_path / "data", 40)
    dataset = ld.StreamingRawDataset(tmp_path / "data", cache_dir=str(tmp_path / "cache"))
    loader = DataLoader(dataset, batch_size=6, shuffle=True, num_workers=2, collate_fn=list)
    seen = [item for batch in loader for item in batch]
    assert sorted(seen) == sorted(written.values())


def test_an_empty_or_missing_folder_is_a_clear_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="No files found in .*empty"):
        ld.StreamingRawDataset(tmp_path / "empty", cache_dir=str(tmp_path / "cache"))
    with pytest.raises(FileNotFoundError, match="missing"):
        ld.StreamingRawDataset(tmp_path / "missing", cache_dir=str(tmp_path / "cache"))


def test_a_file_gone_since_listing_is_named(tmp_path):
    written = _files(tmp_path / "data", 5)
    dataset = ld.StreamingRawDataset(tmp_path / "data", cache_dir=str(tmp_path / "cache"))
    gone = sorted(written)[2]
    os.remove(gone)
    with pytest.raises(FileNotFoundError, match=f"{gone}.*recompute_index=True"):
        dataset[2]


def _upload(files: dict[str, bytes], root: Path, url: str, options) -> None:
    location = resolve(url, storage_options=options)
    for path, data in files.items():
        location.write(os.path.relpath(path, root), data)


def test_streams_a_bucket_and_shares_its_file_list(s3_server, tmp_path):
    written = _files(tmp_path / "data", 25)
    url = s3_server.url(s3_server.new_bucket(), "raw")
    options = s3_server.storage_options
    _upload(written, tmp_path / "data", url, options)
    dataset = ld.StreamingRawDataset(url, cache_dir=str(tmp_path / "c1"), storage_options=options)
    want = [written[p] for p in sorted(written)]
    assert [dataset[i] for i in range(len(dataset))] == want
    assert resolve(url, storage_options=options).storage.exists(f"{url}/index.json.zstd")
    # another machine (a cold cache) uses the shared list: a file added since is not listed
    resolve(url, storage_options=options).write("late.jpg", b"late")
    other = ld.StreamingRawDataset(url, cache_dir=str(tmp_path / "c2"), storage_options=options)
    assert len(other) == 25
    loader = DataLoader(other, batch_size=4, shuffle=True, num_workers=2, collate_fn=list)
    assert sorted(item for batch in loader for item in batch) == sorted(want)


def test_large_remote_files_come_in_parallel_ranges(s3_server, tmp_path):
    url = s3_server.url(s3_server.new_bucket(), "big")
    blobs = {f"f{i}.bin": os.urandom(300_000 + i) for i in range(3)}
    location = resolve(url, storage_options=s3_server.storage_options)
    for name, data in blobs.items():
        location.write(name, data)
    dataset = ld.StreamingRawDataset(
        url,
        cache_dir=str(tmp_path / "cache"),
        storage_options=s3_server.storage_options,
        max_concurrent_downloads=2,
        range_parallel_threshold=100_000,
        range_chunk_size=64_000,
        cache_files=True,
    )
    assert dataset.__getitems__([2, 0, 1]) == [blobs["f2.bin"], blobs["f0.bin"], blobs["f1.bin"]]
    kept = dataset._fetcher.cached_path(FileMetadata(f"{url}/f1.bin", 300_001))
    assert kept is not None
    assert kept.read_bytes() == blobs["f1.bin"]


class WholeFiles:
    """``whole://``: a backend over a local folder that lists and downloads, but reads no ranges."""

    name = "whole"

    def __init__(self, storage_options=None):
        pass

    def _path(self, url):
        return url[len("whole://") :]

    def download(self, url, local_path):
        Path(local_path).write_bytes(Path(self._path(url)).read_bytes())

    def upload(self, local_path, url):
        Path(self._path(url)).write_bytes(Path(local_path).read_bytes())

    def exists(self, url):
        return os.path.isfile(self._path(url))

    def list(self, url):
        folder = self._path(url)
        return sorted(os.listdir(folder)) if os.path.isdir(folder) else []

    def find(self, url, max_depth=None):
        folder = Path(self._path(url))
        return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*.bin")}

    def delete(self, url):
        Path(self._path(url)).unlink(missing_ok=True)


@pytest.mark.usefixtures("fresh_plugins")
def test_a_backend_without_ranges_downloads_whole_files_even_twice_in_one_batch(tmp_path):
    from litdata.core.registry import kinds

    kinds.storage.register("whole", WholeFiles)
    folder = tmp_path / "data"
    folder.mkdir()
    blobs = {f"f{i}.bin": os.urandom(200_000 + i) for i in range(3)}
    for name, data in blobs.items():
        (folder / name).write_bytes(data)
    dataset = ld.StreamingRawDataset(
        f"whole://{folder}",
        cache_dir=str(tmp_path / "cache"),
        max_concurrent_downloads=4,
        range_parallel_threshold=100_000,  # asks for ranges the backend cannot read
    )
    # the same file four times at once: each download has a scratch file of its own
    assert dataset.__getitems__([1, 1, 0, 1, 1, 2]) == [
        blobs[name] for name in ("f1.bin", "f1.bin", "f0.bin", "f1.bin", "f1.bin", "f2.bin")
    ]


class DogsOnly:
    """An indexer with LitData's signature: ``discover_files(input_dir, storage_options)``."""

    def discover_files(self, input_dir, storage_options):
        names = sorted(os.listdir(os.path.join(input_dir, "dogs")))
        return [
            FileMetadata(os.path.join(input_dir, "dogs", n), 1) for n in names if n.endswith(".jpg")
        ]


def test_a_litdata_style_indexer_is_used(tmp_path):
    _files(tmp_path / "data", 12)
    dataset = ld.StreamingRawDataset(
        tmp_path / "data", cache_dir=str(tmp_path / "cache"), indexer=DogsOnly()
    )
    assert len(dataset) == 4  # dogs/ holds img002, 004, 006, 008 (000 and 010 are in deep/)


class Broken:
    def discover_files(self, input_dir, storage_options):
        return {"not": "a list"}


def test_an_indexer_returning_no_list_is_named(tmp_path):
    _files(tmp_path / "data", 3)
    with pytest.raises(TypeError, match="Broken returned dict"):
        ld.StreamingRawDataset(tmp_path / "data", cache_dir=str(tmp_path / "c"), indexer=Broken())


def test_an_unreachable_store_is_an_error_not_a_hang(s3_server, tmp_path):
    url = s3_server.url(s3_server.new_bucket(), "raw")
    location = resolve(url, storage_options=s3_server.storage_options)
    for index in range(4):
        location.write(f"f{index}.bin", bytes(100))
    dataset = ld.StreamingRawDataset(
        url,
        cache_dir=str(tmp_path / "cache"),
        storage_options=s3_server.storage_options,
        download_timeout=2,
    )
    s3_server.stop()
    try:
        with pytest.raises(OSError, match="f1.bin|f0.bin"):
            dataset.__getitems__([0, 1])
    finally:
        s3_server.start()


def test_a_file_list_copied_from_elsewhere_is_ignored(s3_server, tmp_path):
    written = _files(tmp_path / "data", 6)
    local = ld.StreamingRawDataset(tmp_path / "data", cache_dir=str(tmp_path / "c0"))
    assert len(local) == 6
    url = s3_server.url(s3_server.new_bucket(), "copied")
    _upload(written, tmp_path / "data", url, s3_server.storage_options)
    kept = cache_home(local.input_dir, str(tmp_path / "c0")) / "index.json.zstd"
    resolve(url, storage_options=s3_server.storage_options).write(
        "index.json.zstd", kept.read_bytes()
    )  # the local folder's list (local paths), copied along with the files
    remote = ld.StreamingRawDataset(
        url, cache_dir=str(tmp_path / "c1"), storage_options=s3_server.storage_options
    )
    assert all(item.path.startswith(url) for item in remote.items)
    assert remote[0] == written[min(written)]


def test_litdatas_look_ahead_and_hedging_arguments_are_accepted_hints(tmp_path):
    """LitData 0.2.76's max_prefetch, prefetch_cache_size and hedge_delay: kept, validated, and
    the items are the same whatever they are (this dataset reads nothing ahead)."""
    files = _files(tmp_path / "data", count=5)
    default = ld.StreamingRawDataset(str(tmp_path / "data"), cache_dir=str(tmp_path / "c"))
    assert (default.max_prefetch, default.prefetch_cache_size, default.hedge_delay) == (16, 32, 0.0)
    tuned = ld.StreamingRawDataset(
        str(tmp_path / "data"),
        cache_dir=str(tmp_path / "c"),
        max_prefetch=0,
        prefetch_cache_size=4,
        hedge_delay=0.5,
    )
    assert (tuned.max_prefetch, tuned.prefetch_cache_size, tuned.hedge_delay) == (0, 4, 0.5)
    assert [bytes(item) for item in tuned] == [files[name] for name in sorted(files)]
    with pytest.raises(ValueError, match="max_prefetch must be 0 or more"):
        ld.StreamingRawDataset(
            str(tmp_path / "data"), cache_dir=str(tmp_path / "c"), max_prefetch=-1
        )


def test_items_that_are_not_file_metadata_and_indexes_out_of_range(tmp_path):
    """LitData's phrases: a TypeError when an item is read, an IndexError naming the index."""

    class Numbers(ld.StreamingRawDataset):
        def setup(self, files):
            return [123]

    _files(tmp_path / "data", count=1)
    numbers = Numbers(str(tmp_path / "data"), cache_dir=str(tmp_path / "c"))
    with pytest.raises(TypeError, match="^Dataset items must be of type FileMetadata"):
        numbers[0]
    plain = ld.StreamingRawDataset(str(tmp_path / "data"), cache_dir=str(tmp_path / "c"))
    with pytest.raises(IndexError, match="^Index 1 out of range: the dataset has 1 items"):
        plain[1]


def test_file_indexers_litdata_attributes_and_build_or_load_index(tmp_path):
    assert FileIndexer().extensions == []
    assert FileIndexer(extensions=[".JPG", "png"]).extensions == [".jpg", ".png"]
    files = _files(tmp_path / "data", count=4)
    indexer = FileIndexer(extensions=[".jpg"])
    listed = indexer.build_or_load_index(str(tmp_path / "data"), str(tmp_path / "c"), {})
    assert sorted(f.path for f in listed) == sorted(files)
    (tmp_path / "data" / "late.jpg").write_bytes(b"late")  # the kept list is used...
    kept = indexer.build_or_load_index(str(tmp_path / "data"), str(tmp_path / "c"), {})
    assert len(kept) == len(files)
    again = indexer.build_or_load_index(str(tmp_path / "data"), str(tmp_path / "c"), {}, True)
    assert len(again) == len(files) + 1  # ...until recompute_index
    with pytest.raises(ValueError, match="^Unsupported input directory scheme: `ftp`"):
        indexer.build_or_load_index("ftp://host/path", str(tmp_path / "c"), {})
