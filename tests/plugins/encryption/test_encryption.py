"""The built-in encryptors pass the encryption contract, and their key files work."""

import pytest

import litdata as ld
from litdata.core.errors import DecryptionError
from litdata.plugins.encryption.fernet import FernetEncryption
from litdata.plugins.encryption.rsa import RSAEncryption
from litdata.testing import EncryptorContract

LEVELS = ["sample", "chunk"]


class TestFernetEncryption(EncryptorContract):
    @pytest.fixture(params=LEVELS)
    def encryptor(self, request):
        return FernetEncryption("correct horse", level=request.param)

    @pytest.fixture
    def wrong_key(self, encryptor):
        return FernetEncryption("battery staple", level=encryptor.level, salt=encryptor.salt)


class TestRSAEncryption(EncryptorContract):
    @pytest.fixture(params=LEVELS)
    def encryptor(self, request):
        return RSAEncryption("correct horse", level=request.param)

    @pytest.fixture
    def wrong_key(self, encryptor):
        return RSAEncryption("correct horse", level=encryptor.level)


@pytest.mark.parametrize("cls", [FernetEncryption, RSAEncryption])
def test_a_key_file_reopens_the_dataset_and_needs_the_password(cls, tmp_path):
    key = cls("s3cret", level="chunk")
    ld.write_dataset(
        ({"id": i, "big": "x" * 5000} for i in range(30)),
        tmp_path / "ds",
        chunk_size=10,
        encryption=key,
    )
    key.save(tmp_path / "key.json")
    text = (tmp_path / "key.json").read_text()
    assert "s3cret" not in text
    reopened = cls.load(tmp_path / "key.json", "s3cret")
    assert ld.DatasetReader(tmp_path / "ds", encryption=reopened)[17] == {
        "id": 17,
        "big": "x" * 5000,
    }
    if cls is RSAEncryption:
        with pytest.raises(ValueError, match="password does not open"):
            cls.load(tmp_path / "key.json", "wrong")
    else:
        wrong = cls.load(tmp_path / "key.json", "wrong")
        with pytest.raises(DecryptionError, match="does not decrypt"):
            ld.DatasetReader(tmp_path / "ds", encryption=wrong)[0]


def test_rsa_samples_of_any_size_stream_with_workers(tmp_path):
    key = RSAEncryption("pw", level="sample")
    samples = [{"id": i, "blob": bytes([i % 256]) * (10 * i + 1000)} for i in range(60)]
    ld.write_dataset(samples, tmp_path / "ds", chunk_size=20, encryption=key)
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(tmp_path / "ds", encryption=key),
        batch_size=6,
        num_workers=2,
        collate_fn=list,
    )
    seen = {item["id"]: item["blob"] for batch in loader for item in batch}
    assert seen == {s["id"]: s["blob"] for s in samples}


def test_an_index_naming_an_uninstalled_algorithm_says_so(tmp_path):
    import json

    ld.write_dataset(range(4), tmp_path / "ds", chunk_size=2, encryption=FernetEncryption("pw"))
    index = json.loads((tmp_path / "ds" / "index.json").read_text())
    recorded = index["config"]["encryption"]
    assert recorded == {"algorithm": "fernet", "level": "sample", "key_id": recorded["key_id"]}
    with pytest.raises(ValueError, match="is encrypted .fernet, level=sample.: pass encryption="):
        ld.DatasetReader(tmp_path / "ds")
    with pytest.raises(ValueError, match="Encryption level mismatch"):
        ld.DatasetReader(tmp_path / "ds", encryption=FernetEncryption("pw", level="chunk"))
    with pytest.raises(ValueError, match="Encryption algorithm mismatch"):
        ld.DatasetReader(tmp_path / "ds", encryption=RSAEncryption("pw"))
