"""``litdata inspect PATH_OR_URL``: what a dataset holds, and a few of its samples decoded."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from litdata.cli.storage_flags import add_storage_flags, in_cli_terms, storage_options
from litdata.core.errors import LitdataError
from litdata.core.formats import ForeignFormat
from litdata.core.registry.hooks import default_item_loader
from litdata.core.units import format_size
from litdata.engine.boundary.resolve import resolve
from litdata.engine.opening import Dataset, open_dataset
from litdata.engine.reader import DatasetReader

__all__ = ["add_parser", "count", "describe", "run", "summary"]

_EXAMPLES = """examples:
  litdata inspect ./my-dataset
  litdata inspect s3://my-bucket/my-dataset --samples 5"""
_MAX_TEXT = 60
_MAX_SAMPLE_TEXT = 200


def _short(text: str, limit: int) -> str:
    return text[:limit] + "..." if len(text) > limit else text


def add_parser(commands: Any) -> None:
    """Register the ``inspect`` command."""
    parser = commands.add_parser(
        "inspect",
        help="show a dataset's size, chunks, codecs, sample structure and a few samples",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", help="the dataset directory or URL")
    add_storage_flags(parser)
    parser.add_argument(
        "--samples", type=count, default=2, help="samples to decode (default 2; 0 for none)"
    )
    parser.set_defaults(run=run)


def count(text: str) -> int:
    """A command-line count: a whole number, 0 or more.

    Raises:
        argparse.ArgumentTypeError: It is not one (argparse prints it as a usage error).
    """
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count (0, 1, 2...)")
    return value


def describe(value: Any) -> str:
    """A sample's structure with each leaf's type (and shape, dtype or short value)."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{key!r}: {describe(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list | tuple):
        inner = ", ".join(describe(item) for item in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    kind = type(value).__name__
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        return f"{kind}(shape={tuple(shape)}, dtype={value.dtype})"
    size = getattr(value, "size", None)
    if kind.endswith("ImageFile") or (size is not None and hasattr(value, "mode")):
        return f"{kind}(size={size}, mode={value.mode})"
    return f"{kind} {_short(repr(value), _MAX_TEXT)}"


def _written_by(dataset: Dataset) -> str:
    index = dataset.index
    if isinstance(dataset.format, ForeignFormat):
        return f"{dataset.format.written_by} (read as it is, no checksums)"
    if index.format_version is None:
        return "LitData (no litdata format version, no checksums)"
    needs = {kind: sorted(names) for kind, names in index.plugins.items() if names}
    extra = f"; needs plugins {needs}" if needs else ""
    return f"litdata, format version {index.format_version}{extra}"


def summary(dataset: Dataset) -> list[tuple[str, str]]:
    """What `inspect` prints about a dataset: ``(name, value)`` rows."""
    index, config = dataset.index, dataset.index.config
    stored = sum(chunk.chunk_bytes for chunk in index.chunks)
    target = (
        f"{config.chunk_bytes:,} bytes"
        if config.chunk_bytes
        else f"{config.chunk_size} items"
        if config.chunk_size
        else "-"
    )
    encryption = config.encryption or {}
    foreign = isinstance(dataset.format, ForeignFormat)
    codecs = {chunk.extra.get("compression") for chunk in index.chunks}
    per_chunk = sorted(codec for codec in codecs if isinstance(codec, str))
    compression = config.compression or (
        f"{', '.join(per_chunk)} (per chunk)" if per_chunk else "none"
    )
    as_stored = "as stored" if foreign else "uncompressed"
    return [
        ("location", dataset.location.url),
        ("format", getattr(dataset.format, "name", type(dataset.format).__name__)),
        ("items", f"{index.num_items:,}"),
        ("chunks", f"{len(index.chunks):,} (target {target} each)"),
        ("bytes", f"{stored:,} ({format_size(stored)} {as_stored})"),  # not a plugin name
        ("compression", compression),
        ("encryption", ", ".join(f"{k}={v}" for k, v in encryption.items()) or "none"),
        ("item loader", config.item_loader or ("-" if foreign else default_item_loader(index))),
        ("leaf codecs", ", ".join(config.data_format) or "-"),
        ("checksums", "yes" if any(c.checksum for c in index.chunks) else "no"),
        ("keys", "yes" if index.keys else "no"),
        ("written by", _written_by(dataset)),
    ]


def run(args: argparse.Namespace) -> int:
    """Print the dataset's summary and ``--samples`` decoded samples."""
    try:
        dataset = open_dataset(resolve(args.path, storage_options=storage_options(args)))
    except (LitdataError, OSError, ValueError) as error:
        print(f"error: {in_cli_terms(str(error))}", file=sys.stderr)
        return 1
    rows = summary(dataset)
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    shown = min(args.samples, dataset.index.num_items)
    if not shown:
        return 0
    if dataset.index.config.encryption:
        print("samples: not shown, the dataset is encrypted (pass its key in Python).")
        return 0
    try:
        reader = DatasetReader(args.path, dataset=dataset)
    except (LitdataError, OSError) as error:
        print(f"error: the dataset cannot be read: {error}", file=sys.stderr)
        return 1
    try:
        for position in range(shown):
            sample = reader[position]
            if position == 0:
                print(f"{'structure':<{width}}  {describe(sample)}")
            print(f"sample {position}: {_short(repr(sample), _MAX_SAMPLE_TEXT)}")
    except LitdataError as error:
        print(f"error: sample {position} cannot be decoded: {error}", file=sys.stderr)
        return 1
    finally:
        reader.close()
    return 0
