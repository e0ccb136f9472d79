"""The architecture's promises, checked on the source: no built-in is special to the core."""

import ast
from pathlib import Path

import pytest

from litdata.core.registry import known

PACKAGE = Path(__file__).resolve().parents[1] / "litdata"
CORE_SIDE = ["core", "streaming", "processing", "cli"]
# Words that are also built-in plugin names but mean something else where the core uses them.
HOMONYMS = {
    "chunks": "the index.json key, and LitData's default cache folder (~/.lightning/chunks)",
    "numpy": "the key of numpy's generator in a ParallelStreamingDataset's rngs",
    "none": "torchrun's TORCHELASTIC_RUN_ID when it is given no --rdzv-id",
}
BUILTIN_NAMES = {
    name
    for group, entries in known.BUILTIN.items()
    if group != "litdata"
    for name in entries
    if name not in HOMONYMS
}


def _modules(*folders):
    for folder in folders:
        yield from sorted((PACKAGE / folder).rglob("*.py"))


def _imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


@pytest.mark.parametrize("module", list(_modules("core")), ids=lambda p: p.name)
def test_the_core_imports_nothing_from_the_plugins(module):
    imported = list(_imports(ast.parse(module.read_text())))
    assert not [name for name in imported if name.startswith("litdata.plugins")]


def _code_strings(tree):
    """String constants that are not docstrings."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        strings = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if strings and id(node) not in docstrings:
            yield node


@pytest.mark.parametrize(
    "module",
    # ``known.py`` is the table of built-ins; an ``__init__.py`` re-exports public classes
    # (``TokensLoader``) by the names they share with their plugin.
    [m for m in _modules(*CORE_SIDE) if m.name not in ("known.py", "__init__.py")],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_no_builtin_plugin_is_named_outside_the_plugins_and_the_table(module):
    """A string that only happens to equal a plugin's name says so: ``# not a plugin name``."""
    text = module.read_text()
    lines = text.splitlines()
    named = [
        f"line {node.lineno}: {node.value!r}"
        for node in _code_strings(ast.parse(text))
        if node.value.split(":")[0] in BUILTIN_NAMES
        and "# not a plugin name" not in lines[node.lineno - 1]
    ]
    assert not named, named
