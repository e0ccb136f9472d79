"""The generated pages are current, and every LITDATA_* variable is in config's table."""

from __future__ import annotations

import re

from support.reference_pages import API_PAGE, ENVIRONMENT_PAGE, ROOT, api_page, environment_page

from litdata.core.config import VARIABLES

_REGENERATE = "run `python tests/support/reference_pages.py` and commit the page"


def test_the_api_reference_is_current():
    assert API_PAGE.read_text() == api_page(), _REGENERATE


def test_the_environment_table_is_current():
    assert ENVIRONMENT_PAGE.read_text() == environment_page(), _REGENERATE


def test_every_variable_the_package_names_is_in_the_table_and_only_those():
    named = {
        match
        for path in (ROOT / "litdata").rglob("*.py")
        for match in re.findall(r"\bLITDATA_[A-Z0-9_]+", path.read_text())
    }
    assert named == set(VARIABLES)


def test_the_api_reference_documents_every_public_name():
    import litdata

    text = API_PAGE.read_text()
    subpackages = [name for name in ("errors", "vision") if f"## `litdata.{name}`" in text]
    assert subpackages == ["errors", "vision"]
    names = [name for name in litdata.__all__ if name not in ("__version__", *subpackages)]
    names += [name for package in subpackages for name in getattr(litdata, package).__all__]
    missing = [name for name in names if f"### `{name}" not in text]
    assert missing == []
    assert "(no docstring)" not in text
    assert " at 0x" not in text  # no object addresses: the page is the same on every run
    assert str(ROOT) not in text  # nor this checkout's path
