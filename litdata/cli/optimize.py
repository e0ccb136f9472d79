"""``litdata optimize MODULE:FN --inputs ... --output DIR``: ``optimize()`` from a shell."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from litdata.core.errors import LitdataError

__all__ = ["add_parser", "load_callable", "run"]

_EXAMPLES = """examples:
  litdata optimize my_module:to_sample --inputs a.jpg b.jpg --output ./out
  litdata optimize prep.py:to_sample --inputs-fn prep.py:list_inputs --output s3://b/out \\
      --chunk-bytes 64MB --num-workers 8 --compression zstd

FN receives one input and returns (or yields) samples, as with litdata.optimize().
--inputs are passed to FN as strings; --inputs-fn names a function returning the inputs."""


def add_parser(commands: Any) -> None:
    """Register the ``optimize`` command."""
    parser = commands.add_parser(
        "optimize",
        help="write a dataset: call MODULE:FN on each input (litdata.optimize)",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("fn", help="the function: package.module:fn or path/to/file.py:fn")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--inputs", nargs="+", help="the inputs, passed to FN as strings")
    source.add_argument("--inputs-fn", help="MODULE:FN returning the inputs (any values)")
    parser.add_argument("--output", required=True, help="the output directory or URL")
    parser.add_argument("--chunk-bytes", help="target chunk size, e.g. 64MB")
    parser.add_argument("--chunk-size", type=int, help="target items per chunk")
    parser.add_argument("--num-workers", type=int, help="worker processes (default: CPUs)")
    parser.add_argument("--compression", help="a codec, e.g. zstd")
    parser.add_argument("--mode", choices=["append", "overwrite"], help="an existing output")
    parser.set_defaults(run=run)


#: ``optimize()`` arguments in Python spelling (``mode='append'``), as this command's flags.
_ARGUMENT = re.compile(
    r"\b(mode|chunk_bytes|chunk_size|num_workers|compression)=(['\"]?)([^'\"\s,;)]+)\2"
)


def as_flags(message: str) -> str:
    """``message`` with ``optimize()``'s arguments spelled as flags: ``--mode append``."""
    return _ARGUMENT.sub(lambda m: f"--{m.group(1).replace('_', '-')} {m.group(3)}", message)


def _import(name: str, spec: str) -> ModuleType:
    """Import the user's module ``name``; its failure in one line, with the file and line.

    Raises:
        ValueError: The module does not exist, has a syntax error, or failed as it ran.
    """
    try:
        return importlib.import_module(name)
    except SyntaxError as error:
        raise ValueError(f"{spec!r}: cannot import {name}: SyntaxError: {error}.") from None
    except Exception as error:  # anything the module's own code raised while it ran
        missing = getattr(error, "name", None)
        if isinstance(error, ModuleNotFoundError) and (name + ".").startswith(f"{missing}."):
            raise ValueError(f"{spec!r}: cannot import {name} ({error}).") from None
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename[:1] != "<"]
        where = f" ({frames[-1].filename}, line {frames[-1].lineno})" if frames else ""
        raise ValueError(
            f"{spec!r}: importing {name} failed: {type(error).__name__}: {error}{where}."
        ) from None


def load_callable(spec: str) -> Callable[..., Any]:
    """The function ``module:name`` (a dotted module, or a ``.py`` file) names.

    Raises:
        ValueError: ``spec`` is not ``MODULE:NAME``, or does not name a callable.
    """
    module_name, _, name = spec.rpartition(":")
    if not module_name or not name:
        raise ValueError(f"{spec!r} is not MODULE:FN (e.g. my_module:to_sample).")
    if module_name.endswith(".py"):
        path = Path(module_name).resolve()
        if not path.is_file():
            raise ValueError(f"{spec!r}: there is no file {path}.")
        sys.path.insert(0, str(path.parent))  # workers import it by its module name
        module = _import(path.stem, spec)
    else:
        sys.path.insert(0, os.getcwd())
        module = _import(module_name, spec)
    found = getattr(module, name, None)
    if not callable(found):
        raise ValueError(f"{spec!r}: {module.__name__} has no function {name!r}.")
    return found  # type: ignore[no-any-return]


def run(args: argparse.Namespace) -> int:
    """Run ``optimize`` with the command's options."""
    from litdata.processing.optimize import optimize

    try:
        fn = load_callable(args.fn)
        inputs = list(args.inputs) if args.inputs else list(load_callable(args.inputs_fn)())
        options = {
            "chunk_bytes": args.chunk_bytes,
            "chunk_size": args.chunk_size,
            "num_workers": args.num_workers,
            "compression": args.compression,
            "mode": args.mode,
        }
        if not args.chunk_bytes and not args.chunk_size:
            options["chunk_bytes"] = "64MB"
        optimize(fn, inputs, args.output, **{k: v for k, v in options.items() if v is not None})
    except (LitdataError, ValueError, OSError) as error:
        print(f"error: {as_flags(str(error))}", file=sys.stderr)
        return 1
    return 0
