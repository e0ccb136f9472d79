"""Compression specs (``"zstd"``, ``"zstd:7"``, ``"lz4"``) and the chunk file names they imply."""

from __future__ import annotations

from collections.abc import Mapping

from litdata.core.protocols import Compressor
from litdata.core.registry import registries

__all__ = [
    "chunk_filename",
    "compressor_provider",
    "create_compressor",
    "decompressed_filename",
    "parse_chunk_filename",
]


def create_compressor(spec: str, providers: Mapping[str, str] | None = None) -> Compressor:
    """Instantiate the compressor for ``spec`` (``"name"`` or ``"name:level"``).

    Args:
        spec: The compression spec.
        providers: For a dataset being read, the distributions its index says provide its
            plugins (``{name: "dist version"}``), named in the error when one is missing.

    Raises:
        ValueError: The level is not an integer.
        UnknownPluginError: No compressor has that name.
    """
    name, _, level = spec.partition(":")
    provider = (providers or {}).get(name)
    if not level:
        return registries.compression.create(name, provider=provider)
    try:
        return registries.compression.create(name, int(level), provider=provider)
    except ValueError as error:
        if not level.lstrip("-").isdigit():
            raise ValueError(
                f"compression={spec!r}: the level after ':' must be an integer, e.g. 'zstd:7'."
            ) from error
        raise


def chunk_filename(rank: int, index: int, compression: str | None) -> str:
    """The chunk file name LitData uses: ``chunk-<rank>-<index>[.<compression>].bin``."""
    if compression:
        return f"chunk-{rank}-{index}.{compression}.bin"
    return f"chunk-{rank}-{index}.bin"


def parse_chunk_filename(name: str) -> tuple[int, int] | None:
    """The ``(rank, index)`` of a name ``chunk_filename`` builds, or ``None`` for other names."""
    if not (name.startswith("chunk-") and name.endswith(".bin")):
        return None
    rank, _, rest = name[len("chunk-") : -len(".bin")].partition("-")
    index, dot, infix = rest.partition(".")
    if not (rank.isdecimal() and index.isdecimal()) or (dot and not infix):
        return None
    return int(rank), int(index)


def decompressed_filename(filename: str, compression: str) -> str:
    """The name of a compressed chunk once decompressed (the ``.<compression>`` infix removed)."""
    suffix = f".{compression}.bin"
    if filename.endswith(suffix):
        return filename[: -len(suffix)] + ".bin"
    return filename + ".decompressed"


def compressor_provider(spec: str) -> str | None:
    """``"distribution version"`` of the compressor for ``spec`` when it is not litdata's own."""
    return registries.compression.provider(spec.partition(":")[0])
