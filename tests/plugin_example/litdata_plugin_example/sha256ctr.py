"""``sha256ctr``: an example encryption plugin using only the standard library.

A key is derived from the password (PBKDF2-HMAC-SHA256, a random salt kept in the index);
data is XORed with a SHA-256 counter-mode keystream under a random nonce, and authenticated
with HMAC-SHA256, so a wrong password or an altered byte is an error. It shows the plugin
interface; use litdata's own ciphers for real secrets.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any, ClassVar

_NONCE = 16
_TAG = 32


class Sha256CtrEncryption:
    """Authenticated encryption of samples or chunks.

    Args:
        password: The secret.
        level: ``"sample"`` or ``"chunk"``.
        salt: The key-derivation salt (hex); a new one when not given.
    """

    name: ClassVar[str] = "sha256ctr"

    def __init__(self, password: str, level: str = "sample", salt: str | None = None) -> None:
        self.level = level
        self.salt = salt or os.urandom(16).hex()
        key = hashlib.pbkdf2_hmac("sha256", password.encode(), bytes.fromhex(self.salt), 10_000)
        self._cipher_key, self._mac_key = key[:16], key[16:]

    def _stream(self, nonce: bytes, size: int) -> bytes:
        blocks = (size + 31) // 32
        return b"".join(
            hashlib.sha256(self._cipher_key + nonce + counter.to_bytes(8, "little")).digest()
            for counter in range(blocks)
        )[:size]

    def encrypt(self, data: bytes | memoryview) -> bytes:
        """``nonce + ciphertext + tag``."""
        nonce = os.urandom(_NONCE)
        plain = bytes(data)
        body = bytes(a ^ b for a, b in zip(plain, self._stream(nonce, len(plain)), strict=True))
        tag = hmac.new(self._mac_key, nonce + body, hashlib.sha256).digest()
        return nonce + body + tag

    def decrypt(self, data: bytes | memoryview) -> bytes:
        """The plaintext.

        Raises:
            ValueError: A wrong password, or altered data.
        """
        sealed = bytes(data)
        nonce, body, tag = sealed[:_NONCE], sealed[_NONCE:-_TAG], sealed[-_TAG:]
        expected = hmac.new(self._mac_key, nonce + body, hashlib.sha256).digest()
        if len(sealed) < _NONCE + _TAG or not hmac.compare_digest(tag, expected):
            raise ValueError("wrong password, or the data was altered")
        return bytes(a ^ b for a, b in zip(body, self._stream(nonce, len(body)), strict=True))

    def to_config(self) -> dict[str, Any]:
        """The public parameters: the salt (never the password)."""
        return {"algorithm": self.name, "level": self.level, "salt": self.salt}
