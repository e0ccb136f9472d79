"""The example plugin's hook implementations: it recognises folders of ``.jsonl`` files."""

from __future__ import annotations

from typing import Any

import litdata
from litdata_plugin_example.jsonl import SUFFIX


@litdata.hookimpl
def litdata_detect_format(location: Any, index: Any) -> str | None:
    """``jsonl`` for a location holding ``.jsonl`` files (and no index of its own)."""
    if index is not None:
        return None
    names = location.storage.list(location.url)
    if "index.json" in names:
        return None
    return "jsonl" if any(name.endswith(SUFFIX) for name in names) else None
