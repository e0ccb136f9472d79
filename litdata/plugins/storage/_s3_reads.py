"""``ReadClient``: the blocking botocore client that S3 bodies are read through.

s3fs's client runs on fsspec's event loop: each body arrives there as aiohttp's fresh
buffers, which were copied again into ours, and every read crossed threads twice. Reads of
chunks and parts instead go through botocore's own (blocking) client, in the thread that
asked, its body read from the socket into a reused buffer (:mod:`._resumed`). It is made
from the same filesystem settings as s3fs's client (credentials, endpoint, ``client_kwargs``,
the botocore ``config`` with the module's timeouts and single attempt, ``anon``, a profile,
``s3_additional_kwargs`` and requester-pays), and its errors are translated as s3fs
translates its own, so both clients fail alike.

One botocore session per filesystem settings, made on first use (credentials resolved then,
as s3fs resolves them for each filesystem): a forked DataLoader worker finds its parent's
session and models parsed and only makes a client of its own, in ~10 ms instead of ~60 ms;
clients (their connections) are never shared across a fork.
"""

from __future__ import annotations

import os
import threading
from typing import Any

__all__ = ["ReadClient"]

#: One lock per process (a lock held in the parent at a fork would stay held in the child).
_LOCKS: dict[int, threading.Lock] = {}


def _lock() -> threading.Lock:
    """This process's lock for making sessions and clients (botocore's are not thread-safe)."""
    return _LOCKS.setdefault(os.getpid(), threading.Lock())


def _client_arguments(fs: Any) -> dict[str, Any]:
    """``create_client``'s arguments for what ``fs`` (an s3fs filesystem) was told."""
    from botocore import UNSIGNED
    from botocore.config import Config

    client = dict(fs.client_kwargs)
    given = {
        "aws_access_key_id": fs.key,
        "aws_secret_access_key": fs.secret,
        "aws_session_token": fs.token,
        "endpoint_url": fs.endpoint_url,
    }
    arguments = {k: v for k, v in given.items() if v is not None and k not in client}
    arguments.setdefault("use_ssl", client.pop("use_ssl", fs.use_ssl))
    known = set(getattr(Config, "OPTION_DEFAULTS", {}))
    settings = {
        "connect_timeout": fs.connect_timeout,
        "read_timeout": fs.read_timeout,
        **fs.config_kwargs,
    }
    settings = {k: v for k, v in settings.items() if not known or k in known}
    if fs.anon:
        settings["signature_version"] = UNSIGNED
        for secret in ("aws_access_key_id", "aws_secret_access_key", "aws_session_token"):
            arguments.pop(secret, None)
            client.pop(secret, None)
    return {**arguments, **client, "config": Config(**settings)}


class ReadClient:
    """This process's blocking client for one S3 filesystem's settings.

    Args:
        fs: The s3fs filesystem whose settings it takes.
        loader: Makes the botocore data loader for a data path (shared models).
    """

    def __init__(self, fs: Any, loader: Any) -> None:
        self._session_settings = dict(fs.kwargs)
        self._session: Any = None
        self._arguments = _client_arguments(fs)
        #: Arguments s3fs adds to every request (where the operation takes them).
        self._added = {**fs.s3_additional_kwargs, **fs.req_kw}
        self._loader = loader
        self._client: Any = None
        self._pid = 0
        self._accepted: dict[str, set[str]] = {}

    @property
    def client(self) -> Any:
        """This process's botocore client (made on first use, again in a forked child)."""
        client = self._client
        if client is not None and self._pid == os.getpid():
            return client
        with _lock():
            if self._client is None or self._pid != os.getpid():
                self._client = self._made_session().create_client("s3", **self._arguments)
                self._pid = os.getpid()
            return self._client

    def _made_session(self) -> Any:
        """The botocore session (made the first time), its models shared (``loader``)."""
        if self._session is None:
            import botocore.session

            session = botocore.session.Session(**self._session_settings)
            data_path = session.get_config_variable("data_path")
            session.register_component("data_loader", self._loader(data_path))
            self._session = session
        return self._session

    def call(self, method: str, **kwargs: Any) -> dict[str, Any]:
        """One request, its botocore error turned into s3fs's (``FileNotFoundError``...)."""
        from s3fs.errors import translate_boto_error

        client = self.client
        try:
            return dict(getattr(client, method)(**self._with_added(client, method, kwargs)))
        except Exception as error:
            translated = translate_boto_error(error)
            if translated is error:
                raise
            raise translated from error

    def _with_added(self, client: Any, method: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` and the added arguments that ``method`` takes."""
        if not self._added:
            return kwargs
        accepted = self._accepted.get(method)
        if accepted is None:
            operation = client.meta.method_to_api_mapping[method]
            shape = client.meta.service_model.operation_model(operation).input_shape
            accepted = self._accepted[method] = set(shape.members)
        extra = {k: v for k, v in self._added.items() if k in accepted and v is not None}
        return {**extra, **kwargs}
