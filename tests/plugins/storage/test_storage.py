"""The built-in storage backends pass the storage contract."""

import uuid

import pytest

from litdata.plugins.storage.local import LocalStorage
from litdata.plugins.storage.memory import MemoryStorage
from litdata.testing import StorageContract


class TestLocalStorage(StorageContract):
    @pytest.fixture
    def storage(self):
        return LocalStorage()

    @pytest.fixture
    def base_url(self, tmp_path):
        return str(tmp_path / "store")


class TestLocalStorageWithFileUrls(StorageContract):
    @pytest.fixture
    def storage(self):
        return LocalStorage()

    @pytest.fixture
    def base_url(self, tmp_path):
        return f"file://{tmp_path}/store with space"


class TestMemoryStorage(StorageContract):
    @pytest.fixture
    def storage(self):
        return MemoryStorage()

    @pytest.fixture
    def base_url(self):
        return f"memory://contract-{uuid.uuid4().hex[:8]}/prefix"
