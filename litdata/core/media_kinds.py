"""The kinds of raw media files (images, audio, video...), told apart by their extensions.

``list_media_folder`` lists a kind's files; ``open_dataset`` recognises a folder of such files
where a dataset was expected, and points to the ways of reading them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

__all__ = ["MEDIA_EXTENSIONS", "media_kind", "raw_files_hint"]

# File extensions, lower case and without the dot; some equal plugin names, so each list is one
# string (tests/test_architecture.py looks for plugin names in the core's strings).
_IMAGES = frozenset("jpg jpeg png bmp gif webp tif tiff".split())  # noqa: SIM905
_VIDEOS = frozenset("mp4 ogv mjpeg avi mov h264 mpg mpeg webm wmv mkv".split())  # noqa: SIM905
_AUDIO = frozenset("wav mp3 flac ogg opus m4a aac wma pcm".split())  # noqa: SIM905
#: The file extensions of each media kind.
MEDIA_EXTENSIONS: dict[str, frozenset[str]] = {
    "text": frozenset({"txt", "md"}),  # not a plugin name
    "image": _IMAGES,  # not a plugin name
    "video": _VIDEOS,  # not a plugin name
    "audio": _AUDIO,  # not a plugin name
    "mesh": frozenset({"glb", "ply", "stl"}),  # not a plugin name
    "pdf": frozenset({"pdf"}),  # not a plugin name (twice)
    "nifti": frozenset({"nii", "nii.gz"}),  # not a plugin name
}
#: How many entries of each subfolder are looked at (a hint must not walk a huge tree).
_PEEK = 20
#: Subfolders a hint names.
_SHOWN = 3


def media_kind(name: str) -> str | None:
    """The media kind of a file name (``"image"`` for ``cat.JPG``), or ``None``."""
    lowered = name.lower()
    for kind, extensions in MEDIA_EXTENSIONS.items():
        if any(lowered.endswith("." + extension) for extension in extensions):
            return kind
    return None


def _subfolder_files(local: str) -> tuple[list[str], list[str]]:
    """The subfolders of ``local``, and a few file names of each (``cats/a.jpg``)."""
    try:
        folders = sorted(entry.name for entry in os.scandir(local) if entry.is_dir())
    except OSError:
        return [], []
    files: list[str] = []
    for folder in folders[:_PEEK]:
        try:
            with os.scandir(os.path.join(local, folder)) as entries:
                names = [entry.name for _, entry in zip(range(_PEEK), entries, strict=False)]
        except OSError:
            continue
        files += [f"{folder}/{name}" for name in sorted(names)]
    return folders, files


def raw_files_hint(
    url: str, local: str | None, names: Iterable[str], *, one_file: bool = False
) -> str:
    """What to do with a folder of media files opened as a dataset; ``""`` if it holds none.

    Args:
        url: The folder's URL or path.
        local: Its local path, to look into its subfolders (``cats/``, ``dogs/``), or ``None``.
        names: The objects directly in it.
        one_file: ``names`` is the one file that was opened, not the folder's objects.
    """
    files, folders = list(names), list[str]()
    if local is not None:
        folders, below = _subfolder_files(local)
        files += below
    kinds = sorted({kind for kind in map(media_kind, files) if kind is not None})
    if not kinds:
        return ""
    shown = ", ".join(f"{folder}/" for folder in folders[:_SHOWN]) + (
        ", ..." if len(folders) > _SHOWN else ""
    )
    where = f" in subfolders ({shown})" if folders else ""
    article = "an" if kinds[0][0] in "aeiou" else "a"
    what = (
        f"It is {article} {kinds[0]} file" if one_file else f"It holds {' and '.join(kinds)} files"
    )
    return (
        f" {what}{where}, not a dataset: read such files as they are "
        f"with litdata.StreamingRawDataset({url!r}), or list them with their folders as labels "
        f"with litdata.list_media_folder({url!r}, kind={kinds[0]!r}) and write a dataset of "
        f"them with litdata.optimize()."
    )
