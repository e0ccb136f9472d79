"""The ``litdata`` command line: ``litdata <command> ...``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from litdata.__about__ import __version__
from litdata.cli import cache, plugins, verify

__all__ = ["main"]

_COMMANDS = (cache, plugins, verify)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``litdata`` command line and return its exit status."""
    parser = argparse.ArgumentParser(
        prog="litdata", description="Inspect litdata plugins, datasets and the chunk cache."
    )
    parser.add_argument("--version", action="version", version=f"litdata {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in _COMMANDS:
        command.add_parser(commands)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
