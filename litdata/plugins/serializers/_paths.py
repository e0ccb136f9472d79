"""Media paths: which leaves are paths to existing files of a kind, by extension."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

__all__ = ["extension_of", "media_path"]


def extension_of(path: str | os.PathLike[str] | None) -> str:
    """The lower-case extension of ``path`` without its dot (``"nii.gz"`` for NIfTI archives)."""
    if not path:
        return ""
    name = Path(path).name.lower()
    if name.endswith(".nii.gz"):
        return "nii.gz"
    return Path(name).suffix.lstrip(".")


def media_path(item: Any, extensions: Collection[str]) -> str | None:
    """The path ``item`` names when it is an existing file with one of ``extensions``.

    ``item`` may be a ``str``/``PathLike`` or a mapping with a ``"path"`` key (as Hugging Face
    datasets give media). Anything else, and paths to other or missing files, give ``None``.
    """
    if isinstance(item, Mapping):
        item = item.get("path")
    if not isinstance(item, str | os.PathLike):
        return None
    path = os.fspath(item)
    if not isinstance(path, str) or extension_of(path) not in extensions:
        return None
    return path if os.path.isfile(path) else None
