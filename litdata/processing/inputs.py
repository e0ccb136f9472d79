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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from litdata.core import config
from litdata.core.location import Location
from litdata.core.publish import publishing

__all__ = ["InputDownloads"]


@dataclass
class InputDownloads:
    """Downloads the files an input names under ``input_dir`` into a local folder.

    Attributes:
        input_dir: The remote folder whose files inputs name.
        threads: How many of an input's files are fetched at once.
    """

    input_dir: Location
    threads: int = 2
    _folder: Path | None = field(default=None, repr=False)

    @property
    def folder(self) -> Path:
        """This process's local folder for downloaded inputs."""
        if self._folder is None:
            digest = hashlib.md5(self.input_dir.url.encode(), usedforsecurity=False).hexdigest()
            self._folder = config.cache_root() / "inputs" / f"{digest}-{os.getpid()}"
            self._folder.mkdir(parents=True, exist_ok=True)
        return self._folder

    def _target(self, url: str) -> Path:
        return self.folder / url[len(self.input_dir.url) + 1 :]

    def _fetch(self, url: str) -> None:
        target = self._target(url)
        target.parent.mkdir(parents=True, exist_ok=True)
        with publishing(target) as temporary:
            self.input_dir.storage.download(url, str(temporary))

    def _urls(self, value: Any, found: list[str]) -> None:
        if isinstance(value, str):
            if value.startswith(self.input_dir.url + "/"):
                found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                self._urls(item, found)
        elif isinstance(value, list | tuple):
            for item in value:
                self._urls(item, found)

    def _map(self, value: Any) -> Any:
        if isinstance(value, str):
            prefix = self.input_dir.url + "/"
            return str(self._target(value)) if value.startswith(prefix) else value
        if isinstance(value, dict):
            return {key: self._map(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            mapped = [self._map(item) for item in value]
            return mapped if isinstance(value, list) else type(value)(mapped)
        return value

    def localise(self, item: Any) -> tuple[Any, list[Path]]:
        """``item`` with its files' URLs replaced by local copies, fetched ``threads`` at once."""
        urls: list[str] = []
        self._urls(item, urls)
        unique = list(dict.fromkeys(urls))
        if len(unique) > 1 and self.threads > 1:
            with ThreadPoolExecutor(min(self.threads, len(unique))) as pool:
                list(pool.map(self._fetch, unique))
        else:
            for url in unique:
                self._fetch(url)
        return self._map(item), [self._target(url) for url in unique]

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn``, called with local copies of the input's files (removed when it returns)."""

        def call(item: Any, *args: Any, **kwargs: Any) -> Any:
            local, fetched = self.localise(item)
            try:
                result = fn(local, *args, **kwargs)
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
