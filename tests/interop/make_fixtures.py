"""Write the interop fixtures with Lightning AI's LitData 0.2.76 (run under the peers' python).

    ~/.cache/litdata-bench/peers-venv/bin/python tests/interop/make_fixtures.py [NAME ...]

Each fixture in ``expected.FIXTURES`` is written into ``tests/data/litdata-0.2.76/<name>/``
(index.json + chunk files) from ``expected.source_samples(name)``, then read back with LitData
(``read_with_litdata.read_dataset``). The read-back dump must equal
``canonical(expected.expected_samples(name))``; it is stored as ``litdata-read.json`` next to
the dataset so tests without the peers' venv can still compare against what LitData returned.
Only the ``updated_at`` field of index.json changes between runs.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import expected as ex  # noqa: E402
from canonical import canonical, first_difference  # noqa: E402

MAX_TOTAL_BYTES = 1_000_000


def ensure_media() -> None:
    """Create the committed JPEG/PNG inputs if they are missing (never rewritten once present)."""
    from PIL import Image

    ex.MEDIA_DIR.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(ex.JPEG_NAMES):
        path = ex.MEDIA_DIR / name
        if not path.exists():
            buf = io.BytesIO()
            Image.fromarray(ex.media_pixels(i), "RGB").save(buf, format="JPEG", quality=90)
            path.write_bytes(buf.getvalue())
    for i, name in enumerate(ex.PNG_NAMES):
        path = ex.MEDIA_DIR / name
        if not path.exists():
            buf = io.BytesIO()
            Image.fromarray(ex.media_pixels(10 + i), "RGB").save(buf, format="PNG")
            path.write_bytes(buf.getvalue())


def to_litdata(value: Any) -> Any:
    """Replace the stand-ins of ``expected`` (Wrapper, JpegFile) with real LitData/PIL objects."""
    from PIL import Image

    import litdata

    if isinstance(value, ex.Wrapper):
        return getattr(litdata, value.kind)(**value.fields)
    if isinstance(value, ex.JpegFile):
        return Image.open(ex.MEDIA_DIR / value.name)
    if isinstance(value, dict):
        return {k: to_litdata(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(to_litdata(v) for v in value))
    if isinstance(value, tuple):
        return tuple(to_litdata(v) for v in value)
    if isinstance(value, list):
        return [to_litdata(v) for v in value]
    return value


def produce(arg: tuple[str, int]) -> Any:
    """``optimize`` fn: the ``i``-th source sample of fixture ``name``."""
    from read_with_litdata import register_namedtuples

    register_namedtuples()
    name, i = arg
    return to_litdata(ex.source_samples(name)[i])


def write_fixture(fixture: ex.Fixture, out: Path) -> None:
    """Write one fixture with LitData into ``out`` (which must not exist)."""
    from read_with_litdata import register_namedtuples

    register_namedtuples()
    options = dict(fixture.options)
    if fixture.writer == "binary_writer":
        from litdata.streaming.writer import BinaryWriter

        writer = BinaryWriter(str(out), **options)
        for i, sample in enumerate(ex.source_samples(fixture.name)):
            writer[i] = to_litdata(sample)
        writer.done()
        writer.merge()
        return
    from litdata import TokensLoader, optimize

    tokens = options.pop("tokens", False)
    options.pop("numpy", None)
    n_inputs = ex.TOKEN_SEQUENCES if tokens else fixture.count
    optimize(
        fn=produce,
        inputs=[(fixture.name, i) for i in range(n_inputs)],
        output_dir=str(out),
        item_loader=TokensLoader() if tokens else None,
        verbose=False,
        **options,
    )


def build(name: str) -> dict[str, Any]:
    """(Re)write fixture ``name``, check it with LitData, store ``litdata-read.json``."""
    from read_with_litdata import read_dataset

    fixture = ex.FIXTURES[name]
    out = ex.fixture_dir(name)
    if out.exists():
        shutil.rmtree(out)
    write_fixture(fixture, out)
    dump = read_dataset(out, fixture.item_loader)
    want = [canonical(s) for s in ex.expected_samples(name)]
    for key in ("getitem", "iter"):
        diff = first_difference(want, dump[key], f"{name}.{key}")
        if diff:
            raise AssertionError(f"LitData read-back differs from expected.py: {diff}")
    if dump["len"] != fixture.count:
        raise AssertionError(f"{name}: len {dump['len']} != {fixture.count}")
    stored = {
        "litdata_version": dump["litdata_version"],
        "len": dump["len"],
        "getitem": dump["getitem"],
        "iter_equals_getitem": dump["iter"] == dump["getitem"],
    }
    (out / "litdata-read.json").write_text(
        json.dumps(stored, sort_keys=True, ensure_ascii=False) + "\n"
    )
    return json.loads((out / "index.json").read_text())


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="fixtures to rebuild (default: all)")
    args = parser.parse_args(argv)
    # LitData's optimize deletes $TMPDIR/chunks and $TMPDIR/data: give it a private TMPDIR.
    scratch = tempfile.mkdtemp(prefix="litdata-fixtures-")
    os.environ["TMPDIR"] = scratch
    tempfile.tempdir = None
    try:
        ensure_media()
        for name in args.names or list(ex.FIXTURES):
            index = build(name)
            files = sorted(p.name for p in ex.fixture_dir(name).iterdir())
            print(
                f"{name}: {len(index['chunks'])} chunks, "
                f"data_format={index['config']['data_format']}, files={files}"
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    total = sum(p.stat().st_size for p in ex.FIXTURES_ROOT.rglob("*") if p.is_file())
    print(f"total fixture size: {total} bytes")
    if total > MAX_TOTAL_BYTES:
        print(f"WARNING: fixtures exceed {MAX_TOTAL_BYTES} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
