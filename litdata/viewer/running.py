"""``Viewer``: the viewer's server running in a thread of its own, and ``serve`` for the CLI."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Sequence

from aiohttp import web

from litdata.viewer.server import build_app
from litdata.viewer.source import Source

__all__ = ["Viewer", "serve"]

#: Seconds the server gets to start before that is an error.
_START_TIMEOUT = 30.0


class Viewer:
    """A running viewer: its :attr:`url`; :meth:`close` stops it.

    Args:
        sources: The datasets it shows.
        host: The address it binds (loopback unless you say otherwise).
        port: The port (0: any free one).
        provenance_dir: A loader's provenance log, for the training-step page.
    """

    def __init__(
        self,
        sources: Sequence[Source],
        host: str = "127.0.0.1",
        port: int = 0,
        provenance_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.sources = list(sources)
        self._app = build_app(self.sources, provenance_dir)
        self._loop = asyncio.new_event_loop()
        self._runner = web.AppRunner(self._app, access_log=None)
        self._started = threading.Event()
        self._error: BaseException | None = None
        self.host = host
        self.port = port
        self._thread = threading.Thread(target=self._run, name="litdata-view", daemon=True)
        self._thread.start()
        if not self._started.wait(_START_TIMEOUT):
            raise TimeoutError(f"the viewer did not start on {host}:{port} in {_START_TIMEOUT} s")
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._start())
        except BaseException as error:  # reported to the caller of __init__
            self._error = error
            self._started.set()
            return
        self._started.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._runner.cleanup())
        self._loop.close()

    async def _start(self) -> None:
        await self._runner.setup()
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = int(sock.getsockname()[1])
        await web.SockSite(self._runner, sock).start()

    @property
    def url(self) -> str:
        """Where the viewer answers."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def close(self) -> None:
        """Stop the server and close the datasets."""
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        for source in self.sources:
            source.reader.close()

    def __enter__(self) -> Viewer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Viewer({self.url})"

    def _repr_html_(self) -> str:
        return f'<a href="{self.url}" target="_blank" rel="noopener">litdata view: {self.url}</a>'


def serve(viewer: Viewer) -> None:
    """Block until Ctrl-C, then stop ``viewer``."""
    try:
        threading.Event().wait()
    finally:
        viewer.close()
