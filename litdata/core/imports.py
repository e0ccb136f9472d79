"""Optional dependencies, imported only where needed, with the install hint in the error."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["require"]


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
            f"Install it with: pip install 'litdata[{extra}]'"
        ) from error
