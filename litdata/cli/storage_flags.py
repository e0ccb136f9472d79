"""``--storage-option KEY=VALUE``: credentials and endpoints for the commands that take a URL.

The storage backends' messages speak Python (``storage_options={'anon': True}``); the commands
print them in their own terms (``--storage-option anon=true``).
"""

from __future__ import annotations

import argparse
import re
from typing import Any

__all__ = ["add_storage_flags", "in_cli_terms", "storage_options"]

_RULES = (
    (re.compile(r"storage_options=\{'(\w+)': True\}"), r"--storage-option \1=true"),
    (re.compile(r"storage_options=\{'(\w+)': '([^']*)'\}"), r"--storage-option \1=\2"),
    (re.compile(r"\ba profile_name in session_options\b"), "set AWS_PROFILE"),
    (re.compile(r"\bin storage_options\b"), "as --storage-option KEY=VALUE flags"),
    (re.compile(r"\bstorage_options\b"), "--storage-option KEY=VALUE"),
)


def add_storage_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--storage-option KEY=VALUE`` (repeatable) to a command that takes a URL."""
    parser.add_argument(
        "--storage-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=(
            "an option of the URL's storage backend, repeatable: credentials, endpoint "
            "(--storage-option endpoint_url=http://127.0.0.1:9000 --storage-option anon=true); "
            "default: the cloud's environment variables"
        ),
    )


def _value(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    return text


def storage_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ``--storage-option`` flags as ``storage_options`` (``None`` when none is given).

    Raises:
        ValueError: A flag is not ``KEY=VALUE``.
    """
    options: dict[str, Any] = {}
    for flag in args.storage_option:
        key, equals, value = flag.partition("=")
        if not equals or not key:
            raise ValueError(
                f"--storage-option {flag!r} is not KEY=VALUE "
                f"(e.g. --storage-option endpoint_url=http://127.0.0.1:9000)"
            )
        options[key.strip()] = _value(value)
    return options or None


def in_cli_terms(message: str) -> str:
    """``message`` with ``storage_options`` spelled as this command's ``--storage-option``."""
    for pattern, replacement in _RULES:
        message = pattern.sub(replacement, message)
    return message
