"""Read a dataset with Lightning AI's LitData and dump every sample canonically (JSON).

Run under the peers' interpreter (``$LITDATA_PEER_PYTHON``, see ``bench/peers.py``)::

    python tests/interop/read_with_litdata.py DATASET_DIR OUT_JSON [--item-loader tokens:BLOCK]

The dataset is copied to a scratch directory first: LitData decompresses whole-file zstd
chunks *inside* a local dataset directory on first read, which would otherwise modify the input.
The output is ``{"litdata_version", "len", "getitem": [...], "iter": [...]}`` where each entry is
``canonical.canonical(sample)``; ``getitem`` comes from ``ds[i]`` for ``i in range(len(ds))`` on a
freshly opened dataset, ``iter`` from one unshuffled single-process pass over another instance.
"""

from __future__ import annotations

import argparse
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

from canonical import canonical  # noqa: E402


def _scratch() -> Path:
    base = os.environ.get("LITDATA_INTEROP_SCRATCH")
    root = Path(base) if base else None
    if root is not None:
        root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="litdata-interop-", dir=root))


def register_namedtuples() -> None:
    """Register the fixtures' namedtuple with LitData's pytree (for the ``namedtuple`` fixture)."""
    from expected import POINT_TYPE_NAME, Point

    from litdata.utilities import _pytree

    if Point not in _pytree.SUPPORTED_NODES:
        _pytree._register_namedtuple(Point, serialized_type_name=POINT_TYPE_NAME)


def make_item_loader(spec: str | None) -> Any:
    """``None`` → default (PyTreeLoader); ``tokens:BLOCK`` → ``TokensLoader(block_size=BLOCK)``."""
    if not spec:
        return None
    kind, _, arg = spec.partition(":")
    if kind != "tokens" or not arg.isdigit():
        raise SystemExit(f"unknown --item-loader {spec!r} (expected tokens:BLOCK)")
    from litdata import TokensLoader

    return TokensLoader(block_size=int(arg))


def read_dataset(dataset_dir: str | Path, item_loader: str | None = None) -> dict[str, Any]:
    """Read every sample of ``dataset_dir`` with LitData (from a private copy); return the dump."""
    import litdata
    from litdata import StreamingDataset

    if "site-packages" not in Path(litdata.__file__).parts:
        raise RuntimeError(f"expected Lightning AI's LitData, imported {litdata.__file__}")

    register_namedtuples()
    scratch = _scratch()
    try:
        copy = scratch / "dataset"
        shutil.copytree(dataset_dir, copy)
        ds = StreamingDataset(str(copy), item_loader=make_item_loader(item_loader))
        n = len(ds)
        getitem = [canonical(ds[i]) for i in range(n)]
        ds_iter = StreamingDataset(str(copy), item_loader=make_item_loader(item_loader))
        iterated = [canonical(sample) for sample in ds_iter]
        return {
            "litdata_version": litdata.__version__,
            "len": n,
            "getitem": getitem,
            "iter": iterated,
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset_dir")
    parser.add_argument("out_json")
    parser.add_argument(
        "--item-loader", default=None, help="tokens:BLOCK for a TokensLoader dataset"
    )
    args = parser.parse_args(argv)
    if not os.environ.get("TMPDIR"):
        os.environ["TMPDIR"] = str(_scratch())
    dump = read_dataset(args.dataset_dir, args.item_loader)
    Path(args.out_json).write_text(
        json.dumps(dump, sort_keys=True, indent=None, ensure_ascii=False)
    )
    print(f"{args.dataset_dir}: {dump['len']} samples -> {args.out_json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
