"""The generated reference pages: docs/api.md (from docstrings) and docs/environment.md.

``python tests/support/reference_pages.py`` rewrites both; ``tests/test_reference_pages.py``
fails when a committed page differs from what this writes, so a docstring or a variable
changed without its page is caught.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
API_PAGE = ROOT / "docs" / "api.md"
ENVIRONMENT_PAGE = ROOT / "docs" / "environment.md"

_API_INTRO = """\
# API reference

Generated from the docstrings by `tests/support/reference_pages.py` (`python
tests/support/reference_pages.py` rewrites it; a test checks that it is current). Every name
of the first section is importable from `litdata` (`import litdata as ld; ld.optimize`); the
subpackages' names are reached through them (`ld.vision.RandomResizedCrop`), and the
exceptions are also importable from `litdata` itself. LitData's own import paths
(`litdata.streaming.item_loader`...) lead to the same objects; see [migration](migration.md).
"""

_ENVIRONMENT_INTRO = """\
# Environment variables

Every `LITDATA_*` variable litdata reads, read when used (never at import, so a launcher may
set them after `import litdata`). Arguments win over variables where both exist
(`cache_dir=` over `LITDATA_CACHE_DIR`). `litdata/core/config.py` is the only module that
reads them; this page is generated from its `VARIABLES` table by
`tests/support/reference_pages.py`, and a test checks that it is current and that the
package names no other variable.

| variable | default | what it sets |
|---|---|---|
"""


def _signature(obj: object) -> str:
    try:
        return str(inspect.signature(obj))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "(...)"


def _entry(name: str, obj: object) -> str:
    doc = inspect.getdoc(obj) or "(no docstring)"
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            bases = ", ".join(base.__name__ for base in obj.__bases__)
            return f"### `{name}({bases})`\n\n{doc}\n"
        head = f"class {name}{_signature(obj)}"
    elif callable(obj):
        head = f"{name}{_signature(obj)}"
    else:
        return f"### `{name}`\n\n`{obj!r}`\n"
    return f"### `{name}`\n\n```text\n{head}\n```\n\n{doc}\n"


def api_page() -> str:
    """The API reference: every name of ``litdata.__all__``, functions and classes first, then
    each subpackage reached as an attribute (``ld.vision``, ``ld.errors``) with its own names."""
    import litdata

    subpackages = sorted(
        name for name in litdata.__all__ if inspect.ismodule(getattr(litdata, name))
    )
    # Names a subpackage exports too (``ld.ChunkCorruptError``) are listed under it, once.
    elsewhere = {name for package in subpackages for name in getattr(litdata, package).__all__}
    parts = [_API_INTRO]
    parts.append("## Functions and classes\n")
    for name in sorted(litdata.__all__, key=str.lower):
        if name == "__version__" or name in subpackages or name in elsewhere:
            continue
        parts.append(_entry(name, getattr(litdata, name)))
    for package in subpackages:
        module = getattr(litdata, package)
        parts.append(f"## `litdata.{package}`\n")
        parts.append((inspect.getdoc(module) or "") + "\n")
        names = sorted(module.__all__, key=str.lower)
        parts.extend(_entry(name, getattr(module, name)) for name in names)
    return "\n".join(parts)


def environment_page() -> str:
    """The table of every ``LITDATA_*`` variable, from ``litdata.core.config.VARIABLES``."""
    from litdata.core.config import VARIABLES

    rows = [
        f"| `{name}` | {f'`{default}`' if default else '(unset)'} | {meaning} |"
        for name, (default, meaning) in sorted(VARIABLES.items())
    ]
    return _ENVIRONMENT_INTRO + "\n".join(rows) + "\n"


def main() -> int:
    """Rewrite both pages."""
    API_PAGE.write_text(api_page())
    ENVIRONMENT_PAGE.write_text(environment_page())
    print(f"wrote {API_PAGE.relative_to(ROOT)} and {ENVIRONMENT_PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
