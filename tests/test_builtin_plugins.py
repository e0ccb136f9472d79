"""litdata's built-ins are declared in its pyproject like a third party's, and all load."""

import os
import site
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

import litdata
from litdata.core.protocols import protocol_members
from litdata.core.registry import kinds, known

ROOT = Path(__file__).resolve().parents[1]
DECLARED = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]


def _declared_modules():
    modules = set()
    for entries in DECLARED.values():
        for target in entries.values():
            modules.add(target.split(":")[0])
    return modules


def _module(path: Path) -> str:
    return "litdata." + ".".join(path.relative_to(ROOT / "litdata").with_suffix("").parts)


#: Format homes that are no format plugin: their files stream through another format.
HOMES = {
    "litdata.plugins.formats.hf": "Hugging Face datasets stream as Parquet",
    "litdata.plugins.formats.raw": "raw files stream through StreamingRawDataset",
}


def test_every_plugin_module_is_declared():
    """Each module of a kind's folder is a declared plugin; each subpackage (one format, with
    its reader, writer and public functions) declares the module that is its plugin."""
    package = ROOT / "litdata" / "plugins"
    declared = _declared_modules()
    kinds = [folder for folder in package.iterdir() if (folder / "__init__.py").is_file()]
    modules = {
        _module(path)
        for folder in kinds
        for path in folder.glob("*.py")
        if not path.name.startswith("_")  # private helpers
    }
    subpackages = [sub for folder in kinds for sub in folder.iterdir() if sub.is_dir()]
    undeclared = [
        _module(sub / "__init__.py").removesuffix(".__init__")
        for sub in subpackages
        if (sub / "__init__.py").is_file()
        and not any(_module(path) in declared for path in sub.glob("*.py"))
    ]
    top = {_module(path) for path in package.glob("*.py") if not path.name.startswith("_")}
    direct = {module for module in declared if module.startswith("litdata.plugins.")}
    assert modules | top == {module for module in direct if module.count(".") <= 3}
    assert sorted(undeclared) == sorted(HOMES)


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        (kind, name)
        for kind, registry in kinds.ALL.items()
        for name in DECLARED.get(registry.group, {})
    ],
)
def test_every_declared_builtin_loads_and_satisfies_its_protocol(kind, name):
    registry = kinds.ALL[kind]
    plugin = registry.load(name)
    assert plugin.name == name
    for member in protocol_members(registry.protocol):
        if member != "level":  # an instance attribute of encryptors
            assert hasattr(plugin, member), f"{plugin} lacks {member}"
    assert registry.info(name).builtin


def test_the_builtin_table_is_the_pyproject():
    assert known.BUILTIN == DECLARED


SOURCE_CHECKOUT = """
from importlib import metadata
import litdata as ld
from litdata.core.registry import kinds
assert "litdata" not in {d.metadata["Name"] for d in metadata.distributions()}
ld.write_dataset([1, 2], "ds", chunk_size=1)
assert [ld.DatasetReader("ds")[i] for i in range(2)] == [1, 2]
assert kinds.serializers.info("int").builtin
print("ok", sorted(kinds.shuffle.names()))
"""


def test_a_source_checkout_without_metadata_finds_the_builtins(tmp_path):
    # Everything installed except litdata's own metadata and its editable hook; the checkout
    # itself on sys.path, as a developer running from a clone has it.
    packages = tmp_path / "site"
    packages.mkdir()
    for source in site.getsitepackages():
        for name in os.listdir(source):
            if name.startswith(("litdata-", "_editable_impl_litdata", "__editable__")):
                continue
            if not (packages / name).exists():
                (packages / name).symlink_to(Path(source) / name)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{packages}"}
    result = subprocess.run(
        [sys.executable, "-S", "-c", SOURCE_CHECKOUT],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == "ok"


def test_installed_metadata_matches_the_pyproject():
    for registry in kinds.ALL.values():
        builtin = {info.name for info in registry.infos() if info.builtin}
        assert builtin == set(DECLARED.get(registry.group, {})), registry.group
    assert litdata.__version__
