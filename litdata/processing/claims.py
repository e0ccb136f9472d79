"""Workers of one ``optimize`` agree on the dataset's config at their first chunk, not at the end.

Each worker, once it has written its first chunk, records the config it writes with
(``<output>/.claims/<rank>.json``) and compares it with those the other workers recorded. It
writes its own before it reads the others', so of two workers that disagree, the later one
always sees the earlier one's record and stops the run, naming the field, the two kinds and
the fix, before the rest of the work is done. The folder is removed when the run ends.
"""

from __future__ import annotations

import json
import os
import re

from litdata.core.index import DatasetConfig, DatasetIndex, parse_index
from litdata.core.location import Location
from litdata.engine.items.widening import agreed_config, config_conflict

__all__ = ["CLAIMS_DIR", "ConfigClaims"]

CLAIMS_DIR = ".claims"
_CLAIM = re.compile(r"^(\d+)\.json$")


class ConfigClaims:
    """The configs the workers of one run write with, recorded at their first chunk.

    Args:
        output: The dataset's location.
    """

    def __init__(self, output: Location) -> None:
        self.output = output
        self.directory = output.child(CLAIMS_DIR)

    def claim(self, rank: int, config: DatasetConfig) -> None:
        """Record ``rank``'s config, then check it agrees with every other worker's.

        Raises:
            DatasetFormatError: Another worker writes the dataset with a config this one's
                does not agree with; the message names the field, both kinds and the fix.
        """
        own = f"{rank}.json"
        self.directory.write(own, json.dumps(DatasetIndex(config, ()).to_json()).encode())
        for name in sorted(self.directory.storage.list(self.directory.url)):
            match = _CLAIM.match(name)
            if match is None or name == own:
                continue
            source = self.directory.join(name)
            other = parse_index(json.loads(self.directory.read(name)), source).config
            if agreed_config(other, config) is None:
                raise config_conflict(
                    config,
                    other,
                    mine=f"worker {rank}",
                    theirs=f"worker {match.group(1)}",
                    where=self.output.url,
                )

    def remove(self) -> None:
        """Delete the records (when the run ends, whichever way)."""
        try:
            names = self.directory.storage.list(self.directory.url)
        except FileNotFoundError:  # no worker got to its first chunk
            return
        for name in names:
            self.directory.storage.delete(self.directory.join(name))
        local = self.directory.local_path
        if local is not None and os.path.isdir(local):
            os.rmdir(local)
