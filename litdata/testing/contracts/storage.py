"""``StorageContract``: what every storage backend, built-in or not, must do.

Fixture-driven, like fsspec's abstract test suites: a subclass provides ``storage`` (a
configured backend instance) and ``base_url`` (an empty prefix to write under, unique to the
test), and inherits every test::

    class TestMyStorage(StorageContract):
        @pytest.fixture
        def storage(self):
            return MyStorage(storage_options={"endpoint_url": ...})

        @pytest.fixture
        def base_url(self, bucket):
            return f"my://{bucket}/contract"
"""

from __future__ import annotations

import os
import pickle
import threading
from pathlib import Path
from typing import Any

import pytest

from litdata.core.protocols import (
    InPlaceStorage,
    RangedStorage,
    StorageBackend,
    StreamedRangeStorage,
    protocol_members,
)

__all__ = ["StorageContract"]

_PAYLOAD = os.urandom(3 * 1024 * 1024 + 17)  # a few MB, not a round size


def _put(storage: Any, tmp_path: Path, url: str, data: bytes) -> None:
    source = tmp_path / f"upload-{len(data)}-{abs(hash(url))}"
    source.write_bytes(data)
    storage.upload(str(source), url)


def _get(storage: Any, tmp_path: Path, url: str) -> bytes:
    target = tmp_path / f"download-{abs(hash(url))}"
    target.unlink(missing_ok=True)
    storage.download(url, str(target))
    return target.read_bytes()


class StorageContract:
    """What every storage backend must do. Provide the ``storage`` and ``base_url`` fixtures."""

    @pytest.fixture
    def storage(self) -> StorageBackend:
        """The backend under test (override)."""
        raise NotImplementedError("provide a `storage` fixture")

    @pytest.fixture
    def base_url(self) -> str:
        """An empty, writable prefix unique to the test (override)."""
        raise NotImplementedError("provide a `base_url` fixture")

    def test_satisfies_the_protocol(self, storage: Any) -> None:
        for member in protocol_members(StorageBackend):
            assert hasattr(storage, member), f"the backend lacks {member}"
        assert isinstance(type(storage).name, str)

    def test_put_and_get(self, storage: Any, base_url: str, tmp_path: Path) -> None:
        for name, data in [("big.bin", _PAYLOAD), ("empty.bin", b""), ("one.bin", b"\x00")]:
            _put(storage, tmp_path, f"{base_url}/{name}", data)
            assert _get(storage, tmp_path, f"{base_url}/{name}") == data

    def test_upload_replaces_an_object_whole(
        self, storage: Any, base_url: str, tmp_path: Path
    ) -> None:
        url = f"{base_url}/index.json"
        _put(storage, tmp_path, url, b"old" * 1000)
        _put(storage, tmp_path, url, b"new")
        assert _get(storage, tmp_path, url) == b"new"

    def test_a_failed_upload_leaves_the_object_as_it_was(
        self, storage: Any, base_url: str, tmp_path: Path
    ) -> None:
        url = f"{base_url}/kept.bin"
        _put(storage, tmp_path, url, b"kept")
        with pytest.raises(OSError):  # noqa: PT011  # the local file is missing
            storage.upload(str(tmp_path / "no-such-file"), url)
        assert _get(storage, tmp_path, url) == b"kept"

    def test_exists(self, storage: Any, base_url: str, tmp_path: Path) -> None:
        url = f"{base_url}/thing.bin"
        assert storage.exists(url) is False
        _put(storage, tmp_path, url, b"x")
        assert storage.exists(url) is True
        storage.delete(url)
        assert storage.exists(url) is False

    def test_list_names_the_objects_directly_under_a_prefix(
        self, storage: Any, base_url: str, tmp_path: Path
    ) -> None:
        for name in ["a.bin", "b.json", "deeper/c.bin"]:
            _put(storage, tmp_path, f"{base_url}/listed/{name}", b"x")
        names = storage.list(f"{base_url}/listed")
        assert isinstance(names, list)
        assert sorted(names) == ["a.bin", "b.json"]
        assert storage.list(f"{base_url}/nothing-here") == []

    def test_delete_is_idempotent(self, storage: Any, base_url: str, tmp_path: Path) -> None:
        url = f"{base_url}/gone.bin"
        _put(storage, tmp_path, url, b"x")
        storage.delete(url)
        storage.delete(url)  # a missing object is not an error
        assert storage.list(base_url).count("gone.bin") == 0

    def test_a_missing_object_is_file_not_found(
        self, storage: Any, base_url: str, tmp_path: Path
    ) -> None:
        with pytest.raises(FileNotFoundError, match=r"missing\.bin"):
            storage.download(f"{base_url}/missing.bin", str(tmp_path / "out"))

    def test_ranged_reads(self, storage: Any, base_url: str, tmp_path: Path) -> None:
        if not isinstance(storage, RangedStorage):
            pytest.skip("the backend does not read byte ranges")
        url = f"{base_url}/ranged.bin"
        _put(storage, tmp_path, url, _PAYLOAD)
        size = len(_PAYLOAD)
        for start, end in [(0, 8), (4, 5), (1 << 20, (1 << 20) + 100), (size - 10, size)]:
            assert storage.read_range(url, start, end) == _PAYLOAD[start:end]
        with pytest.raises(FileNotFoundError):
            storage.read_range(f"{base_url}/missing.bin", 0, 4)

    def test_streamed_ranged_reads(self, storage: Any, base_url: str, tmp_path: Path) -> None:
        if not isinstance(storage, StreamedRangeStorage):
            pytest.skip("the backend does not stream byte ranges")
        url = f"{base_url}/streamed.bin"
        _put(storage, tmp_path, url, _PAYLOAD)
        size = len(_PAYLOAD)
        for start, end in [(0, 8), (4, 5), (1 << 20, (1 << 20) + 100), (size - 10, size)]:
            got = bytearray()

            def sink(offset: int, data: Any, got: bytearray = got, start: int = start) -> None:
                if offset == start:  # an attempt started over
                    got.clear()
                assert offset == start + len(got)
                got.extend(data)

            storage.read_range_into(url, start, end, sink)
            assert bytes(got) == _PAYLOAD[start:end]
        with pytest.raises(FileNotFoundError):
            storage.read_range_into(f"{base_url}/missing.bin", 0, 4, lambda _, __: None)

    def test_in_place_objects_are_the_local_files(
        self, storage: Any, base_url: str, tmp_path: Path
    ) -> None:
        if not isinstance(storage, InPlaceStorage):
            pytest.skip("the backend does not read in place")
        url = f"{base_url}/local.bin"
        _put(storage, tmp_path, url, b"in place")
        assert Path(storage.local_path(url)).read_bytes() == b"in place"

    def test_pickles(self, storage: Any, base_url: str, tmp_path: Path) -> None:
        url = f"{base_url}/pickled.bin"
        _put(storage, tmp_path, url, b"across processes")
        assert _get(pickle.loads(pickle.dumps(storage)), tmp_path, url) == b"across processes"

    def test_threads_share_it(self, storage: Any, base_url: str, tmp_path: Path) -> None:
        errors: list[BaseException] = []

        def work(number: int) -> None:
            try:
                url = f"{base_url}/thread-{number}.bin"
                data = bytes([number]) * (100_000 + number)
                _put(storage, tmp_path, url, data)
                assert _get(storage, tmp_path, url) == data
            except BaseException as error:  # re-raised in the test thread
                errors.append(error)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
