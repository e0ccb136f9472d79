"""Run LitData's own public-API tests against this package and print ``N of M pass``.

Not part of ``make test``: it needs LitData's test suite, which is extracted at run time from a
bare git mirror of ``github.com/Lightning-AI/litData`` (never vendored here). Run it with our venv::

    .venv/bin/python tests/interop/litdata_suite.py [--mirror DIR] [--ref REF] [--list] [-n 2]

What it does:

1. ``git archive REF tests src/litdata`` from the mirror into a temporary directory. REF defaults
   to the tag ``v0.2.76`` when the mirror has it, else to :data:`PINNED` (see ``--help``).
2. Selects the *public-API tests* with a static rule (:func:`select`, printed by ``--list``): a test
   function is selected when everything it reaches -- its body, decorators and parameters, the
   module-level helpers, classes and constants it names, the fixtures it requests (module,
   ``conftest.py``; transitively), the test helper modules it imports -- satisfies all of:

   - every ``litdata`` name it imports or names is public: in LitData's ``litdata.__all__``
     (also at the module that defines it), in the ``__all__`` of ``litdata.streaming`` or
     ``litdata.raw``, or a LitData import path that ``litdata.compat.PATHS`` keeps; and no such
     name starts with ``_``;
   - it reads or writes no private attribute (``x._y``; dunders are fine);
   - it mocks nothing: no ``unittest.mock`` / ``mocker``, no ``monkeypatch.setattr/setitem/
     delattr/delitem`` (``monkeypatch.setenv`` and ``chdir`` are fine);
   - it needs no cloud or network: no ``lightning_sdk`` / ``lightning_cloud`` / ``boto3`` /
     ``obstore`` / ``requests`` / ``huggingface_hub``, no ``s3://``, ``gs://``, ``azure://``,
     ``hf://``, ``r2://`` URL and no ``LIGHTNING_*`` cloud variable;
   - it needs no GPU (mentions no ``cuda``).

   LitData's ``conftest.py`` autouse fixtures are test harness, not tests: they are kept and run
   but not part of the rule.
3. Rewrites each test module so that a module-level import of a *non-public* name cannot stop the
   module from importing (the name becomes a placeholder that only the deselected tests use);
   imports of public names are left alone, so a public name we lack fails its tests, as it should.
4. Runs pytest with this interpreter (whose ``litdata`` must be ours, from this checkout) on the
   selected tests, with LitData's pytest settings, and prints ``N of M pass`` (M = collected test
   items of the selected functions; a function whose module cannot be imported counts once) and
   the failures grouped by their cause (exception type and message with numbers and paths elided).

Test-only third-party helpers the suite imports (``lightning-utilities``, ``pytest-asyncio``) are
installed with pip into ``~/.cache/litdata-suite/deps`` (``--deps DIR``) and put on ``PYTHONPATH``;
LitData itself is never installed.
"""

from __future__ import annotations

import argparse
import ast
import collections
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_MIRROR = Path("/work/.mirror/Lightning-AI+litData/repo")
#: The newest LitData commit the mirror holds when the tag v0.2.76 is absent: ``main`` after
#: v0.2.71 ("fix(streaming): copy deserialized numpy arrays so they are writable (#887)",
#: 2026-08-18). The tags in the mirror stop at v0.2.71 and the PyPI sdist of 0.2.76 ships no tests.
PINNED = "8805bae05cfdab5644ea40e16df802e95a1914f1"
WANTED_TAG = "v0.2.76"
DEPS = ("lightning-utilities", "pytest-asyncio")

