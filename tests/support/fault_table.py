"""The fault table: each fault-injection or hostile-input test records one row.

``tests/faults`` (faults of processes, disks and servers) and ``tests/hostile`` (datasets
crafted by an attacker or a clumsy user) both record rows; ``make faults`` runs both and prints
one table with, for every fault, what litdata did, how many samples were lost, duplicated or
wrong (all must be 0), and how long it took to report the error. Every test also asserts the
zeros.

- *lost*: samples that should be in the result (a dataset, what a reader delivered before the
  error, an existing dataset that must stay intact) and are not;
- *duplicated*: samples delivered (or written) twice;
- *wrong*: samples delivered with a value that is not the one written.

Each suite's ``conftest.py`` imports the hooks and the ``record`` fixture from here; whichever
suite prints first empties the rows file, so the table appears once.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

ROWS = "LITDATA_FAULT_ROWS"


def pytest_configure(config: pytest.Config) -> None:
    """Name the rows file, in the controlling process before workers start (they inherit it)."""
    os.environ.setdefault(
        ROWS, str(Path(tempfile.gettempdir(), f"faults-{uuid.uuid4().hex}.jsonl"))
    )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the rows recorded by every worker, once."""
    path = Path(os.environ.get(ROWS, ""))
    if not path.is_file() or hasattr(terminalreporter.config, "workerinput"):
        return
    rows = [json.loads(line) for line in path.read_text().splitlines() if line]
    path.unlink()
    rows.sort(key=lambda row: row["fault"])
    write = terminalreporter.write_line
    write("")
    write("| fault | what happened | lost | duplicated | wrong | time to error |")
    write("|---|---|---:|---:|---:|---:|")
    for row in rows:
        seconds = "-" if row["seconds"] is None else f"{row['seconds']:.2f} s"
        write(
            f"| {row['fault']} | {row['happened']} | {row['lost']} | {row['duplicated']} | "
            f"{row['wrong']} | {seconds} |"
        )


class Recorder:
    """Records one fault's row (and asserts nothing was lost, duplicated or wrong)."""

    def __init__(self, fault: str) -> None:
        self.fault = fault
        self._start = time.monotonic()
        self.seconds: float | None = None

    def start(self) -> None:
        """The fault happens now: time to the error counts from here."""
        self._start = time.monotonic()

    def failed(self) -> None:
        """The error was reported now."""
        self.seconds = time.monotonic() - self._start

    def __call__(
        self, happened: str, *, lost: int = 0, duplicated: int = 0, wrong: int = 0
    ) -> None:
        row = {
            "fault": self.fault,
            "happened": happened,
            "lost": lost,
            "duplicated": duplicated,
            "wrong": wrong,
            "seconds": self.seconds,
        }
        with open(os.environ[ROWS], "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")
        assert (lost, duplicated, wrong) == (0, 0, 0), row


@pytest.fixture
def record(request: pytest.FixtureRequest) -> Recorder:
    """A recorder named after the test's ``fault`` marker (or its name)."""
    marker = request.node.get_closest_marker("fault")
    return Recorder(marker.args[0] if marker else request.node.name)
