"""Remote file inputs: downloaded before ``fn`` sees them, when ``input_dir`` is given.

``optimize(fn, inputs, ..., input_dir="s3://bucket/raw")`` replaces every string in an input
(at any depth of dicts, lists and tuples) that names a file under ``input_dir`` by the path of a
local copy, downloaded just before ``fn`` is called and removed just after. Without
``input_dir``, inputs reach ``fn`` as they are (URLs included), for an ``fn`` that opens URLs
itself.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from litdata.core import config
from litdata.core.storage.location import Location
from litdata.core.storage.publish import publishing

__all__ = ["InputDownloads"]


@dataclass
class InputDownloads:
    """Downloads the files an input names under ``input_dir`` into a local folder.

    Attributes:
        input_dir: The remote folder whose files inputs name.
    """

    input_dir: Location
    _folder: Path | None = field(default=None, repr=False)

    @property
    def folder(self) -> Path:
        """This process's local folder for downloaded inputs."""
        if self._folder is None:
            digest = hashlib.md5(self.input_dir.url.encode(), usedforsecurity=False).hexdigest()
            self._folder = config.cache_root() / "inputs" / f"{digest}-{os.getpid()}"
            self._folder.mkdir(parents=True, exist_ok=True)
        return self._folder

    def _local(self, url: str, fetched: list[Path]) -> str:
        relative = url[len(self.input_dir.url) + 1 :]
        target = self.folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        with publishing(target) as temporary:
            self.input_dir.storage.download(url, str(temporary))
        fetched.append(target)
        return str(target)

    def _map(self, value: Any, fetched: list[Path]) -> Any:
        if isinstance(value, str):
            prefix = self.input_dir.url + "/"
            return self._local(value, fetched) if value.startswith(prefix) else value
        if isinstance(value, dict):
            return {key: self._map(item, fetched) for key, item in value.items()}
        if isinstance(value, list | tuple):
            mapped = [self._map(item, fetched) for item in value]
            return mapped if isinstance(value, list) else type(value)(mapped)
        return value

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn``, called with local copies of the input's files (removed when it returns)."""

        def call(item: Any, *args: Any) -> Any:
            fetched: list[Path] = []
            try:
                result = fn(self._map(item, fetched), *args)
                if hasattr(result, "__next__"):  # a generator: keep the files while it runs
                    result = list(result)
                return result
            finally:
                for path in fetched:
                    path.unlink(missing_ok=True)

        return call

    def clean(self) -> None:
        """Remove this process's download folder."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
