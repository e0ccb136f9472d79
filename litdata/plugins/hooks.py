"""litdata's own hook implementations: the defaults, run after any plugin's (``trylast``)."""

from __future__ import annotations

import os
import re

from litdata.core.index import INDEX_FILENAME
from litdata.core.registry.hookspecs import hookimpl

__all__ = ["litdata_detect_format", "litdata_resolve_storage"]

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")


@hookimpl(trylast=True)
def litdata_resolve_storage(url: str) -> str | None:
    """The URL's scheme names its backend; a plain path is ``file``."""
    match = _SCHEME.match(url)
    return match.group(1).lower() if match else "file"


@hookimpl(trylast=True)
def litdata_detect_format(path: str) -> str | None:
    """A directory with an ``index.json`` holds native chunks."""
    return "chunks" if os.path.isfile(os.path.join(path, INDEX_FILENAME)) else None
