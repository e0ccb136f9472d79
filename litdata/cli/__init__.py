"""The ``litdata`` command line: ``litdata <command> ...``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from litdata.__about__ import __version__
from litdata.cli import (
    bench,
    cache,
    inspect,
    optimize,
    plugins,
    provenance,
    trace,
    verify,
    view,
)
from litdata.cli.interruption import interrupted, watching

__all__ = ["INTERRUPTED", "main"]

_COMMANDS = (plugins, inspect, verify, cache, optimize, bench, trace, provenance, view)

_EXAMPLES = """examples:
  litdata inspect ./my-dataset          what a dataset holds
  litdata verify s3://bucket/data       check every chunk
  litdata bench ./my-dataset            samples/s per num_workers
  litdata trace convert litdata_debug.log -o trace.json.gz
  litdata provenance ./ids --step 1200  the samples of a training step
  litdata view ./my-dataset             browse it in a local web page

Run `litdata COMMAND --help` for a command's options. Exit status: 0 success, 1 a problem
was found or the command failed, 2 wrong usage, 130 stopped with Ctrl-C."""


#: The exit status of a command stopped with Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``litdata`` command line and return its exit status.

    Ctrl-C stops the command with one line on stderr and exit status 130, never a traceback,
    even when a worker it killed first made the command fail otherwise.
    """
    try:
        with watching():
            status = _run(argv)
            if interrupted():  # a command that reported a worker's death as its failure
                raise KeyboardInterrupt
            return status
    except BaseException as error:
        if not (isinstance(error, KeyboardInterrupt) or interrupted()):
            raise
        print("\ninterrupted (Ctrl-C): the command stopped.", file=sys.stderr)
        return INTERRUPTED


def _run(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(
        prog="litdata",
        description="Inspect, verify, write and benchmark litdata datasets; manage the cache.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
