"""Key files: the JSON an encryptor's ``save`` writes and ``load`` reads back."""

from __future__ import annotations

import json
import os
from typing import Any

from litdata.core.publish import publish_bytes

__all__ = ["read_key_file", "write_key_file"]


def write_key_file(path: str | os.PathLike[str], content: dict[str, Any]) -> None:
    """Write ``content`` as JSON, readable by its owner only (it may hold key material)."""
    publish_bytes(path, json.dumps(content, sort_keys=True).encode())
    os.chmod(path, 0o600)


def read_key_file(path: str | os.PathLike[str], algorithm: str) -> dict[str, Any]:
    """The JSON of a key file saved for ``algorithm``.

    Raises:
        ValueError: The file is not such a key file.
    """
    with open(path, "rb") as handle:
        try:
            content = json.loads(handle.read())
        except ValueError as error:
            raise ValueError(f"{path} is not a litdata key file: {error}") from None
    if not isinstance(content, dict) or content.get("algorithm") != algorithm:
        found = content.get("algorithm") if isinstance(content, dict) else type(content).__name__
        raise ValueError(f"{path} holds a {found!r} key, not a {algorithm!r} one.")
    return content
