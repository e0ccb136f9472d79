"""``litdata plugins``: every plugin of every kind, and the distribution that provides it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from litdata.core.errors import PluginError
from litdata.core.registry import kinds
from litdata.core.registry.manager import get_plugin_manager, hook_origin

__all__ = ["add_parser", "run"]

#: The kind of the rows that list pluggy hook implementations.
HOOKS = "hooks"


def add_parser(commands: Any) -> None:
    """Register the ``plugins`` command."""
    parser = commands.add_parser("plugins", help="list installed plugins")
    parser.add_argument("--kind", choices=[*sorted(kinds.ALL), HOOKS], help="only this kind")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print one line per plugin: kind, name, provider and implementation."""
    rows = [("KIND", "NAME", "PROVIDED BY", "IMPLEMENTATION")]
    problems = []
    for kind, registry in sorted(kinds.ALL.items()):
        if args.kind and kind != args.kind:
            continue
        for name in registry.names():
            try:
                info = registry.info(name)
            except PluginError as error:
                problems.append(str(error))
                continue
            rows.append((kind, name, info.origin, info.target))
    if args.kind in (None, HOOKS):
        for plugin_name, plugin in get_plugin_manager().list_name_plugin():
            rows.append(
                (HOOKS, plugin_name, hook_origin(plugin_name), getattr(plugin, "__name__", ""))
            )
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    for row in rows:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
            + "  "
            + row[3]
        )
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0
