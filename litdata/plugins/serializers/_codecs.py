"""torchcodec, found lazily: it imports only where FFmpeg's shared libraries are installed."""

from __future__ import annotations

import importlib
from types import ModuleType

from litdata.core.imports import pip_install

__all__ = ["torchcodec_module"]

_failures: dict[str, str] = {}


def torchcodec_module(
    name: str, *, extra: str, purpose: str, required: bool = True
) -> ModuleType | None:
    """Import ``torchcodec.<name>`` (``"decoders"``, ``"encoders"``).

    torchcodec raises ``OSError``/``RuntimeError`` rather than ``ImportError`` when FFmpeg's
    libraries are missing; both are turned into one ``ImportError`` that says what to install.

    Args:
        name: The torchcodec submodule.
        extra: The litdata extra that installs it (``"audio"``, ``"video"``).
        purpose: What needs it, for the message.
        required: Return ``None`` instead of raising when it cannot be imported.

    Raises:
        ImportError: torchcodec (or FFmpeg) is missing and ``required`` is true.
    """
    module = f"torchcodec.{name}"
    if module not in _failures:
        try:
            return importlib.import_module(module)
        except (ImportError, OSError, RuntimeError) as error:
            _failures[module] = f"{type(error).__name__}: {error}".splitlines()[0]
    if not required:
        return None
    raise ImportError(
        f"{purpose} needs torchcodec with FFmpeg's shared libraries ({_failures[module]}). "
        f"Install them with: {pip_install(extra)} and your system's FFmpeg "
        f"(e.g. apt-get install ffmpeg, or conda install ffmpeg)."
    )
