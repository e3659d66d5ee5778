"""A small static-and-scripted HTTP server on loopback, for the demo and for tests.

It serves a directory (``index.html`` for folder URLs) plus optional scripted routes, and keeps a log of
every request it answered (time, method, path, headers) so a test can check what a crawler fetched and
when. It binds ``127.0.0.1`` on port 0 by default, so parallel runs never collide.

A reply that carries an ``ETag`` or ``Last-Modified`` header answers conditional requests as RFC 9110
says (``If-None-Match``, else ``If-Modified-Since``: 304 without a body), and ``bytes_sent`` counts every
byte written to clients (status lines, headers, bodies), so a test can measure what a crawl transferred.
"""

from __future__ import annotations

import mimetypes
import posixpath
from email.utils import parsedate_to_datetime
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["Reply", "LoggedRequest", "SiteServer"]


@dataclass(frozen=True)
class Reply:
    """What a scripted route answers."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    #: seconds to wait before answering (slow servers)
    delay_s: float = 0.0


@dataclass(frozen=True)
class LoggedRequest:
    at: float  # time.time() when the request arrived
    method: str
    path: str  # path with query, as requested
    headers: dict[str, str] = field(default_factory=dict)


#: a route is either a fixed Reply or a function of (path_with_query, headers) -> Reply
Route = Reply | Callable[[str, dict[str, str]], Reply]


class SiteServer:
    """Serve ``root`` (a folder, may be None) and ``routes`` on ``host:port`` in a background thread.

    Use as a context manager, or call ``start()`` / ``stop()``. ``url`` is the base URL ("http://127.0.0.1:PORT").
    Routes are matched on the exact path (without query) first, then on the path with query.
    """

    def __init__(
        self,
        root: str | Path | None = None,
        routes: dict[str, Route] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        quiet: bool = True,
    ) -> None:
        self.root = Path(root).resolve() if root is not None else None
        self.routes: dict[str, Route] = dict(routes or {})
        self.host = host
        self.port = port
        self.quiet = quiet
        self.log: list[LoggedRequest] = []
        self.bytes_sent = 0  # every byte written to clients: status lines, headers and bodies
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------------
    def start(self) -> "SiteServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "boilerstrip-demo/1"

            def setup(self) -> None:
                super().setup()
                self.wfile = _CountingWriter(self.wfile, server)

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                server._answer(self, head_only=False)

            def do_HEAD(self) -> None:  # noqa: N802
                server._answer(self, head_only=True)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                if not server.quiet:
                    super().log_message(format, *args)

        self._httpd = ThreadingHTTPServer((self.host, self.port), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="SiteServer", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "SiteServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # -- log helpers ---------------------------------------------------------------------------------
    def requested_paths(self) -> list[str]:
        with self._lock:
            return [entry.path for entry in self.log]

    def hits(self, path: str) -> list[LoggedRequest]:
        with self._lock:
            return [entry for entry in self.log if entry.path == path or urlsplit(entry.path).path == path]

    # -- answering -----------------------------------------------------------------------------------
    def _answer(self, handler: BaseHTTPRequestHandler, head_only: bool) -> None:
        headers = {key.lower(): value for key, value in handler.headers.items()}
        with self._lock:
            self.log.append(LoggedRequest(time.time(), handler.command, handler.path, headers))
        reply = _conditional(self._reply_for(handler.path, headers), headers)
        if reply.delay_s:
            time.sleep(reply.delay_s)
        try:
            handler.send_response(reply.status)
            names = {name.lower() for name, _ in reply.headers}
            for name, value in reply.headers:
                handler.send_header(name, value)
            if "content-length" not in names and "transfer-encoding" not in names:
                handler.send_header("Content-Length", str(len(reply.body)))
            handler.end_headers()
            if not head_only:
                handler.wfile.write(reply.body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def reset_counts(self) -> None:
        with self._lock:
            self.log.clear()
            self.bytes_sent = 0

    def _count(self, size: int) -> None:
        with self._lock:
            self.bytes_sent += size

    def _reply_for(self, raw_path: str, headers: dict[str, str]) -> Reply:
        path = urlsplit(raw_path).path
        route = self.routes.get(path, self.routes.get(raw_path))
        if route is not None:
            return route(raw_path, headers) if callable(route) else route
        if self.root is None:
            return _not_found()
        return self._static(unquote(path))

    def _static(self, path: str) -> Reply:
        assert self.root is not None
        rel = posixpath.normpath(path).lstrip("/")
        target = (self.root / rel).resolve()
        if self.root not in target.parents and target != self.root:
            return _not_found()
        if target.is_dir():
            if not path.endswith("/"):
                return Reply(301, b"", (("Location", path + "/"),))
            target = target / "index.html"
        if not target.is_file():
            return _not_found()
        ctype = _content_type(target)
        return Reply(200, target.read_bytes(), (("Content-Type", ctype),))


def _content_type(path: Path) -> str:
    if path.suffix == ".gz":
        return "application/gzip"
    guessed, _ = mimetypes.guess_type(path.name)
    ctype = guessed or "application/octet-stream"
    if ctype.startswith("text/") or ctype in ("application/xml", "application/javascript"):
        ctype += "; charset=utf-8"
    return ctype


def _not_found() -> Reply:
    return Reply(404, b"<html><body><h1>Not found</h1></body></html>", (("Content-Type", "text/html"),))


class _CountingWriter:
    """The handler's output stream, counting what it writes into the server's ``bytes_sent``."""

    def __init__(self, raw: object, server: SiteServer) -> None:
        self._raw = raw
        self._server = server

    def write(self, data: bytes) -> int:
        self._server._count(len(data))
        return self._raw.write(data)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._raw, name)


def _weak(tag: str) -> str:
    tag = tag.strip()
    return tag[2:] if tag.startswith("W/") else tag


def _conditional(reply: Reply, headers: dict[str, str]) -> Reply:
    """304 Not Modified for a 200 reply whose validators match the request's (RFC 9110 section 13)."""
    if reply.status != 200:
        return reply
    have = {name.lower(): value for name, value in reply.headers}
    etag, modified = have.get("etag"), have.get("last-modified")
    not_modified = False
    if "if-none-match" in headers:
        wanted = [_weak(t) for t in headers["if-none-match"].split(",")]
        not_modified = etag is not None and ("*" in wanted or _weak(etag) in wanted)
    elif "if-modified-since" in headers and modified:
        try:
            not_modified = parsedate_to_datetime(modified) <= parsedate_to_datetime(headers["if-modified-since"])
        except (TypeError, ValueError):
            not_modified = False
    if not not_modified:
        return reply
    kept = tuple((n, v) for n, v in reply.headers if n.lower() in ("etag", "last-modified", "cache-control", "expires"))
    return Reply(304, b"", kept + (("Content-Length", "0"),), reply.delay_s)
