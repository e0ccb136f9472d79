"""``import litdata`` is fast and imports no optional backend (checked in a fresh process)."""

import json
import subprocess
import sys

HEAVY = [
    "torch",
    "numpy",
    "PIL",
    "zstandard",
    "lz4",
    "s3fs",
    "gcsfs",
    "polars",
    "pyarrow",
    "cryptography",
    "fsspec",
    "tqdm",
    "litdata.plugins.serializers.arrays",
]


def _probe(code: str) -> dict:
    output = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    )
    return json.loads(output.stdout)


def test_import_litdata_imports_no_heavy_module():
    loaded = _probe(
        f"import sys, json, litdata; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    assert loaded == []


def test_import_litdata_takes_well_under_a_second():
    times = _probe(
        "import time, json; t = time.perf_counter(); import litdata; "
        "print(json.dumps(time.perf_counter() - t))"
    )
    assert times < 0.5


def test_public_names_resolve_lazily():
    loaded = _probe(
        "import sys, json, litdata; name = 'litdata.processing.write'; "
        "before = name in sys.modules; litdata.write_dataset; "
        "print(json.dumps([before, name in sys.modules]))"
    )
    assert loaded == [False, True]
