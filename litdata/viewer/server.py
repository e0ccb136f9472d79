"""The viewer's web server: the pages, their two static files and the JSON API under ``/api/``.

Built on aiohttp's server: it is already installed with the S3 stack (s3fs runs on it), it
serves static files and JSON with one dependency, and it runs in a thread of its own beside a
notebook's event loop. Every request is a GET; no parameter names a file (datasets are named
by their position, ``ds=0``); responses carry a strict Content-Security-Policy; the server
answers only to a loopback ``Host`` (a web page elsewhere cannot reach it by DNS rebinding).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from importlib import resources
from typing import Any

from aiohttp import web

from litdata.viewer.cells import FULL_TEXT, as_array
from litdata.viewer.cost import Cost
from litdata.viewer.images import FULL_SIDE, ImageRefused, heat_map, picture, sniff
from litdata.viewer.search import search
from litdata.viewer.source import MAX_PAGE, Source
from litdata.viewer.stats import Statistics
from litdata.viewer.steps import training_step

__all__ = ["CSP", "build_app"]

logger = logging.getLogger(__name__)

#: Scripts, styles and pictures from this server only; nothing inline, nothing framed.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "media-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
#: Bytes of audio or video one answer sends.
MAX_MEDIA = 64 << 20
#: Characters of a key to look up.
MAX_KEY = 1024
#: Indices one filter returns (the grid pages through them).
MAX_FILTERED = 10_000
_STATIC = {"app.js": "text/javascript", "app.css": "text/css"}
_SOURCES: web.AppKey[list[Source]] = web.AppKey("sources")
_STATS: web.AppKey[dict[int, Statistics]] = web.AppKey("stats")
_TASKS: web.AppKey[set[asyncio.Task[None]]] = web.AppKey("tasks")
_PROVENANCE: web.AppKey[str | None] = web.AppKey("provenance")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class _Refused(Exception):
    """A request the API answers with an error (400, or ``status``)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _hostname(host: str) -> str:
    """``host`` without its port: ``127.0.0.1``, ``localhost``, ``[::1]``."""
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.split(":", 1)[0]


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    if _hostname(request.host) not in _LOOPBACK_HOSTS:
        response: web.StreamResponse = web.json_response(
            {"error": f"host {request.host!r} refused: the viewer answers on loopback only"},
            status=403,
        )
    else:
        try:
            response = await handler(request)
        except web.HTTPException:
            raise
        except _Refused as error:
            response = web.json_response({"error": str(error)}, status=error.status)
        except Exception as error:  # the server stays up whatever one request meets
            logger.exception("viewer request %s failed", request.path_qs)
            response = web.json_response({"error": f"{type(error).__name__}: {error}"}, status=500)
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cache-Control"] = "no-store"
    return response


def _int(request: web.Request, name: str, default: int | None = None, low: int = 0) -> int:
    text = request.query.get(name)
    if text is None:
        if default is None:
            raise _Refused(f"missing parameter {name!r}")
        return default
    try:
        value = int(text)
    except ValueError:
        raise _Refused(f"parameter {name!r} must be a whole number, not {text[:40]!r}") from None
    if value < low:
        raise _Refused(f"parameter {name!r} must be at least {low}, not {value}")
    return value


def _source(request: web.Request) -> tuple[int, Source]:
    sources = request.app[_SOURCES]
    number = _int(request, "ds", 0)
    if number >= len(sources):
        raise _Refused(f"no dataset {number}: the viewer shows {len(sources)}", 404)
    return number, sources[number]


def _index(request: web.Request, source: Source, name: str = "i") -> int:
    index = _int(request, name)
    if index >= len(source):
        raise _Refused(f"no sample {index}: the dataset has {len(source):,}", 404)
    return index


async def _page(_: web.Request) -> web.StreamResponse:
    html = resources.files("litdata.viewer").joinpath("static/index.html").read_bytes()
    return web.Response(body=html, content_type="text/html", charset="utf-8")


