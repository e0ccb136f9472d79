"""``rsa``: public-key encryption of samples or chunks of any size (hybrid).

Each encryptor holds an RSA-2048 key pair and a random AES-256 data key; the data key is
wrapped once with the public key (OAEP, SHA-256). Each sample or chunk is sealed with AES-GCM
under a fresh nonce, and carries the wrapped key: ``b"LDR1" + wrapped key + nonce + ciphertext``.
Decrypting unwraps each distinct data key once, so streaming pays the private-key operation
once per writer, not once per sample. (LitData's ``RSAEncryption`` encrypts each sample with
RSA itself, which limits samples to about 190 bytes; payloads in that form are still read.)

``save`` writes the key pair, the private key encrypted with the password; ``load`` needs the
password. The password itself is never stored.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, ClassVar

from litdata.core.imports import require
from litdata.engine.native.encrypted import check_encryptor
from litdata.plugins.encryption._keyfile import read_key_file, write_key_file

__all__ = ["RSAEncryption"]

_MAGIC = b"LDR1"
_NONCE = 12


def _crypto(module: str) -> Any:
    return require(
        f"cryptography.hazmat.primitives.{module}", extra="encryption", purpose="RSA encryption"
    )


def _oaep() -> Any:
    padding, hashes = _crypto("asymmetric.padding"), _crypto("hashes")
    return padding.OAEP(
        mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=None
    )


class RSAEncryption:
    """Encrypt samples (``level="sample"``) or whole chunks (``"chunk"``) with an RSA key pair.

    Args:
        password: Protects the private key in the key file ``save`` writes.
        level: ``"sample"`` or ``"chunk"``.
        private_key: A ``cryptography`` RSA private key; a new 2048-bit one by default.
    """

    name: ClassVar[str] = "rsa"

    def __init__(self, password: str, level: str = "sample", private_key: Any = None) -> None:
        if not isinstance(password, str) or not password:
            raise ValueError("RSAEncryption needs a non-empty password (a str).")
        self.level = level
        check_encryptor(self)
        self._password = password.encode()
        if private_key is None:
            private_key = _crypto("asymmetric.rsa").generate_private_key(
                public_exponent=65537, key_size=2048
            )
        self._private = private_key
        self._start()

    def _start(self) -> None:
        aead = _crypto("ciphers.aead")
        self._data_key = aead.AESGCM.generate_key(bit_length=256)
        self._wrapped: bytes = self._private.public_key().encrypt(self._data_key, _oaep())
        self._keys: dict[bytes, Any] = {self._wrapped: aead.AESGCM(self._data_key)}

    def __getstate__(self) -> dict[str, Any]:
        # Workers receive the key pair by pickle (through their pipe), as the private key in
        # PEM, encrypted with the password; the data key is regenerated.
        serialization = _crypto("serialization")
        pem = self._private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(self._password),
        )
        return {"level": self.level, "password": self._password, "pem": pem}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.level = state["level"]
        self._password = state["password"]
        serialization = _crypto("serialization")
        self._private = serialization.load_pem_private_key(state["pem"], self._password)
        self._start()

    def encrypt(self, data: bytes | memoryview) -> bytes:
        """``b"LDR1" + wrapped data key + nonce + AES-GCM ciphertext``."""
        nonce = os.urandom(_NONCE)
        sealed: bytes = self._keys[self._wrapped].encrypt(nonce, bytes(data), None)
        return _MAGIC + self._wrapped + nonce + sealed

    def decrypt(self, data: bytes | memoryview) -> bytes:
        """The plaintext of a payload (this format, or LitData's plain RSA-OAEP).

        Raises:
            ValueError: The key pair is not the one it was encrypted for, or the data was
                altered.
        """
        from cryptography.exceptions import InvalidTag

        payload = bytes(data)
        if not payload.startswith(_MAGIC):  # LitData's: RSA-OAEP of the whole (small) sample
            plain: bytes = self._private.decrypt(payload, _oaep())
            return plain
        size = self._private.key_size // 8
        wrapped = payload[len(_MAGIC) : len(_MAGIC) + size]
        nonce = payload[len(_MAGIC) + size : len(_MAGIC) + size + _NONCE]
        cipher = self._keys.get(wrapped)
        if cipher is None:
            key = self._private.decrypt(wrapped, _oaep())
            cipher = self._keys[wrapped] = _crypto("ciphers.aead").AESGCM(key)
        try:
            opened: bytes = cipher.decrypt(nonce, payload[len(_MAGIC) + size + _NONCE :], None)
        except InvalidTag:
            raise ValueError("the data was altered, or sealed with another key") from None
        return opened

    def to_config(self) -> dict[str, Any]:
        """What ``index.json`` records: the algorithm, level and key id (never a key).

        The key id is a digest of the public key: datasets written with different key pairs
        are told apart, by ``merge_datasets`` for one.
        """
        serialization = _crypto("serialization")
        public = self._private.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        key_id = hashlib.sha256(public).hexdigest()[:16]
        return {"algorithm": self.name, "level": self.level, "key_id": key_id}

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the key pair; the private key is encrypted with the password."""
        serialization = _crypto("serialization")
        state = self.__getstate__()
        public = self._private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        write_key_file(
            path,
            {
                **self.to_config(),
                "private_key": state["pem"].decode(),
                "public_key": public.decode(),
            },
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str], password: str) -> RSAEncryption:
        """The encryptor of a key file ``save`` wrote.

        Raises:
            ValueError: The password does not open the private key.
        """
        content = read_key_file(path, cls.name)
        serialization = _crypto("serialization")
        try:
            private = serialization.load_pem_private_key(
                content["private_key"].encode(), password.encode()
            )
        except (ValueError, TypeError) as error:
            raise ValueError(f"The password does not open the private key in {path}.") from error
        return cls(password, level=content.get("level", "sample"), private_key=private)
