"""``repr()`` of the streaming classes: where they read, how much, in which order, with whom."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["length_of", "render"]


def length_of(sized: Any) -> int | str:
    """``len(sized)``, or why it has none (an endless mixture)."""
    try:
        return len(sized)
    except (TypeError, ValueError) as error:
        return f"<none: {error}>"


def render(name: str, fields: Iterable[tuple[str, Any]], children: Sequence[Any] = ()) -> str:
    """``Name(key=value, ...)``, then one indented line per child.

    Args:
        name: The class name.
        fields: ``(name, value)`` pairs; string values are quoted.
        children: Objects whose ``repr()`` goes under it (a composition's datasets).
    """
    text = ", ".join(
        f"{key}={value!r}" if isinstance(value, str) else f"{key}={value}" for key, value in fields
    )
    lines = [f"{name}({text})"]
    for position, child in enumerate(children):
        nested = repr(child).replace("\n", "\n    ")
        lines.append(f"  [{position}] {nested}")
    return "\n".join(lines)
