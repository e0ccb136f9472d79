"""``litdata trace convert LOG -o trace.json.gz``: a trace log as a Chrome / Perfetto trace."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from litdata.observe import tracer as tracing
from litdata.observe.convert import convert_trace

__all__ = ["add_parser", "run"]

_EXAMPLES = """examples:
  litdata trace convert litdata_debug.log -o trace.json.gz
  litdata trace convert litdata_debug.log -o io.json --cat download,read,delete

Open the result at https://ui.perfetto.dev (or chrome://tracing)."""


def add_parser(commands: Any) -> None:
    """Register the ``trace`` command and its ``convert`` action."""
    parser = commands.add_parser(
        "trace",
        help="convert an enable_tracer() log into a Chrome / Perfetto trace",
        description="Work with logs written by litdata.observe.enable_tracer().",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    convert = actions.add_parser(
        "convert",
        help="log -> Chrome trace JSON (.json or .json.gz)",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    convert.add_argument("log", help="the trace log (LITDATA_LOG_FILE, litdata_debug.log)")
    convert.add_argument(
        "-o", "--output", default="litdata_trace.json.gz", help="the trace (.gz: compressed)"
    )
    convert.add_argument("--cat", help="keep only these categories, comma-separated")
    convert.add_argument(
        "--no-complete", action="store_true", help="keep begin/end events as they are"
    )
    convert.add_argument("--quiet", action="store_true", help="print only the summary line")
    convert.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Convert the log; print a one-line summary.

    Exit 1, writing nothing, when the log is missing or holds no trace event.
    """
    try:
        categories = sorted(tracing.categories_for(None, args.cat)) if args.cat else None
    except ValueError as error:  # an unknown category: the message lists the known ones
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        summary = convert_trace(
            args.log, args.output, categories=categories, complete=not args.no_complete
        )
    except FileNotFoundError:
        print(
            f"error: no trace log at {args.log}. Record one with "
            f"litdata.observe.enable_tracer(log_file=...) first.",
            file=sys.stderr,
        )
        return 1
    except ValueError as error:  # not a trace log: nothing written
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(summary.line())
    if not args.quiet:
        print(f"Wrote {args.output}; open it at https://ui.perfetto.dev")
    return 0
