"""A local stand-in for the Hugging Face Hub: serves folders as dataset repos over HTTP.

Run as ``python hub_server.py ROOT PORT``: every ``ROOT/<org>/<name>/`` folder is the dataset
repo ``<org>/<name>`` at one revision (``main``), answered on the URLs the Hub's clients use
(``huggingface_hub``'s ``HfApi`` and ``HfFileSystem``, so ``hf://`` paths work unchanged with
``HF_ENDPOINT`` pointing here):

- ``GET /api/datasets/<repo>[/revision/<rev>]``: the repo's info (its commit ``sha``, files);
- ``GET /api/datasets/<repo>/tree/<rev>[/<path>]``: a folder's entries (``?recursive=true``);
- ``POST /api/datasets/<repo>/paths-info/<rev>``: the entries of the given ``paths``;
- ``GET``/``HEAD /datasets/<repo>/resolve/<rev>/<path>``: a file, whole or a ``Range`` of it.

Every request is logged on stdout (``METHOD path authorization range``), which tests count.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SHA = "0" * 39 + "1"
_API = re.compile(r"^/api/datasets/([^/]+/[^/]+)(?:/(revision|tree|paths-info)/([^/]+)(/.*)?)?$")
_RESOLVE = re.compile(r"^/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")


def _entry(repo: Path, path: Path) -> dict[str, Any]:
    relative = path.relative_to(repo).as_posix()
    if path.is_dir():
        oid = hashlib.sha1(relative.encode()).hexdigest()  # noqa: S324
        return {"type": "directory", "oid": oid, "path": relative}
    size = path.stat().st_size
    oid = hashlib.sha1(f"{relative}:{size}".encode()).hexdigest()  # noqa: S324
    return {"type": "file", "oid": oid, "size": size, "path": relative}


class Hub(BaseHTTPRequestHandler):
    """Answers the Hub's API and resolve URLs from the folders under ``server.root``."""

    protocol_version = "HTTP/1.1"

    @property
    def root(self) -> Path:
        return Path(self.server.root)  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:
        del format, args

    def _log(self) -> None:
        auth = self.headers.get("Authorization", "-").replace(" ", ":")
        print(self.command, self.path, auth, self.headers.get("Range", "-"), flush=True)

    def _json(self, data: Any, status: int = 200) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Repo-Commit", SHA)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _missing(self, what: str) -> None:
        body = json.dumps({"error": f"{what} not found"}).encode()
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Error-Code", "EntryNotFound")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _repo(self, name: str) -> Path | None:
        repo = self.root / name
        return repo if repo.is_dir() else None

    def do_GET(self) -> None:
        self._log()
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        path = urllib.parse.unquote(url.path)
        api = _API.match(path)
        if api:
            self._api(api, query)
            return
        resolve = _RESOLVE.match(path)
        if resolve:
            self._file(resolve)
            return
        self._missing(path)

    do_HEAD = do_GET

    def do_POST(self) -> None:
        self._log()
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode()
        api = _API.match(urllib.parse.unquote(urllib.parse.urlsplit(self.path).path))
        repo = self._repo(api.group(1)) if api else None
        if api is None or repo is None or api.group(2) != "paths-info":
            self._missing(self.path)
            return
        if self.headers.get("Content-Type", "").startswith("application/json"):
            paths = json.loads(body).get("paths", [])
        else:
            paths = urllib.parse.parse_qs(body).get("paths", [])
        found = [_entry(repo, repo / p) for p in paths if (repo / p).exists()]
        self._json(found)

    def _api(self, match: re.Match[str], query: dict[str, list[str]]) -> None:
        repo = self._repo(match.group(1))
        if repo is None:
            self._missing(f"Repository {match.group(1)}")
            return
        kind, inside = match.group(2), (match.group(4) or "").strip("/")
        if kind in (None, "revision"):
            files = sorted(p for p in repo.rglob("*") if p.is_file())
            siblings = [{"rfilename": p.relative_to(repo).as_posix()} for p in files]
            self._json({"id": match.group(1), "sha": SHA, "private": False, "siblings": siblings})
            return
        folder = repo / inside
        if not folder.is_dir():
            self._missing(f"Folder {inside}")
            return
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        children = folder.rglob("*") if recursive else folder.iterdir()
        self._json([_entry(repo, p) for p in sorted(children)])

    def _file(self, match: re.Match[str]) -> None:
        repo = self._repo(match.group(1))
        target = repo / match.group(3) if repo is not None else None
        if target is None or not target.is_file():
            self._missing(f"Entry {match.group(3)}")
            return
        data = target.read_bytes()
        start, end, status = 0, len(data), 200
        wanted = re.match(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
        if wanted:
            first, last = wanted.groups()
            if first:
                start, end = int(first), min(len(data), int(last) + 1 if last else len(data))
            else:  # a suffix: the last N bytes
                start = max(0, len(data) - int(last))
            status = 206
        entry = _entry(repo, target)  # type: ignore[arg-type]
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", f'"{entry["oid"]}"')
        self.send_header("X-Repo-Commit", SHA)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data[start:end])


def main() -> None:
    """Serve ``sys.argv[1]`` on port ``sys.argv[2]`` of 127.0.0.1 until killed."""
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Hub)
    server.root = os.path.abspath(sys.argv[1])  # type: ignore[attr-defined]
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
