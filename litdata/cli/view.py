"""``litdata view DATASET``: a local web viewer over a dataset (see docs/view.md)."""

from __future__ import annotations

import argparse
import os
import sys
import webbrowser
from typing import Any

from litdata.core.errors import LitdataError

__all__ = ["add_parser", "run"]

_EXAMPLES = """examples:
  litdata view ./my-dataset                     serve on 127.0.0.1, a free port
  litdata view s3://bucket/ds --port 8080 --open
  litdata view ./enc --key key.json             password from $LITDATA_KEY_PASSWORD
  litdata view ./ds --provenance ./ids          with the training-step page
  litdata view --raw ./photos                   a folder of files, one item each

The viewer has no login: it binds loopback unless --host says otherwise."""


def add_parser(commands: Any) -> None:
    """Register the ``view`` command."""
    parser = commands.add_parser(
        "view",
        help="browse a dataset's samples, chunks and statistics in a local web page",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="+", metavar="DATASET", help="dataset directories or URLs")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("--open", action="store_true", help="open the page in a browser")
    parser.add_argument("--cache-dir", help="where fetched chunks are kept")
    parser.add_argument(
        "--key",
        help="an encrypted dataset's key file (saved by its encryptor's .save()); its "
        "password is read from $LITDATA_KEY_PASSWORD",
    )
    parser.add_argument("--provenance", help="a loader's provenance log (provenance_dir)")
    parser.add_argument(
        "--raw", action="store_true", help="folders of files (images, audio...), one item each"
    )
    parser.set_defaults(run=run)


def _encryptor(path: str, datasets: list[str]) -> Any:
    from litdata.core.registry import kinds
    from litdata.engine.opening import open_dataset

    password = os.environ.get("LITDATA_KEY_PASSWORD")
    if password is None:
        raise ValueError("--key needs the key's password in $LITDATA_KEY_PASSWORD")
    settings = open_dataset(datasets[0]).index.config.encryption or {}
    algorithm = settings.get("algorithm")
    if not isinstance(algorithm, str):
        raise ValueError(f"{datasets[0]} is not encrypted; drop --key")
    return kinds.encryption.load(algorithm).load(path, password)  # type: ignore[attr-defined]


def run(args: argparse.Namespace) -> int:
    """Serve the viewer until Ctrl-C."""
    from litdata.viewer import start
    from litdata.viewer.running import serve

    try:
        encryption = None if args.key is None else _encryptor(args.key, args.paths)
        viewer = start(
            args.paths if len(args.paths) > 1 else args.paths[0],
            host=args.host,
            port=args.port,
            encryption=encryption,
            cache_dir=args.cache_dir,
            provenance_dir=args.provenance,
            raw=args.raw,
        )
    except (LitdataError, OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"litdata view: {viewer.url}  (Ctrl-C stops it)", flush=True)
    if args.open:
        webbrowser.open(viewer.url)
    serve(viewer)
    return 0
