"""``litdata cache path|clear [URL]``: where the chunk cache is, and emptying it."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from litdata.core import config
from litdata.core.units import format_size
from litdata.engine.boundary.resolve import resolve
from litdata.engine.cache.directory import cache_home, recorded_source

__all__ = ["add_parser", "run"]


_EXAMPLES = """examples:
  litdata cache path                      # the cache root
  litdata cache du                        # what each cached dataset takes
  litdata cache clear s3://bucket/data    # one dataset's cached chunks
  litdata cache clear                     # everything (stale locks included), once you confirm
  litdata cache clear --yes               # everything, without asking"""


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
    parser.add_argument(
        "--yes", "-y", action="store_true", help="clear the whole cache without asking first"
    )
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
    if args.dataset is None and not args.yes and not _confirmed(target, size):
        print(
            f"error: nothing removed. `litdata cache clear` without a dataset empties the whole "
            f"cache at {target}; answer y, or pass --yes (or name one dataset to clear).",
            file=sys.stderr,
        )
        return 1
    shutil.rmtree(target)
    print(f"Removed {target} ({format_size(size)}).")
    if args.dataset is None:
        os.makedirs(root, exist_ok=True)
    return 0


def _cached_chunk(item: Path, folder: Path) -> bool:
    """Whether ``item`` is a chunk file in ``folder`` (not a lock in a hidden folder)."""
    hidden = any(part.startswith(".") for part in item.relative_to(folder).parts)
    return not hidden and item.is_file()


def _confirmed(target: Path, size: int) -> bool:
    """Whether the user answers yes to emptying ``target`` (no answer, as from a script: no)."""
    print(f"Remove everything cached in {target} ({format_size(size)})? [y/N] ", end="", flush=True)
    answer = sys.stdin.readline().strip().lower()
    if not sys.stdin.isatty():
        print(answer)  # the answer read from a pipe, so that the transcript shows it
    return answer in ("y", "yes")


def _disk_usage(target: Path) -> int:
    """Print each dataset's cache folder under ``target`` (its size, chunks, which dataset)."""
    if not target.is_dir():
        print(f"{target}: nothing cached.")
        return 0
    home = recorded_source(target)
    folders = (  # hidden folders are the node's (connection slots), not a dataset's
        [target]
        if home
        else [path for path in target.iterdir() if path.is_dir() and not path.name.startswith(".")]
    )
    rows = sorted(((_size(path), path) for path in folders), reverse=True)
    loose = 0 if home else sum(path.stat().st_size for path in target.iterdir() if path.is_file())
    for size, path in rows:
        chunks = sum(1 for item in path.rglob("chunk-*") if _cached_chunk(item, path))
        source = recorded_source(path) or "(dataset not recorded)"
        print(f"{format_size(size):>10}  {chunks:>6} chunks  {source}  ({path.name})")
    total = sum(size for size, _ in rows) + loose
    print(f"{format_size(total):>10}  total in {target}")
    return 0
