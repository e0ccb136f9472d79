"""``list_media_folder``: the media files of a ``root/<label>/<file>`` folder, for ``optimize``."""

from __future__ import annotations

import os

from litdata.core.media_kinds import MEDIA_EXTENSIONS

__all__ = ["MEDIA_EXTENSIONS", "list_media_folder"]


def _matches(name: str, extensions: frozenset[str]) -> bool:
    lowered = name.lower()
    return any(lowered.endswith("." + extension) for extension in extensions)


def list_media_folder(
    root: str | os.PathLike[str], kind: str = "image", drop_labels: bool = False
) -> list[dict[str, str | None]]:
    """The media files under ``root``, each with its label (the name of its folder).

    Walks ``root/<label>/<file>`` (any depth: the label is the file's parent folder); files
    directly in ``root`` have no label. Only files with an extension of ``kind`` are listed.

    Args:
        root: The folder to walk.
        kind: ``"text"``, ``"image"``, ``"video"``, ``"audio"``, ``"mesh"``, ``"pdf"`` or
            ``"nifti"``.
        drop_labels: Give every file the label ``None``.

    Returns:
        ``[{"path": absolute path, "label": folder name or None}, ...]`` sorted by path.

    Raises:
        ValueError: ``kind`` is not one of the kinds above.
        FileNotFoundError: ``root`` is not a folder.
    """
    extensions = MEDIA_EXTENSIONS.get(kind)
    if extensions is None:
        raise ValueError(f"Unknown media kind {kind!r}; choose one of {sorted(MEDIA_EXTENSIONS)}.")
    top = os.path.abspath(os.fspath(root))
    if not os.path.isdir(top):
        raise FileNotFoundError(f"{top} is not a folder: there is no media to list.")
    found: list[dict[str, str | None]] = []
    for folder, subfolders, names in os.walk(top):
        subfolders.sort()
        label = None if drop_labels or folder == top else os.path.basename(folder)
        found.extend(
            {"path": os.path.join(folder, name), "label": label}
            for name in names
            if _matches(name, extensions)
        )
    return sorted(found, key=lambda entry: str(entry["path"]))
