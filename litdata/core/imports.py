"""Optional dependencies, imported only where needed, with the install hint in the error."""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import json
from pathlib import Path
from types import ModuleType
from urllib.parse import unquote, urlparse

__all__ = ["install_source", "pip_install", "require"]


@functools.cache
def install_source() -> str:
    """What ``pip install`` takes to install this litdata: the folder it was installed from.

    ``litdata`` on PyPI is Lightning AI's package, not this one, so hints never name it: they
    name the source folder pip recorded (``direct_url.json``), else the checkout this module
    is in, else a placeholder.
    """
    try:
        recorded = importlib.metadata.distribution("litdata").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        recorded = None
    if recorded:
        url = urlparse(json.loads(recorded).get("url", ""))
        if url.scheme == "file":  # not a plugin name: a file:// URL
            return unquote(url.path)
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file():
        return str(checkout)
    return "/path/to/litdata"


def pip_install(extra: str | None = None) -> str:
    """The command that installs this litdata, with ``extra``: ``pip install '/src[s3]'``."""
    return f"pip install '{install_source()}{f'[{extra}]' if extra else ''}'"


def require(module: str, *, extra: str, purpose: str) -> ModuleType:
    """Import an optional dependency or explain how to install it.

    Args:
        module: The module to import, e.g. ``"zstandard"``.
        extra: The litdata extra that installs it, e.g. ``"zstd"``.
        purpose: What needs it, e.g. ``"the zstd compressor"``.

    Raises:
        ImportError: The module is not installed; the message says what to install.
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        package = module.split(".", maxsplit=1)[0]
        raise ImportError(
            f"{purpose} needs the {package!r} package, which is not installed. "
            f"Install it with: {pip_install(extra)}"
        ) from error
