"""Every ``litdata.<name>`` that an error message, a docstring or a doc page names exists.

Hints such as "register it with litdata.plugins.register" are only useful if the name is real, so
each dotted name in the package's string constants and in README.md and docs/ is imported and
looked up. Entry-point group names (``litdata.storage``, ...) are names of groups, not modules.
"""

import ast
import importlib
import re
from pathlib import Path

from litdata.core.registry import known

ROOT = Path(__file__).resolve().parents[1]
# a dotted name starting at a word boundary: not ``.litdata.lock`` nor ``my-litdata.x``
NAME = re.compile(r"(?<![\w./-])litdata(?:\.[A-Za-z_]\w*)+")
GROUPS = set(known.BUILTIN)


def _from_source() -> dict[str, str]:
    names: dict[str, str] = {}
    for path in sorted((ROOT / "litdata").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for name in NAME.findall(node.value):
                    names.setdefault(name, f"{path.relative_to(ROOT)}:{node.lineno}")
    return names


def _from_docs() -> dict[str, str]:
    names: dict[str, str] = {}
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for name in NAME.findall(line):
                names.setdefault(name, f"{path.relative_to(ROOT)}:{number}")
    return names


def exists(name: str) -> bool:
    """Whether ``name`` is an importable module, or an attribute path below one."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            if not hasattr(target, part):
                return False
            target = getattr(target, part)
        return True
    return False


REFERENCES = {**_from_docs(), **_from_source()}


def test_the_lookup_can_fail():
    assert exists("litdata.plugins.register")
    assert exists("litdata.streaming.item_loader.TokensLoader")  # through the compat layer
    assert not exists("litdata.plugins.no_such_function")
    assert not exists("litdata.no_such_module.thing")


def test_references_were_found():
    assert "litdata.plugins.register" in REFERENCES
    assert len(REFERENCES) > 100


def test_every_named_thing_exists():
    missing = [
        f"{where}: {name}"
        for name, where in sorted(REFERENCES.items())
        if name not in GROUPS and not exists(name)
    ]
    assert missing == []