MOCK_NAMES = frozenset(
    {"mock", "Mock", "MagicMock", "AsyncMock", "patch", "mocker", "PropertyMock"}
)
MONKEYPATCH_MOCKING = frozenset({"setattr", "setitem", "delattr", "delitem"})
CLOUD_NAMES = frozenset(
    {
        "lightning_sdk",
        "lightning_cloud",
        "boto3",
        "botocore",
        "obstore",
        "requests",
        "huggingface_hub",
    }
)
CLOUD_STRING = re.compile(
    r"^(s3|gs|gcs|azure|hf|r2|lightning)://|LIGHTNING_|lightning_sdk|lightning_cloud"
)
GPU_STRING = re.compile(r"cuda", re.IGNORECASE)


# ----------------------------------------------------------------------------------------------
# The public names
# ----------------------------------------------------------------------------------------------


def _dunder_all(source: str) -> list[str]:
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            return [str(v) for v in value]
    return []


@dataclass
class Public:
    """Which ``(module, name)`` references count as LitData's public API."""

    top: frozenset[str]
    by_module: dict[str, frozenset[str]]

    @classmethod
    def load(cls, src: Path) -> Public:
        from litdata.compat import PATHS

        top = frozenset(_dunder_all((src / "litdata" / "__init__.py").read_text()))
        by_module: dict[str, frozenset[str]] = {"litdata": top}
        for package in ("streaming", "raw"):
            init = src / "litdata" / package / "__init__.py"
            if init.exists():
                by_module[f"litdata.{package}"] = frozenset(_dunder_all(init.read_text()))
        for module, names in PATHS.items():
            by_module[module] = by_module.get(module, frozenset()) | frozenset(names)
        return cls(top, by_module)

    def allows(self, module: str, name: str | None) -> bool:
        if not (module == "litdata" or module.startswith("litdata.")):
            return True
        if name is None:  # ``import litdata.x``: judged by the attributes used on it
            return not any(part.startswith("_") for part in module.split("."))
        if name.startswith("_") or any(part.startswith("_") for part in module.split(".")):
            return False
        # A public name is also public at the module that defines it (litdata.streaming.dataset).
        return name in self.by_module.get(module, frozenset()) or name in self.top


# ----------------------------------------------------------------------------------------------
# Static analysis of the suite
# ----------------------------------------------------------------------------------------------


