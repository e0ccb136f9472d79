"""Every hook is documented with its exact signature, and every docs example runs."""

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

from litdata.core import hookspecs

ROOT = Path(__file__).resolve().parents[1]
HOOKS = [name for name in dir(hookspecs) if name.startswith("litdata_")]


@pytest.mark.parametrize("name", HOOKS)
def test_hook_is_documented_with_its_signature(name):
    text = (ROOT / "docs" / "plugins" / "hooks.md").read_text()
    signature = f"{name}{inspect.signature(getattr(hookspecs, name))}"
    assert signature.replace("'", "") in text.replace("'", ""), signature


@pytest.mark.parametrize("name", HOOKS)
def test_hook_has_a_test(name):
    tests = "\n".join(path.read_text() for path in (ROOT / "tests").rglob("test_*.py"))
    assert f"def test_hook_{name}(" in tests


def _examples():
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for number, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.S)):
            if "# not run" not in block:
                yield pytest.param(block, id=f"{page.relative_to(ROOT)}#{number}")


@pytest.mark.parametrize("code", list(_examples()))
def test_docs_example_runs(code, tmp_path):
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True, timeout=120)
