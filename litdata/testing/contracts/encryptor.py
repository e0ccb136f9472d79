"""``EncryptorContract``: what every encryption plugin, built-in or not, must do.

Provide an ``encryptor`` fixture (a keyed instance; parametrize it over levels to test both)
and a ``wrong_key`` fixture (the same algorithm and level with another key)::

    class TestXorCipher(EncryptorContract):
        @pytest.fixture(params=["sample", "chunk"])
        def encryptor(self, request):
            return XorCipher(b"secret", level=request.param)

        @pytest.fixture
        def wrong_key(self, encryptor):
            return XorCipher(b"other", level=encryptor.level)
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any

import pytest

from litdata.core.errors import DatasetFormatError, DecryptionError
from litdata.core.protocols import Encryptor, protocol_members
from litdata.engine.reader import DatasetReader
from litdata.processing.write import write_dataset

__all__ = ["EncryptorContract"]

_MARKER = "plaintext-that-must-not-appear-on-disk"


class EncryptorContract:
    """What every encryptor must do. Provide the ``encryptor`` and ``wrong_key`` fixtures."""

    @pytest.fixture
    def encryptor(self) -> Encryptor:
        """The keyed encryptor under test (override)."""
        raise NotImplementedError("provide an `encryptor` fixture")

    @pytest.fixture
    def wrong_key(self) -> Encryptor:
        """The same algorithm and level with another key (override)."""
        raise NotImplementedError("provide a `wrong_key` fixture")

    def test_satisfies_the_protocol(self, encryptor: Any) -> None:
        for member in protocol_members(Encryptor):
            assert hasattr(encryptor, member), f"the encryptor lacks {member}"
        assert encryptor.level in ("sample", "chunk")

    @pytest.mark.parametrize("view", [False, True], ids=["bytes", "memoryview"])
    def test_round_trip(self, encryptor: Any, view: bool) -> None:
        for data in [b"", b"x", os.urandom(1000), os.urandom(1 << 20)]:
            sealed = encryptor.encrypt(memoryview(data) if view else data)
            assert isinstance(sealed, bytes)
            assert encryptor.decrypt(memoryview(sealed) if view else sealed) == data

    def test_ciphertext_hides_the_plaintext(self, encryptor: Any) -> None:
        data = _MARKER.encode() * 10
        assert _MARKER.encode() not in encryptor.encrypt(data)

    def test_a_wrong_key_or_altered_data_is_refused(self, encryptor: Any, wrong_key: Any) -> None:
        # Decryption must authenticate: a wrong key or a flipped byte is an error, never
        # garbage that would be decoded as samples.
        sealed = encryptor.encrypt(os.urandom(500))
        with pytest.raises(Exception):  # noqa: B017, PT011  # each cipher raises its own error
            wrong_key.decrypt(sealed)
        altered = bytearray(sealed)
        altered[len(altered) // 2] ^= 0x01
        with pytest.raises(Exception):  # noqa: B017, PT011
            encryptor.decrypt(bytes(altered))

    def test_its_config_is_public(self, encryptor: Any) -> None:
        config = encryptor.to_config()
        assert json.loads(json.dumps(config)) == config, "the config must be JSON"
        assert config.get("algorithm", encryptor.name) == encryptor.name
        text = json.dumps(config)
        for secret in ("password", "private", "secret_key"):
            assert secret not in text.lower(), f"{secret!r} in the public config"

    def test_pickles(self, encryptor: Any) -> None:
        clone = pickle.loads(pickle.dumps(encryptor))
        assert clone.decrypt(encryptor.encrypt(b"abc")) == b"abc"

    def test_in_a_dataset(self, encryptor: Any, wrong_key: Any, tmp_path: Path) -> None:
        samples = [{"id": i, "text": f"{_MARKER} {i}"} for i in range(25)]
        write_dataset(samples, tmp_path / "ds", chunk_size=10, encryption=encryptor)
        for chunk in (tmp_path / "ds").glob("chunk-*.bin"):
            assert _MARKER.encode() not in chunk.read_bytes(), f"{chunk.name} holds plaintext"
        reader = DatasetReader(tmp_path / "ds", encryption=encryptor)
        assert [reader[i] for i in range(25)] == samples
        with pytest.raises(DatasetFormatError, match="is encrypted"):
            DatasetReader(tmp_path / "ds")
        with pytest.raises(DecryptionError):
            DatasetReader(tmp_path / "ds", encryption=wrong_key)[0]
