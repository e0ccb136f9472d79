"""Running the peers (LitData 0.2.76, MosaicML Streaming) in their own interpreter.

``LITDATA_PEER_PYTHON`` names the peers' python (``bench/peers.py`` builds that venv). The
peer runs without our ``PYTHONPATH`` and in a scratch folder, never the repository: our
``litdata`` package would shadow LitData's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from support.cli_process import cli_env

#: The peers' python, or ``None`` (the peer tests then skip).
PEER = os.environ.get("LITDATA_PEER_PYTHON")
#: The marks of a module of peer tests.
MARKS = [
    pytest.mark.peer,
    pytest.mark.skipif(
        not PEER,
        reason="needs real LitData 0.2.76: set LITDATA_PEER_PYTHON (README, 'Tests')",
    ),
]


def run_peer(
    *argv: object, cwd: str | os.PathLike[str], env: Mapping[str, str] | None = None
) -> str:
    """Run ``<peer python> *argv`` in ``cwd``; its standard output (it must succeed)."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(PEER), *map(str, argv)],
        env={**environment, **(env or {})},
        cwd=Path(cwd),
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout


def last_json(output: str) -> object:
    """The JSON a script printed on its last line."""
    return json.loads(output.splitlines()[-1])


def run_ours(*argv: object, cwd: str | os.PathLike[str]) -> str:
    """Run ``<this python> *argv`` in ``cwd`` with this checkout's litdata; its output."""
    return subprocess.run(
        [sys.executable, *map(str, argv)],
        cwd=cwd,
        env=cli_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
