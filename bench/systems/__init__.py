"""One adapter module per system; each defines ``SYSTEM`` (a :class:`systems.base.System` subclass).

Modules are imported only inside child processes, by name, so a system's dependencies are never
imported by the parent or by another system's child.
"""

from __future__ import annotations

import importlib
from typing import Any

#: system name -> adapter module (relative to this package)
MODULES = {
    "ours": "ours",
    "ours-noverify": "ours",  # the same adapter; its children get LITDATA_VERIFY=0
    "ours-verifyall": "ours",  # ... and LITDATA_VERIFY=always
    "ours-before": "ours",  # ... with PYTHONPATH at LITDATA_BENCH_BEFORE (an earlier checkout)
    "ours-fernet": "ours",  # the same adapters; their children get LITDATA_BENCH_ENCRYPTION
    "ours-fernet-chunk": "ours",
    "litdata": "litdata_peer",
    "litdata-fernet": "litdata_peer",
    "litdata-fernet-chunk": "litdata_peer",
    "mosaic": "mosaic",
    "webdataset": "webdataset_peer",
    "baseline": "baseline",
    "s3fs-raw": "s3fs_raw",
    "ours-plain": "ours",  # ours reading W6 with the plain Pillow recipe (LITDATA_BENCH_VISION)
    "decode-limit": "decode_limit",
}


def load(name: str) -> Any:
    """Import and return the adapter class for system ``name``."""
    return importlib.import_module(f"systems.{MODULES[name]}").SYSTEM