@dataclass
class Module:
    """One parsed Python file of the suite: its imports, top-level definitions and fixtures."""

    path: Path
    name: str
    tree: ast.Module
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    defs: dict[str, ast.AST] = field(default_factory=dict)
    fixtures: dict[str, ast.FunctionDef] = field(default_factory=dict)

    @classmethod
    def parse(cls, path: Path, root: Path) -> Module:
        tree = ast.parse(path.read_text(), filename=str(path))
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        module = cls(path, name, tree)
        for node in tree.body:
            module._add(node)
        return module

    def _add(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.imports[alias.asname] = (alias.name, None)
                else:
                    top = alias.name.split(".")[0]
                    self.imports[top] = (top, None)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                self.imports[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.defs[node.name] = node
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_fixture(node):
                self.fixtures[_fixture_name(node)] = node  # type: ignore[assignment]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        self.defs[sub.id] = node
        elif isinstance(node, (ast.If, ast.Try)):
            for sub in ast.iter_child_nodes(node):
                if isinstance(sub, ast.stmt):
                    self._add(sub)


def _decorator_func(dec: ast.expr) -> str:
    target = dec.func if isinstance(dec, ast.Call) else dec
    return ast.unparse(target)


def _is_fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(_decorator_func(d) in {"pytest.fixture", "fixture"} for d in node.decorator_list)


def _fixture_name(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    for dec in node.decorator_list:
        if isinstance(dec, ast.Call):
            for keyword in dec.keywords:
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
    return node.name


def _is_autouse(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        isinstance(d, ast.Call)
        and any(
            k.arg == "autouse" and isinstance(k.value, ast.Constant) and k.value.value
            for k in d.keywords
        )
        for d in node.decorator_list
    )


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _attribute_chain(node: ast.Attribute) -> list[str] | None:
    parts: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        parts.append(current.attr)
        current = current.value
    if isinstance(current, ast.Name):
        parts.append(current.id)
        return parts[::-1]
    return None


@dataclass
class Test:
    module: Module
    node: ast.FunctionDef | ast.AsyncFunctionDef
    cls: ast.ClassDef | None
    reasons: list[str] = field(default_factory=list)

    @property
    def nodeid(self) -> str:
        rel = self.module.name.replace(".", "/") + ".py"
        return "::".join([rel, *([self.cls.name] if self.cls else []), self.node.name])


class Suite:
    """The extracted suite: modules, conftest chain, the rule applied to each test."""

    def __init__(self, root: Path, public: Public) -> None:
        self.root = root
        self.public = public
        self.modules: dict[str, Module] = {}
        for path in sorted((root / "tests").rglob("*.py")):
            module = Module.parse(path, root)
            self.modules[module.name] = module

    def tests(self) -> Iterator[Test]:
        for module in self.modules.values():
            if not module.path.name.startswith("test_"):
                continue
            for node in module.tree.body:
                if isinstance(
                    node, (ast.FunctionDef, ast.AsyncFunctionDef)
                ) and node.name.startswith("test"):
                    yield Test(module, node, None)
                elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                    for sub in node.body:
                        if isinstance(
                            sub, (ast.FunctionDef, ast.AsyncFunctionDef)
                        ) and sub.name.startswith("test"):
                            yield Test(module, sub, node)

    def conftests(self, module: Module) -> list[Module]:
        """The conftest modules that apply to ``module``, nearest first."""
        found = []
        parts = module.name.split(".")[:-1]
        while parts:
            conftest = self.modules.get(".".join([*parts, "conftest"]))
            if conftest is not None:
                found.append(conftest)
            parts.pop()
        return found

    def judge(self, test: Test) -> list[str]:
        return self.judge_node(test.module, test.node, test.cls)

    def judge_node(self, module: Module, top: ast.AST, top_cls: ast.ClassDef | None) -> list[str]:
        """Why the code reachable from ``top`` is not public-API-only (empty: it is)."""
        reasons: set[str] = set()
        seen: set[int] = set()
        work: list[tuple[Module, ast.AST, ast.ClassDef | None]] = [(module, top, top_cls)]
        if top_cls is not None:  # the class's own fixtures, attributes and decorators
            work.append(
                (module, ast.Module(body=list(top_cls.decorator_list), type_ignores=[]), None)
            )
        while work:
            module, node, cls = work.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            params: list[str] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params = [
                    a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                ]
            for param in params:
                if param in {"self", "cls"}:
                    continue
                if param == "mocker":
                    reasons.add("mocks: mocker")
                fixture = self._fixture(module, cls, param)
                if fixture is not None:
                    work.append(fixture)
            for sub in ast.walk(node):
                self._inspect(module, cls, sub, reasons, work)
        return sorted(reasons)

    def _fixture(
        self, module: Module, cls: ast.ClassDef | None, name: str
    ) -> tuple[Module, ast.AST, ast.ClassDef | None] | None:
        if cls is not None:
            for sub in cls.body:
                function = isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef))
                if function and _is_fixture(sub) and _fixture_name(sub) == name:  # type: ignore[arg-type]
                    return module, sub, cls
        for candidate in [module, *self.conftests(module)]:
            if name in candidate.fixtures:
                return candidate, candidate.fixtures[name], None
        return None

    def _inspect(
        self,
        module: Module,
        cls: ast.ClassDef | None,
        node: ast.AST,
        reasons: set[str],
        work: list[tuple[Module, ast.AST, ast.ClassDef | None]],
    ) -> None:
        if isinstance(node, ast.Name):
            self._name(module, node.id, reasons, work)
        elif isinstance(node, ast.ClassDef) and self._litdata_based(module, node):
            for sub in node.body:
                private = isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(
                    sub.name
                )
                if private:
                    reasons.add(f"overrides a private method: {sub.name}")  # type: ignore[union-attr]
        elif isinstance(node, ast.Attribute):
            attr = node.attr
            if _private(attr):
                reasons.add(f"private attribute: .{attr}")
            chain = _attribute_chain(node)
            if (
                chain
                and chain[0] == "monkeypatch"
                and len(chain) > 1
                and chain[1] in MONKEYPATCH_MOCKING
            ):
                reasons.add(f"mocks: monkeypatch.{chain[1]}")
            if chain and chain[0] in module.imports:
                origin, name = module.imports[chain[0]]
                if name is None and origin.startswith("litdata"):
                    # ``import litdata.x`` then ``litdata.x.y.z``: find the module/name split.
                    dotted = ".".join(chain)
                    if dotted.startswith(origin) and len(chain) >= 2:
                        head, _, last = ".".join(chain[:-1]), None, chain[-1]
                        if head.startswith("litdata") and not self.public.allows(head, last):
                            reasons.add(f"non-public name: {head}.{last}")
            if GPU_STRING.search(attr):
                reasons.add("needs a GPU")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if isinstance(node, ast.ImportFrom):
                    origin, name = node.module or "", alias.name
                else:
                    origin, name = alias.name, None
                self._reference(origin, name, reasons)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if CLOUD_STRING.search(node.value):
                reasons.add("cloud or network")
            if GPU_STRING.search(node.value) and "cuda" in node.value.lower().split():
                reasons.add("needs a GPU")

    def _litdata_based(self, module: Module, node: ast.ClassDef, depth: int = 0) -> bool:
        """Whether the class derives from a LitData class (directly or through the module's)."""
        for base in node.bases:
            name = base.id if isinstance(base, ast.Name) else None
            if name is None and isinstance(base, ast.Attribute):
                chain = _attribute_chain(base)
                name = chain[0] if chain else None
            if name in module.imports and module.imports[name][0].startswith("litdata"):
                return True
            parent = module.defs.get(name or "")
            deeper = isinstance(parent, ast.ClassDef) and depth < 5
            if deeper and self._litdata_based(module, parent, depth + 1):  # type: ignore[arg-type]
                return True
        return False

    def _name(
        self,
        module: Module,
        name: str,
        reasons: set[str],
        work: list[tuple[Module, ast.AST, ast.ClassDef | None]],
    ) -> None:
        if name in MOCK_NAMES and (name in module.imports or name == "mocker"):
            reasons.add(f"mocks: {name}")
        if name in CLOUD_NAMES:
            reasons.add(f"cloud or network: {name}")
        if name in module.defs:
            work.append((module, module.defs[name], None))
            return
        if name in module.imports:
            origin, imported = module.imports[name]
            self._reference(origin, imported, reasons)
            if origin in CLOUD_NAMES or origin.split(".")[0] in CLOUD_NAMES:
                reasons.add(f"cloud or network: {origin}")
            if origin.split(".")[0] == "unittest" and "mock" in origin:
                reasons.add(f"mocks: {name}")
            helper = self.modules.get(origin)
            if helper is not None and imported is not None:
                target = helper.defs.get(imported)
                if target is not None:
                    work.append((helper, target, None))

    def _reference(self, origin: str, name: str | None, reasons: set[str]) -> None:
        if origin.startswith("litdata") and not self.public.allows(origin, name):
            reasons.add(f"non-public name: {origin}{'.' + name if name else ''}")
        if origin.split(".", maxsplit=1)[0] in CLOUD_NAMES:
            reasons.add(f"cloud or network: {origin}")
        if origin.startswith("unittest") and ("mock" in origin or (name and name in MOCK_NAMES)):
            reasons.add("mocks: unittest.mock")


def select(suite: Suite) -> tuple[list[Test], list[Test]]:
    chosen, rejected = [], []
    for test in suite.tests():
        test.reasons = suite.judge(test)
        (rejected if test.reasons else chosen).append(test)
    return chosen, rejected


# ----------------------------------------------------------------------------------------------
# Making the modules importable against our package
# ----------------------------------------------------------------------------------------------

PLACEHOLDER = '''
class _SuiteMissingMeta(type):
    """A non-public LitData name this package does not have; only deselected tests use it."""

    def __bool__(cls):
        return False

    def __getattr__(cls, name):
        return cls

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # used as a decorator
        return cls

    def __iter__(cls):
        return iter(())


def _suite_missing(qualname):
    name = qualname.rsplit(".", 1)[-1]
    return _SuiteMissingMeta(name, (), {"__module__": "litdata_suite.missing"})
'''


def _importable(module: str) -> bool:
    """Whether a third-party module the suite imports is installed here."""
    try:
        return importlib.util.find_spec(module.split(".", maxsplit=1)[0]) is not None
    except (ImportError, ValueError):
        return False


def harness_off(suite: Suite) -> list[str]:
    """Turn off the autouse fixtures that fail the rule; they manage LitData's internals (its
    loop runner, its prefetch threads, its signal handlers). Returns ``module::fixture`` names."""
    off = []
    for module in suite.modules.values():
        lines = module.path.read_text().splitlines(keepends=True)
        changed = False
        for name, node in module.fixtures.items():
            if not _is_autouse(node) or not suite.judge_node(module, node, None):
                continue
            for dec in node.decorator_list:
                assert dec.end_lineno is not None
                for i in range(dec.lineno - 1, dec.end_lineno):
                    lines[i] = re.sub(r"autouse\s*=\s*True", "autouse=False", lines[i])
            changed = True
            off.append(f"{module.name}::{name}")
        if changed:
            module.path.write_text("".join(lines))
    return off


def guard_imports(path: Path, public: Public, every_litdata_name: bool = False) -> None:
    """Rewrite the module so that a module-level import of a non-public LitData name, or of a
    third-party package that is not installed (``lightning``), cannot stop it from importing.

    With ``every_litdata_name`` all LitData names become placeholders: the suite then collects
    the same test items whatever package is installed, which is how M is counted."""
    source = path.read_text()
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.ImportFrom):
            origin = node.module or ""
            if node.level or origin.split(".")[0] == "tests":
                continue
            if origin.startswith("litdata"):
                if every_litdata_name:
                    text = [
                        f"{alias.asname or alias.name} = "
                        f"_suite_missing({origin + '.' + alias.name!r})\n"
                        for alias in node.names
                    ]
                    assert node.end_lineno is not None
                    edits.append((node.lineno - 1, node.end_lineno, "".join(text)))
                    continue
                if all(public.allows(origin, alias.name) for alias in node.names):
                    continue
            elif _importable(origin):
                continue
            text = []
            for alias in node.names:
                local = alias.asname or alias.name
                text.append(
                    f"try:\n    from {origin} import {alias.name} as {local}\n"
                    f"except (ImportError, AttributeError):\n"
                    f"    {local} = _suite_missing({origin + '.' + alias.name!r})\n"
                )
        else:
            if all(not a.name.startswith("litdata") and _importable(a.name) for a in node.names):
                continue
            if every_litdata_name and any(a.name.startswith("litdata") for a in node.names):
                text = [
                    f"{a.asname or a.name.split('.')[0]} = _suite_missing({a.name!r})\n"
                    if a.name.startswith("litdata")
                    else f"import {a.name}{' as ' + a.asname if a.asname else ''}\n"
                    for a in node.names
                ]
                assert node.end_lineno is not None
                edits.append((node.lineno - 1, node.end_lineno, "".join(text)))
                continue
            text = [
                f"try:\n    import {a.name}{' as ' + a.asname if a.asname else ''}\n"
                "except ImportError:\n    pass\n"
                for a in node.names
            ]
        assert node.end_lineno is not None
        edits.append((node.lineno - 1, node.end_lineno, "".join(text)))
    if not edits:
        return
    for start, end, text in reversed(edits):
        lines[start:end] = [text]
    future = [i for i, line in enumerate(lines) if line.startswith("from __future__")]
    at = future[-1] + 1 if future else 0
    lines.insert(at, PLACEHOLDER)
    path.write_text("".join(lines))


