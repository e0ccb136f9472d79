"""Every file or folder the docs name exists, so that a move cannot leave the map stale.

A path is named in two ways: in code spans (```engine/native/writer.py```, ```tests/...```,
```bench/results/...```), read from the repository's root or from the package's, and as a link
(``[hooks](plugins/hooks.md)``), read from the page's folder. Single names without a folder
(```writer.py```) are left alone: the sentence around them says where they are.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([*ROOT.joinpath("docs").rglob("*.md"), ROOT / "README.md"])
#: A code span holding a path with at least one folder: ``a/b.py``, ``a/b/``.
CODE_PATH = re.compile(r"`((?:[\w.-]+/)+[\w.-]*)`")
#: A relative Markdown link to a file in the repository.
LINK = re.compile(r"\]\((?!https?:|#|mailto:)([^)#\s]+)(?:#[^)]*)?\)")
#: Where a code-span path may be read from: the repository, the package.
BASES = (ROOT, ROOT / "litdata")
#: Paths that name something outside the repository (a user's disk, a cache, a URL's tail).
OUTSIDE = ("~", "/", ".venv/", "my-", "s3:", "gs:", "az:")


def _named(page: Path) -> list[tuple[str, Path]]:
    text = page.read_text(encoding="utf-8")
    spans = [
        (path, ROOT)
        for path in CODE_PATH.findall(text)
        if not path.startswith(OUTSIDE) and _looks_like_ours(path)
    ]
    links = [(path, page.parent) for path in LINK.findall(text) if not path.startswith(OUTSIDE)]
    return spans + links


def _looks_like_ours(path: str) -> bool:
    """A path into this repository: it starts with one of its top folders or the package's."""
    top = path.split("/", 1)[0]
    return any((base / top).exists() for base in BASES)


def _exists(path: str, base: Path) -> bool:
    if base != ROOT:
        return (base / path).exists()
    return any((each / path).exists() for each in BASES)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_the_docs_name_exists(page):
    missing = [path for path, base in _named(page) if not _exists(path, base)]
    assert not missing, f"{page.relative_to(ROOT)} names paths that do not exist: {missing}"


def test_the_check_catches_a_stale_path(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "See `streaming/no_such_room/plan.py`, `engine/native/writer.py` and [x](missing.md).\n",
        encoding="utf-8",
    )
    missing = [path for path, base in _named(page) if not _exists(path, base)]
    assert missing == ["streaming/no_such_room/plan.py", "missing.md"]


def test_the_architecture_page_names_every_subpackage():
    """Each folder of the package (``streaming/epoch/``, ``viewer/``) is a room the map names."""
    text = ROOT.joinpath("docs", "architecture.md").read_text(encoding="utf-8")
    package = ROOT / "litdata"
    rooms = sorted(
        str(init.parent.relative_to(package)) + "/"
        for init in package.rglob("__init__.py")
        if init.parent != package
    )
    # ``plugins/formats/<name>/`` is one row for every format; a plugin kind's folder may be
    # named by its own name in the plugins row (``serializers/``).
    nested = {room for room in rooms if room.startswith("plugins/formats/") and room.count("/") > 2}
    unnamed = [
        room
        for room in rooms
        if room not in nested
        and f"`{room}" not in text
        and not (room.startswith("plugins/") and f"`{room.removeprefix('plugins/')}`" in text)
    ]
    assert not unnamed, f"docs/architecture.md does not name {unnamed}"
