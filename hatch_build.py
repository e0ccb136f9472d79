"""Build step: compile the vision region decoder (litdata/vision/region.c) into a shared library.

It needs a C compiler and libjpeg-turbo's headers (``libjpeg62-turbo-dev`` on Debian,
``libjpeg-turbo-devel`` on Fedora). Where either is missing the build goes on without it and
``ld.vision`` crops decode whole images instead (a warning says so); nothing else depends on it.
The library has no Python API (ctypes loads it), so one build serves every Python version.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("litdata/vision/region.c")
TARGET = Path("litdata/vision/_ldregion.so")


def compile_region(root: Path) -> bool:
    """Compile ``SOURCE`` into ``TARGET`` under ``root``; False (with a warning) where it cannot."""
    compiler = shlex.split(os.environ.get("CC", "cc"))
    command = [
        *compiler,
        "-O2",
        "-shared",
        "-fPIC",
        "-o",
        str(root / TARGET),
        str(root / SOURCE),
        "-ljpeg",
    ]
    try:
        subprocess.run(command, check=True, capture_output=True, text=True)  # noqa: S603
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", "") or str(error)
        print(
            f"litdata: the vision region decoder was not built ({shlex.join(command)}: "
            f"{detail.strip()}); install a C compiler and libjpeg-turbo's headers "
            "(libjpeg62-turbo-dev) and reinstall for faster crops.",
            file=sys.stderr,
        )
        return False
    return True


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compiles the region decoder for wheels and editable installs alike."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Build the library; a wheel that carries it is tagged for this platform."""
        if self.target_name != "wheel" or not compile_region(Path(self.root)):
            return
        build_data["artifacts"].append(TARGET.as_posix())
        if version != "editable":  # no Python API inside: any Python 3 on this platform
            platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
            build_data["pure_python"] = False
            build_data["tag"] = f"py3-none-{platform}"