# ----------------------------------------------------------------------------------------------
# Running
# ----------------------------------------------------------------------------------------------


def extract(mirror: Path, ref: str | None, into: Path) -> str:
    git = ["git", f"--git-dir={mirror}"]
    if ref is None:
        tags = subprocess.run(
            [*git, "tag", "--list", WANTED_TAG], capture_output=True, text=True, check=True
        )
        ref = WANTED_TAG if tags.stdout.strip() else PINNED
    commit = subprocess.run(
        [*git, "rev-parse", f"{ref}^{{commit}}"], capture_output=True, text=True, check=True
    )
    version = subprocess.run(
        [*git, "show", f"{ref}:src/litdata/__about__.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    match = re.search(r'__version__ = "([^"]+)"', version)
    archive = subprocess.run(
        [*git, "archive", ref, "tests", "src/litdata"], capture_output=True, check=True
    )
    subprocess.run(["tar", "x", "-C", str(into)], input=archive.stdout, check=True)
    return f"{ref} ({commit.stdout.strip()[:12]}, version {match.group(1) if match else '?'})"


def install_deps(target: Path) -> None:
    stamp = target / ".installed"
    if stamp.exists() and stamp.read_text() == " ".join(DEPS):
        return
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            *DEPS,
        ],
        check=True,
    )
    stamp.write_text(" ".join(DEPS))


PYTEST_INI = """[pytest]
addopts = -p no:cacheprovider
asyncio_mode = strict
asyncio_default_fixture_loop_scope = function
markers =
    flaky: LitData's reruns marker (pytest-rerunfailures is not installed; no reruns)
timeout = {timeout}
"""


SELECT_PLUGIN = """
import os

import pytest

_IDS = set(open(os.environ["LITDATA_SUITE_IDS"]).read().split())


def pytest_report_header(config):
    import litdata

    return f"litdata under test: {litdata.__file__}"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    keep = [item for item in items if item.nodeid.split("[")[0] in _IDS]
    drop = [item for item in items if item.nodeid.split("[")[0] not in _IDS]
    items[:] = keep
    config.hook.pytest_deselected(items=drop)
"""


def expected_items(work: Path, public: Public, tests: list[Test], deps: Path) -> dict[str, int]:
    """How many test items each selected function has, collected with every LitData name a
    placeholder (so the count does not depend on the package under test)."""
    shadow = work / "collect"
    shutil.copytree(work / "tests", shadow / "tests")
    for path in (shadow / "tests").rglob("*.py"):
        guard_imports(path, public, every_litdata_name=True)
    (shadow / "pytest.ini").write_text(PYTEST_INI.format(timeout=60))
    (shadow / "litdata_suite_select.py").write_text(
        SELECT_PLUGIN.replace("import litdata\n", "litdata = None\n")
    )
    ids = shadow / "ids.txt"
    ids.write_text("".join(t.nodeid + "\n" for t in tests))
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(shadow), str(deps)]), LITDATA_SUITE_IDS=str(ids)
    )
    command = [
        sys.executable,
        "-m",
        "pytest",
        "--collect-only",
        "-q",
        "-c",
        str(shadow / "pytest.ini"),
    ]
    command += [
        "--rootdir",
        str(shadow),
        "-p",
        "litdata_suite_select",
        "--continue-on-collection-errors",
    ]
    command += sorted({t.nodeid.split("::")[0] for t in tests})
    out = subprocess.run(
        command, cwd=shadow, env=env, capture_output=True, text=True, check=False
    ).stdout
    counts: collections.Counter[str] = collections.Counter()
    for line in out.splitlines():
        if "::" in line and not line.startswith(("ERROR", " ")):
            counts[line.split("[")[0]] += 1
    shutil.rmtree(shadow)
    return {t.nodeid: counts.get(t.nodeid, 1) for t in tests}


