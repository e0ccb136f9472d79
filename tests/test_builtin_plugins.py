"""litdata's built-ins are declared in its pyproject like a third party's, and all load."""

from pathlib import Path

import pytest
import tomllib

import litdata
from litdata.core.protocols import protocol_members
from litdata.core.registry import registries

ROOT = Path(__file__).resolve().parents[1]
DECLARED = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]


def _declared_modules():
    modules = set()
    for entries in DECLARED.values():
        for target in entries.values():
            modules.add(target.split(":")[0])
    return modules


def test_every_plugin_module_is_declared():
    package = ROOT / "litdata" / "plugins"
    found = {
        "litdata." + ".".join(path.relative_to(ROOT / "litdata").with_suffix("").parts)
        for path in package.rglob("*.py")
        if path.name != "__init__.py"
    }
    assert found == _declared_modules()


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        (kind, name)
        for kind, registry in registries.ALL.items()
        for name in DECLARED.get(registry.group, {})
    ],
)
def test_every_declared_builtin_loads_and_satisfies_its_protocol(kind, name):
    registry = registries.ALL[kind]
    plugin = registry.load(name)
    assert plugin.name == name
    for member in protocol_members(registry.protocol):
        if member != "level":  # an instance attribute of encryptors
            assert hasattr(plugin, member), f"{plugin} lacks {member}"
    assert registry.info(name).builtin


def test_the_hook_module_is_declared():
    assert DECLARED["litdata"] == {"builtin": "litdata.plugins.hooks"}


def test_installed_metadata_matches_the_pyproject():
    for registry in registries.ALL.values():
        builtin = {info.name for info in registry.infos() if info.builtin}
        assert builtin == set(DECLARED.get(registry.group, {})), registry.group
    assert litdata.__version__
