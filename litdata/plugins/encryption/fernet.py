"""``fernet``: encryption with a password (LitData's ``FernetEncryption``, byte-compatible).

The key is derived from the password and a random 16-byte salt (PBKDF2-HMAC-SHA256, 480,000
iterations, as LitData does); data is sealed with Fernet (AES-128-CBC + HMAC-SHA256), so a
wrong password or an altered byte is an error. ``save`` writes the salt (never the password)
to a key file, and ``load(path, password)`` rebuilds the key: key files written by LitData and
by litdata are interchangeable.
"""

from __future__ import annotations

import base64
import hashlib
import os
from typing import Any, ClassVar

from litdata.core.imports import require
from litdata.engine.native.encrypted import check_encryptor
from litdata.plugins.encryption._keyfile import read_key_file, write_key_file

__all__ = ["FernetEncryption"]

_ITERATIONS = 480_000


class FernetEncryption:
    """Encrypt samples (``level="sample"``) or whole chunks (``"chunk"``) with a password.

    Args:
        password: The secret.
        level: ``"sample"`` or ``"chunk"``.
        salt: The key-derivation salt; a new random one by default (``load`` passes the saved
            one).
    """

    name: ClassVar[str] = "fernet"

    def __init__(self, password: str, level: str = "sample", salt: bytes | None = None) -> None:
        if not isinstance(password, str) or not password:
            raise ValueError("FernetEncryption needs a non-empty password (a str).")
        self.level = level
        check_encryptor(self)
        self.salt = os.urandom(16) if salt is None else salt
        self._key = self._derive(password)
        self._fernet: Any = None

    def _derive(self, password: str) -> bytes:
        hashing = require(
            "cryptography.hazmat.primitives.hashes", extra="encryption", purpose="Fernet encryption"
        )
        kdf = require(
            "cryptography.hazmat.primitives.kdf.pbkdf2",
            extra="encryption",
            purpose="Fernet encryption",
        )
        derive = kdf.PBKDF2HMAC(
            algorithm=hashing.SHA256(), length=32, salt=self.salt, iterations=_ITERATIONS
        )
        return base64.urlsafe_b64encode(derive.derive(password.encode()))

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_fernet": None}

    @property
    def fernet(self) -> Any:
        """The cipher (built on first use, in each process)."""
        if self._fernet is None:
            self._fernet = require(
                "cryptography.fernet", extra="encryption", purpose="Fernet encryption"
            ).Fernet(self._key)
        return self._fernet

    def encrypt(self, data: bytes | memoryview) -> bytes:
        """A Fernet token of ``data``."""
        token: bytes = self.fernet.encrypt(bytes(data))
        return token

    def decrypt(self, data: bytes | memoryview) -> bytes:
        """The plaintext of a token.

        Raises:
            ValueError: A wrong password (or salt), or altered data.
        """
        from cryptography.fernet import InvalidToken

        try:
            plain: bytes = self.fernet.decrypt(bytes(data))
        except InvalidToken:
            raise ValueError("wrong password or key file, or the data was altered") from None
        return plain

    def to_config(self) -> dict[str, Any]:
        """What ``index.json`` records: the algorithm, level and key id (never the key or salt).

        The key id is a one-way digest of the key: datasets written with different keys (a
        different password or salt) are told apart, by ``merge_datasets`` for one.
        """
        key_id = hashlib.sha256(b"litdata key id\0" + self._key).hexdigest()[:16]
        return {"algorithm": self.name, "level": self.level, "key_id": key_id}

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the key file (algorithm, level, salt; not the password), as LitData does."""
        salt = base64.urlsafe_b64encode(self.salt).decode()
        write_key_file(path, {**self.to_config(), "salt": salt})

    @classmethod
    def load(cls, path: str | os.PathLike[str], password: str) -> FernetEncryption:
        """The encryptor of a key file (written by ``save``, ours or LitData's)."""
        content = read_key_file(path, cls.name)
        salt = base64.urlsafe_b64decode(content["salt"])
        return cls(password, level=content.get("level", "sample"), salt=salt)