def run(
    work: Path, tests: list[Test], deps: Path, workers: int, timeout: int, extra: list[str]
) -> Path:
    (work / "pytest.ini").write_text(PYTEST_INI.format(timeout=timeout))
    (work / "litdata_suite_select.py").write_text(SELECT_PLUGIN)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(work), str(deps)])
    report = work / "report.xml"
    ids = work / "ids.txt"
    ids.write_text("".join(t.nodeid + "\n" for t in tests))
    env["LITDATA_SUITE_IDS"] = str(ids)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-rN",
        "--continue-on-collection-errors",
        f"--junitxml={report}",
        "-o",
        "junit_family=xunit1",
        "--rootdir",
        str(work),
        "-c",
        str(work / "pytest.ini"),
        "-p",
        "litdata_suite_select",
        *(["-n", str(workers)] if workers > 1 else []),
        *extra,
        *sorted({t.nodeid.split("::")[0] for t in tests}),
    ]
    subprocess.run(command, cwd=work, env=env, check=False)
    return report


_ELIDE = [
    (re.compile(r"(/[\w.+-]+)+/?"), "<path>"),
    (re.compile(r"0x[0-9a-f]+"), "0x…"),
    (re.compile(r"\b\d+(\.\d+)?\b"), "#"),
    (re.compile(r"'[^']{40,}'"), "'…'"),
]


