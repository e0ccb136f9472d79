"""``litdata cache path|clear [URL]``: where the chunk cache is, and emptying it."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path
from typing import Any

from litdata.core import config
from litdata.core.cache.directory import cache_home
from litdata.core.storage.location import resolve

__all__ = ["add_parser", "run"]


_EXAMPLES = """examples:
  litdata cache path                      # the cache root
  litdata cache du                        # what each cached dataset takes
  litdata cache clear s3://bucket/data    # one dataset's cached chunks
  litdata cache clear                     # everything (stale locks included)"""


def add_parser(commands: Any) -> None:
    """Register the ``cache`` command."""
    parser = commands.add_parser(
        "cache",
        help="show, measure or clear the local chunk cache",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "action",
        choices=["path", "clear", "du"],
        help="print the path, delete, or show the disk usage per dataset",
    )
    parser.add_argument(
        "dataset", nargs="?", help="only this dataset's cache (its URL or path), not all of it"
    )
    parser.add_argument("--cache-dir", help="the cache root (default: LITDATA_CACHE_DIR)")
    parser.set_defaults(run=run)


def _size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def run(args: argparse.Namespace) -> int:
    """Print the cache folder, or delete it (all of it, or one dataset's)."""
    root = Path(args.cache_dir).expanduser() if args.cache_dir else config.cache_root()
    target = root if args.dataset is None else cache_home(resolve(args.dataset).url, str(root))
    if args.action == "path":
        print(target)
        return 0
    if args.action == "du":
        return _disk_usage(target)
    if not target.exists():
        print(f"{target}: nothing cached.")
        return 0
    size = _size(target)
    shutil.rmtree(target)
    print(f"Removed {target} ({size / 1e6:,.1f} MB).")
    if args.dataset is None:
        os.makedirs(root, exist_ok=True)
    return 0


def _disk_usage(target: Path) -> int:
    """Print the size of each dataset's cache folder under ``target``, largest first."""
    if not target.is_dir():
        print(f"{target}: nothing cached.")
        return 0
    folders = [path for path in target.iterdir() if path.is_dir()]
    rows = sorted(((_size(path), path) for path in folders), reverse=True)
    loose = sum(path.stat().st_size for path in target.iterdir() if path.is_file())
    for size, path in rows:
        chunks = sum(1 for item in path.rglob("chunk-*.bin") if item.is_file())
        print(f"{size / 1e6:>12,.1f} MB  {chunks:>6} chunks  {path}")
    total = sum(size for size, _ in rows) + loose
    print(f"{total / 1e6:>12,.1f} MB  total in {target}")
    return 0
