"""The fault-injection suite: each test provokes one fault and records a row of the fault table.

Run it with ``make faults`` (with ``tests/hostile``): see :mod:`fault_table` for the table.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.fault_table import pytest_configure, pytest_terminal_summary, record  # noqa: F401


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Callable[[int], Path]]:
    """Mount small tmpfs filesystems (a full disk on demand); skips where mounting is refused."""
    mounted: list[Path] = []

    def mount(size: int) -> Path:
        target = tmp_path / f"disk-{len(mounted)}"
        target.mkdir()
        result = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here: {result.stderr.strip()}")
        mounted.append(target)
        return target

    yield mount
    for target in mounted:
        subprocess.run(["umount", "-l", str(target)], check=False)