def cause(message: str, text: str) -> str:
    """A short, stable description of why a test failed."""
    first = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    if first in {"", "collection failure"} and text:
        errors = [line[2:].strip() for line in text.splitlines() if line.startswith("E ")]
        first = errors[-1] if errors else text.strip().splitlines()[-1]
    for pattern, repl in _ELIDE:
        first = pattern.sub(repl, first)
    if re.fullmatch(r"(AssertionError: )?assert (not )?(False|True|# [<>=!]=? #)", first) and text:
        # a bare assert says nothing: name the line that failed
        source = [line[1:].strip() for line in text.splitlines() if line.startswith(">")]
        if source:
            first = f"{first} at `{source[-1][:100]}`"
    return first[:160]


def summarize(
    report: Path, tests: list[Test], expected: dict[str, int]
) -> tuple[int, int, dict[str, list[str]], list[str]]:
    root = ET.parse(report).getroot()  # noqa: S314 (pytest's own report of this run)
    outcome: dict[str, str] = {}
    causes: dict[str, str] = {}
    module_errors: dict[str, str] = {}
    for case in root.iter("testcase"):
        file = case.get("file") or ""
        if not case.get("classname"):  # the module could not be collected
            error = case.find("error")
            if error is not None:
                path = (case.get("name") or "").replace(".", "/") + ".py"
                module_errors[path] = "cannot import the module: " + cause(
                    error.get("message") or "", error.text or ""
                )
            continue
        classname = case.get("classname") or ""
        name = case.get("name") or ""
        parts = classname.split(".")
        # junit classname: tests.streaming.test_x[.TestClass]; the file tells which part is a class
        module_parts = Path(file).with_suffix("").parts if file else parts
        cls = parts[len(module_parts) :] if file else []
        key = f"{'/'.join(module_parts)}.py::{'::'.join([*cls, name])}"
        result = "passed"
        for child in case:
            if child.tag in {"failure", "error"}:
                result = "failed"
                causes[key] = cause(child.get("message") or "", child.text or "")
                break
            if child.tag == "skipped":
                result = "skipped"
                causes[key] = "skipped: " + cause(child.get("message") or "", "")
        if result == "failed" or key not in outcome or outcome[key] == "passed":
            outcome[key] = result if outcome.get(key) != "failed" else "failed"
    groups: dict[str, list[str]] = collections.defaultdict(list)
    total = passed = 0
    missing = []
    by_function: dict[str, list[str]] = collections.defaultdict(list)
    for key in outcome:
        by_function[key.split("[")[0]].append(key)
    for test in tests:
        want = expected[test.nodeid]
        total += want
        items = by_function.get(test.nodeid, [])
        ok = [item for item in items if outcome[item] == "passed"][:want]
        passed += len(ok)
        bad = [item for item in items if outcome[item] != "passed"][: want - len(ok)]
        for item in bad:
            groups[causes.get(item, outcome[item])].append(item)
        if len(ok) + len(bad) < want:  # items that did not run here
            missing.append(test.nodeid)
            module = test.nodeid.split("::")[0]
            reason = module_errors.get(module, "not collected here")
            groups[reason].extend([test.nodeid] * (want - len(ok) - len(bad)))
    return passed, total, groups, missing


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--mirror", type=Path, default=Path(os.environ.get("LITDATA_SUITE_MIRROR", DEFAULT_MIRROR))
    )
    parser.add_argument(
        "--ref", help=f"git ref of LitData (default: {WANTED_TAG} if present, else {PINNED[:12]})"
    )
    parser.add_argument(
        "--list", action="store_true", help="print the selection and the reasons, run nothing"
    )
    parser.add_argument("--keep", type=Path, help="extract into this directory and keep it")
    parser.add_argument(
        "--deps", type=Path, default=Path.home() / ".cache" / "litdata-suite" / "deps"
    )
    parser.add_argument(
        "-n", "--workers", type=int, default=1, help="pytest-xdist workers (default 1)"
    )
    parser.add_argument("--timeout", type=int, default=120, help="per-test timeout in seconds")
    parser.add_argument("-k", dest="keyword", help="only the selected tests whose id contains this")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every failing test id")
    args = parser.parse_args(list(argv) if argv is not None else None)

    sys.path.insert(0, str(REPO))
    import litdata

    if not Path(litdata.__file__).resolve().is_relative_to(REPO):
        parser.error(
            f"litdata is imported from {litdata.__file__}, not from this checkout ({REPO})"
        )

    work = args.keep or Path(tempfile.mkdtemp(prefix="litdata-suite-"))
    if args.keep and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    try:
        described = extract(args.mirror, args.ref, work)
        public = Public.load(work / "src")
        suite = Suite(work, public)
        chosen, rejected = select(suite)
        print(
            f"LitData tests at {described}: {len(chosen) + len(rejected)} test functions, "
            f"{len(chosen)} selected"
        )
        if args.list:
            for test in chosen:
                print("  +", test.nodeid)
            tally = collections.Counter(r.split(":")[0] for t in rejected for r in t.reasons)
            print("rejected, by reason (a test may have several):", dict(tally.most_common()))
            if args.verbose:
                for test in rejected:
                    print("  -", test.nodeid, "|", "; ".join(test.reasons))
            return 0
        if args.keyword:
            chosen = [t for t in chosen if args.keyword in t.nodeid]
        print(
            "autouse fixtures turned off (they fail the rule):",
            ", ".join(harness_off(suite)) or "none",
        )
        install_deps(args.deps)
        shutil.rmtree(work / "src")  # LitData's own sources must not be importable
        expected = expected_items(work, public, chosen, args.deps)
        print(f"{sum(expected.values())} test items in the {len(chosen)} selected functions")
        for path in (work / "tests").rglob("*.py"):
            guard_imports(path, public)
        report = run(work, chosen, args.deps, args.workers, args.timeout, [])
        passed, total, groups, _ = summarize(report, chosen, expected)
        print()
        print(f"Failures by cause ({len(groups)} causes):")
        for reason, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            print(f"  {len(items):4d}  {reason}")
            for item in items if args.verbose else items[:3]:
                print(f"          {item}")
        print()
        print(f"LitData {described}: {passed} of {total} pass")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
