"""Run the example plugin's tests against litdata's checkout, discovered as if installed.

The plugin's source is importable from this checkout, and a minimal ``dist-info`` declaring
its entry points (read from its ``pyproject.toml``) is put on ``sys.path`` for these tests
only, so litdata finds every plugin through entry points, exactly as after ``pip install``.
"""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib

from litdata.testing import fake_distribution, rediscover

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))


@pytest.fixture(autouse=True, scope="module")
def _installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    project = tomllib.loads((HERE / "pyproject.toml").read_text())["project"]
    root = tmp_path_factory.mktemp("example-site")
    fake_distribution(root, project["name"], project["entry-points"], version=project["version"])
    rediscover()
    yield
    sys.path.remove(str(root))
    rediscover()
