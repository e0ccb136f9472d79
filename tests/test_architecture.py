"""The architecture's promises, checked on the source: no built-in is special to the core."""

import ast
from collections.abc import Iterator
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


# -- layers ------------------------------------------------------------------------------------
#: The layers, lowest first; each may import only its own and lower layers (docs/architecture.md).
LAYERS = [
    ("kernel", ["core", "__about__"]),
    ("engine", ["engine"]),
    ("observe", ["observe"]),
    ("streaming and processing", ["streaming", "processing"]),
    ("plugins", ["plugins"]),
    ("vision", ["vision"]),
    ("face", ["__init__", "__main__", "compat", "errors", "cli", "testing", "viewer"]),
]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    return next(rank for rank, (_, tops) in enumerate(LAYERS) if top in tops)


def _targets(tree: ast.AST) -> Iterator[str]:
    """What a module imports: ``from a import b`` is ``a.b`` when that is a module, else ``a``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                yield f"{node.module}.{alias.name}"


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Every module's imports of litdata modules: all of them, ``TYPE_CHECKING`` and those
    inside functions included (a circle through any of them is a circle)."""
    modules = {_module_name(path) for path in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        name, found = _module_name(path), set()
        for target in _targets(ast.parse(path.read_text())):
            module = target
            while module and module not in modules:
                module = module.rpartition(".")[0]
            if module and module != name:
                found.add(module)
        graph[name] = found
    return graph


def _name(module: str) -> str:
    return LAYERS[_layer(module)][0]


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports of a higher layer: ``a -> b (kernel imports engine)``."""
    return sorted(
        f"{module} -> {imported} ({_name(module)} imports {_name(imported)})"
        for module, imports in graph.items()
        for imported in imports
        if _layer(imported) > _layer(module)
    )


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected sets of two modules or more (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle():
    assert circles(import_graph()) == []


def test_each_layer_imports_only_its_own_and_lower_layers():
    assert layer_violations(import_graph()) == []


def test_the_layer_test_catches_a_kernel_module_importing_the_engine():
    graph = import_graph()
    graph["litdata.core.index"].add("litdata.engine.reader")
    assert layer_violations(graph) == [
        "litdata.core.index -> litdata.engine.reader (kernel imports engine)"
    ]
    graph["litdata.engine.reader"].add("litdata.core.index")
    assert circles(graph)  # ... and the circle it would close


def test_every_module_is_in_a_layer():
    tops = {top for _, names in LAYERS for top in names}
    assert {
        _module_name(path).split(".")[1:2][0] if "." in _module_name(path) else "__init__"
        for path in PACKAGE.rglob("*.py")
    } <= tops


# -- rooms -------------------------------------------------------------------------------------
#: Inside a layer, its rooms, lowest first: a module imports only its own and lower rooms.
#: Each room is the first names below the package (a subpackage, or a module of its own).
ROOMS = {
    # The face (dataset, dataloader, split...) and the compositions stand on top side by side:
    # a mixture composes datasets, and the loader accepts mixtures.
    "streaming": [
        ["epoch"],
        ["workers"],
        ["resume"],
        ["control"],
        [
            *["composition", "dataset", "dataloader", "loader_options", "options", "reprs"],
            *["sampler", "sized", "split", "frames", "streamable", "__init__"],
        ],
    ],
    # Utilities of the link, the plugin boundary, item encoding and the cache, the native
    # format's machinery, then what opens and reads a dataset in any format.
    "engine": [
        ["throttle", "link", "mapped_file", "upload", "lifeline", "__init__"],
        ["boundary"],
        ["items", "cache"],
        ["native"],
        ["opening", "reader", "ranged"],
    ],
}
#: Face modules every streaming room may name: the protocol the loader needs of a dataset.
CONTRACTS = {"litdata.streaming.streamable"}


def _room(module: str, package: str) -> int | None:
    prefix = f"litdata.{package}"
    if module != prefix and not module.startswith(prefix + "."):
        return None
    first = module[len(prefix) + 1 :].split(".", maxsplit=1)[0] or "__init__"
    return next(rank for rank, names in enumerate(ROOMS[package]) if first in names)


def room_violations(graph: dict[str, set[str]], package: str) -> list[str]:
    """Imports of a higher room inside ``package``: ``a -> b (room 0 imports room 2)``."""
    found = []
    for module, targets in sorted(graph.items()):
        mine = _room(module, package)
        for target in sorted(targets - CONTRACTS):
            theirs = _room(target, package)
            if mine is not None and theirs is not None and theirs > mine:
                names = ROOMS[package]
                found.append(f"{module} -> {target} ({names[mine][0]} imports {names[theirs][0]})")
    return found


@pytest.mark.parametrize("package", sorted(ROOMS))
def test_each_room_imports_only_its_own_and_lower_rooms(package):
    assert room_violations(import_graph(), package) == []


@pytest.mark.parametrize("package", sorted(ROOMS))
def test_every_module_is_in_a_room(package):
    for module in import_graph():
        if module.startswith(f"litdata.{package}"):
            assert _room(module, package) is not None  # StopIteration names the stray


def test_the_room_test_catches_the_epoch_importing_the_workers():
    graph = import_graph()
    graph["litdata.streaming.epoch.plan"].add("litdata.streaming.workers.batching")
    assert room_violations(graph, "streaming") == [
        "litdata.streaming.epoch.plan -> litdata.streaming.workers.batching (epoch imports workers)"
    ]


def _private_imports_across_kinds(graph: dict[str, set[str]]) -> list[str]:
    """Imports of a plugin kind's private module (``_name``) from outside that kind's folder."""
    found = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            parts = target.split(".")
            private = any(p.startswith("_") and not p.startswith("__") for p in parts)
            if target.startswith("litdata.plugins.") and private:
                home = ".".join(parts[:3] + (parts[3:4] if parts[2] == "formats" else []))
                if not module.startswith(home + "."):
                    found.append(f"{module} -> {target}")
    return found


def test_no_private_module_is_imported_across_plugin_kinds():
    """What several kinds (or third parties) share lives in the kernel, not behind an underscore."""
    assert _private_imports_across_kinds(import_graph()) == []


def test_the_private_import_test_catches_a_format_using_a_codecs_helper():
    graph = import_graph()
    graph["litdata.plugins.formats.mds.shards"].add("litdata.plugins.serializers._dtypes")
    assert _private_imports_across_kinds(graph) == [
        "litdata.plugins.formats.mds.shards -> litdata.plugins.serializers._dtypes"
    ]
