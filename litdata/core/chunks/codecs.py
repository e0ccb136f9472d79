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
    "parse_chunk_generation",
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


def chunk_filename(rank: int, index: int, compression: str | None, generation: int = 0) -> str:
    """The chunk file name LitData uses: ``chunk-<rank>-<index>[.<compression>].bin``.

    A chunk rewritten by ``dataset_update`` takes ``-u<generation>`` after its index, so the
    previous file stays readable until the update after next.
    """
    stem = f"chunk-{rank}-{index}" + (f"-u{generation}" if generation else "")
    return f"{stem}.{compression}.bin" if compression else f"{stem}.bin"


def parse_chunk_filename(name: str) -> tuple[int, int] | None:
    """The ``(rank, index)`` of a name ``chunk_filename`` builds, or ``None`` for other names."""
    parsed = parse_chunk_generation(name)
    return None if parsed is None else parsed[:2]


def parse_chunk_generation(name: str) -> tuple[int, int, int] | None:
    """The ``(rank, index, generation)`` of a chunk file name, or ``None`` for other names."""
    if not (name.startswith("chunk-") and name.endswith(".bin")):
        return None
    rank, _, rest = name[len("chunk-") : -len(".bin")].partition("-")
    numbers, dot, infix = rest.partition(".")
    index, _, generation = numbers.partition("-u")
    valid = rank.isdecimal() and index.isdecimal() and (not generation or generation.isdecimal())
    if not valid or (dot and not infix) or numbers.endswith("-u"):
        return None
    return int(rank), int(index), int(generation or 0)


def decompressed_filename(filename: str, compression: str) -> str:
    """The name of a compressed chunk once decompressed (the ``.<compression>`` infix removed)."""
    suffix = f".{compression}.bin"
    if filename.endswith(suffix):
        return filename[: -len(suffix)] + ".bin"
    return filename + ".decompressed"


def compressor_provider(spec: str) -> str | None:
    """``"distribution version"`` of the compressor for ``spec`` when it is not litdata's own."""
    return registries.compression.provider(spec.partition(":")[0])
