"""A missing optional package names the pip line that installs this litdata, not PyPI's."""

from __future__ import annotations

from pathlib import Path

import pytest

from litdata.core.imports import install_source, pip_install, require

ROOT = Path(__file__).resolve().parents[2]


def test_the_install_source_is_this_checkout():
    # installed editable from the checkout (make), or run from it: either way, this folder
    assert Path(install_source()).resolve() == ROOT


def test_a_missing_module_names_the_pip_line_for_this_clone():
    with pytest.raises(ImportError) as raised:
        require("no_such_module_here", extra="s3", purpose="The s3 backend")
    message = str(raised.value)
    assert f"pip install '{ROOT}[s3]'" in message
    assert "'litdata[" not in message  # PyPI's litdata is another project
    assert pip_install() == f"pip install '{ROOT}'"
