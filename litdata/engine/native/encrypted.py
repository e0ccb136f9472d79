"""Matching a reader's key to what a dataset's index says, and decrypting with it.

``index.json`` records ``{"algorithm": <encryptor name>, "level": "sample" | "chunk", ...}``
(never a secret; an encryptor may add a ``key_id``, a one-way digest of its key, so that a
wrong key is named at once and datasets of different keys are not merged).
``level="sample"`` encrypts each item's bytes; ``level="chunk"`` the whole chunk, which then
lives decrypted only in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from litdata.core.errors import DatasetFormatError, DecryptionError
from litdata.core.protocols import Encryptor

__all__ = ["LEVELS", "check_encryptor", "decrypting", "encryption_config", "reader_encryptor"]

LEVELS = ("sample", "chunk")


def check_encryptor(encryptor: Encryptor) -> None:
    """Refuse an encryptor whose ``level`` is not ``"sample"`` or ``"chunk"``.

    Raises:
        ValueError: naming the encryptor and the levels.
    """
    if getattr(encryptor, "level", None) not in LEVELS:
        raise ValueError(
            f"The {getattr(encryptor, 'name', type(encryptor).__name__)!r} encryptor has "
            f"level={getattr(encryptor, 'level', None)!r}; it must be one of {LEVELS}."
        )


def encryption_config(encryptor: Encryptor) -> dict[str, Any]:
    """What ``index.json`` records for ``encryptor``: its public config, named and levelled."""
    check_encryptor(encryptor)
    return {**encryptor.to_config(), "algorithm": encryptor.name, "level": encryptor.level}


def reader_encryptor(
    recorded: Mapping[str, Any] | None, given: Encryptor | None, where: str
) -> Encryptor | None:
    """The encryptor to read a dataset with, after checking it against the index.

    Args:
        recorded: The index's ``config.encryption``.
        given: The reader's ``encryption=``.
        where: The dataset, for messages.

    Raises:
        DatasetFormatError: The dataset is encrypted and no key was given, or the key's
            algorithm or level differs from the dataset's.
    """
    if recorded is None:
        return None
    algorithm, level = recorded.get("algorithm"), recorded.get("level")
    if given is None:
        raise DatasetFormatError(
            f"{where} is encrypted ({algorithm}, level={level}): pass encryption= with the key "
            f"it was written with. Its bytes are never returned as samples."
        )
    if given.name != algorithm:
        raise DatasetFormatError(
            f"Encryption algorithm mismatch: {where} is encrypted with {algorithm!r}, but the "
            f"key given is for {given.name!r}."
        )
    if given.level != level:
        raise DatasetFormatError(
            f"Encryption level mismatch: {where} is encrypted per {level}, but the key given "
            f"has level={given.level!r}."
        )
    key_id = given.to_config().get("key_id")
    if recorded.get("key_id") is not None and key_id is not None and key_id != recorded["key_id"]:
        raise DecryptionError(
            f"The {algorithm!r} key given ({key_id}) does not decrypt {where}, written with key "
            f"{recorded['key_id']}: a wrong key or password. Pass the key it was written with."
        )
    return given


def decrypting(encryptor: Encryptor, where: str) -> Callable[[bytes | memoryview], bytes]:
    """``encryptor.decrypt``, any failure turned into a ``DecryptionError`` naming ``where``."""

    def decrypt(data: bytes | memoryview) -> bytes:
        try:
            return encryptor.decrypt(data)
        except Exception as error:
            raise DecryptionError(
                f"The {encryptor.name!r} key does not decrypt {where}: a wrong key or password, "
                f"or the data was altered ({type(error).__name__}: {error})."
            ) from error

    return decrypt