async def _static(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    if name not in _STATIC:
        raise web.HTTPNotFound()
    body = resources.files("litdata.viewer").joinpath(f"static/{name}").read_bytes()
    return web.Response(body=body, content_type=_STATIC[name], charset="utf-8")


async def _no_icon(_: web.Request) -> web.StreamResponse:
    return web.Response(status=204)


async def _datasets(request: web.Request) -> web.StreamResponse:
    sources = request.app[_SOURCES]
    return web.json_response(
        {
            "datasets": [{"ds": n, "name": s.name, "items": len(s)} for n, s in enumerate(sources)],
            "provenance": request.app[_PROVENANCE] is not None,
        }
    )


async def _overview(request: web.Request) -> web.StreamResponse:
    _, source = _source(request)
    found = await asyncio.to_thread(source.overview)
    return web.json_response({**found, "cost": source.opened.as_json()})


async def _chunks(request: web.Request) -> web.StreamResponse:
    _, source = _source(request)
    found = await asyncio.to_thread(source.chunk_map)
    return web.json_response({**found, "cost": Cost(in_place=source.store.in_place).as_json()})


def _indices(request: web.Request, source: Source) -> list[int]:
    listed = request.query.get("indices")
    if listed is None:
        start = _int(request, "start", 0)
        count = min(_int(request, "count", 50, low=1), MAX_PAGE)
        return list(range(min(start, len(source)), min(start + count, len(source))))
    try:
        indices = [int(part) for part in listed.split(",") if part]
    except ValueError:
        raise _Refused("indices must be whole numbers separated by commas") from None
    if len(indices) > MAX_PAGE:
        raise _Refused(f"at most {MAX_PAGE} samples per request, not {len(indices)}")
    if any(not 0 <= index < len(source) for index in indices):
        raise _Refused(f"indices must lie in [0, {len(source)})", 404)
    return indices


async def _samples(request: web.Request) -> web.StreamResponse:
    _, source = _source(request)
    indices = _indices(request, source)
    cost = Cost(in_place=source.store.in_place)
    rows = await asyncio.to_thread(source.rows, indices, cost)
    return web.json_response({"rows": rows, "items": len(source), "cost": cost.as_json()})


async def _sample(request: web.Request) -> web.StreamResponse:
    _, source = _source(request)
    index = _index(request, source)
    cost = Cost(in_place=source.store.in_place)
    rows = await asyncio.to_thread(source.rows, [index], cost)
    return web.json_response({**rows[0], "cost": cost.as_json()})


def _cost_header(cost: Cost) -> str:
    return f"requests={cost.requests}; bytes={cost.bytes}"


async def _field(request: web.Request) -> web.StreamResponse:
    _, source = _source(request)
    index = _index(request, source)
    name = request.query.get("field", "")
    view = request.query.get("view", "thumb")
    cost = Cost(in_place=source.store.in_place)
    try:
        if view == "thumb":
            body, mime = await asyncio.to_thread(source.thumb, index, name, cost)
        else:
            value = await asyncio.to_thread(source.value, index, name, cost)
            body, mime = _render(value, view)
    except KeyError as error:
        raise _Refused(str(error.args[0] if error.args else error), 404) from None
    except ImageRefused as error:
        raise _Refused(f"sample {index} field {name!r}: {error}", 422) from None
    if mime == "application/json":
        return web.json_response({"text": body.decode(), "cost": cost.as_json()})
    response = web.Response(body=body, content_type=mime)
    response.headers["X-Litdata-Cost"] = _cost_header(cost)
    return response


def _render(value: Any, view: str) -> tuple[bytes, str]:
    if view == "full":
        return picture(value, FULL_SIDE)
    if view == "heat":
        array = as_array(value)
        if array is None or array.ndim != 2:  # noqa: PLR2004  # a plane
            raise ImageRefused("the field is not a 2-D array")
        return heat_map(array, FULL_SIDE // 4)
    if view == "text":
        if not isinstance(value, str):
            raise _Refused("the field is not text")
        return value[:FULL_TEXT].encode(), "application/json"
    if view == "media":
        if not isinstance(value, bytes | bytearray | memoryview):
            raise _Refused("the field is not encoded media")
        found = sniff(bytes(value[:16]))
        if found is None or found[0] not in ("audio", "video"):
            raise _Refused("the field is neither audio nor video")
        if len(value) > MAX_MEDIA:
            raise _Refused(f"{len(value):,} bytes of media is over the viewer's {MAX_MEDIA:,}", 422)
        return bytes(value), found[1]
    raise _Refused(f"view must be thumb, full, heat, text or media, not {view[:20]!r}")


async def _key(request: web.Request) -> web.StreamResponse:
    _, source = _source(request)
    key = request.query.get("key", "")
    if not key or len(key) > MAX_KEY:
        raise _Refused(f"a key lookup needs a key of 1 to {MAX_KEY} characters")
    cost = Cost(in_place=source.store.in_place)
    try:
        index = await asyncio.to_thread(source.find_key, key, cost)
    except KeyError as error:
        message = str(error.args[0]) if error.args else key
        raise _Refused(f"no sample has key {key!r} ({message})", 404) from None
    return web.json_response({"index": index, "cost": cost.as_json()})


async def _run_stats(stats: Statistics) -> None:
    while not stats.finished:
        await asyncio.to_thread(stats.step)


async def _stats(request: web.Request) -> web.StreamResponse:
    number, source = _source(request)
    jobs = request.app[_STATS]
    if number not in jobs:
        jobs[number] = Statistics(source)
        task = asyncio.get_running_loop().create_task(_run_stats(jobs[number]))
        request.app[_TASKS].add(task)
        task.add_done_callback(request.app[_TASKS].discard)
    return web.json_response(jobs[number].result())


async def _filter(request: web.Request) -> web.StreamResponse:
    number, _ = _source(request)
    stats = request.app[_STATS].get(number)
    if stats is None:
        raise _Refused("no statistics yet: ask /api/stats first", 409)
    bar = request.query.get("bar")
    try:
        indices = stats.matching(
            request.query.get("field", ""),
            request.query.get("metric"),
            None if bar is None else _int(request, "bar"),
            request.query.get("value"),
        )
    except (KeyError, IndexError) as error:
        raise _Refused(f"no such bar or value: {error}", 404) from None
    return web.json_response(
        {"indices": indices[:MAX_FILTERED], "count": len(indices), "whole": stats.whole}
    )


async def _search(request: web.Request) -> web.StreamResponse:
    _, source = _source(request)
    query = request.query.get("q", "")
    start = _int(request, "start", 0)
    try:
        found = await asyncio.to_thread(search, source, query, start)
    except ValueError as error:
        raise _Refused(str(error)) from None
    return web.json_response(found)


async def _step(request: web.Request) -> web.StreamResponse:
    directory = request.app[_PROVENANCE]
    if directory is None:
        raise _Refused("the viewer was started without a provenance log (provenance_dir=)", 404)
    step = _int(request, "step")
    epoch = _int(request, "epoch") if "epoch" in request.query else None
    sources = request.app[_SOURCES]
    try:
        found = await asyncio.to_thread(training_step, directory, step, epoch, sources)
    except (FileNotFoundError, ValueError, LookupError) as error:
        raise _Refused(str(error), 404) from None
    return web.json_response(found)


async def _stop_tasks(app: web.Application) -> None:
    tasks = app[_TASKS]
    for task in list(tasks):
        task.cancel()


def build_app(
    sources: Sequence[Source], provenance_dir: str | os.PathLike[str] | None = None
) -> web.Application:
    """The viewer's application over ``sources`` (and a provenance log, if given)."""
    app = web.Application(middlewares=[_guard], client_max_size=4096)
    app[_SOURCES] = list(sources)
    app[_STATS] = {}
    app[_TASKS] = set()
    app[_PROVENANCE] = None if provenance_dir is None else os.fspath(provenance_dir)
    app.on_shutdown.append(_stop_tasks)
    get = app.router.add_get
    get("/", _page)
    get("/static/{name}", _static)
    get("/favicon.ico", _no_icon)
    for path, handler in (
        ("datasets", _datasets),
        ("overview", _overview),
        ("chunks", _chunks),
        ("samples", _samples),
        ("sample", _sample),
        ("field", _field),
        ("key", _key),
        ("stats", _stats),
        ("filter", _filter),
        ("search", _search),
        ("step", _step),
    ):
        get(f"/api/{path}", handler)
    return app
