"""Chunk file names: ``chunk-<rank>-<index>[.<codec>].bin``, as LitData names them."""

from __future__ import annotations

__all__ = [
    "chunk_filename",
    "decompressed_filename",
    "parse_chunk_filename",
    "parse_chunk_generation",
]


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
