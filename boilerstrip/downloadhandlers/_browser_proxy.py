"""The browser's only way out: a loopback HTTP proxy that checks the address every connection is made to.

Chromium is launched with this proxy (Playwright's ``proxy`` launch option, which also proxies loopback), so
every request it makes -- navigations, sub-requests, *every redirect hop* (which Playwright's request
interception does not see), iframes, WebSockets, service workers -- arrives here as ``CONNECT host:port``
(https, wss) or an absolute-URI request (http). The proxy resolves the host itself, asks ``refusal(host,
port, addresses)`` (the crawl's address rule: :func:`boilerstrip.rendering.scope.connect_refusal`), and
connects to an address it checked: a name that rebinds between a check and the connect gains nothing, as on
the HTTP path (``ScopedResolver``). A refused connection is answered ``403`` and counted by reason.

Plain asyncio on the crawler's event loop; one request per proxied http connection (the request and the
answer are both sent with ``Connection: close``), CONNECT tunnels are piped unchanged.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from urllib.parse import urlsplit

from boilerstrip.safety.addresses import parse_host_port, parse_ip_literal

__all__ = ["AddressCheckingProxy"]

logger = logging.getLogger(__name__)

#: a request head larger than this is refused (Chromium's own heads are a few KiB)
_MAX_HEAD_BYTES = 256 * 1024
_PIPE_CHUNK = 64 * 1024
_HOP_HEADERS = (b"connection", b"proxy-connection", b"keep-alive", b"proxy-authorization")


def _rewrite_head(lines: list[bytes], first: bytes) -> bytes:
    """``first`` as the request/status line, hop-by-hop headers dropped, ``Connection: close`` added."""
    kept = [first]
    for line in lines:
        name = line.split(b":", 1)[0].strip().lower()
        if name not in _HOP_HEADERS:
            kept.append(line)
    kept.append(b"Connection: close")
    return b"\r\n".join(kept) + b"\r\n\r\n"


class AddressCheckingProxy:
    def __init__(
        self,
        refusal: Callable[[str, int, list[str]], str | None],
        *,
        connect_timeout_s: float = 15.0,
        on_refused: Callable[[str, str], None] | None = None,
    ) -> None:
        """``refusal(host, port, addresses)``: None to allow, else a short reason. ``on_refused(reason,
        host_port)`` is told about every refusal (stats, logging)."""
        self.refusal = refusal
        self.connect_timeout_s = connect_timeout_s
        self.on_refused = on_refused
        self.refused: Counter = Counter()
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, host="127.0.0.1", port=0, limit=_MAX_HEAD_BYTES)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.url

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with suppress(BaseException):
                await task

    # -- one client connection ---------------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        upstream: asyncio.StreamWriter | None = None
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=self.connect_timeout_s)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ConnectionError):
                return
            lines = head[:-4].split(b"\r\n")
            parts = lines[0].split(b" ")
            if len(parts) != 3:
                await self._answer(writer, 400, "bad_request")
                return
            method, target, version = (p.decode("latin-1") for p in parts)
            if method.upper() == "CONNECT":
                try:
                    host, explicit_port = parse_host_port(target)  # the HTTP path's parser: one copy
                except ValueError:
                    await self._answer(writer, 400, "bad_request")
                    return
                port = explicit_port or 443
                path = None
            else:
                url = urlsplit(target)
                if url.scheme.lower() != "http" or not url.hostname:
                    await self._answer(writer, 400, "scheme")
                    return
                host, port = url.hostname, url.port or 80
                path = (url.path or "/") + (f"?{url.query}" if url.query else "")
            address, reason = await self._checked_address(host, port)
            if reason is not None:
                self.refused[reason] += 1
                if self.on_refused is not None:
                    self.on_refused(reason, f"{host}:{port}")
                await self._answer(writer, 403, reason)
                return
            try:
                up_reader, upstream = await asyncio.wait_for(
                    asyncio.open_connection(address, port), timeout=self.connect_timeout_s
                )
            except (OSError, asyncio.TimeoutError):
                await self._answer(writer, 502, "connect_failed")
                return
            if path is None:
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                await writer.drain()
                await self._pipe_both(reader, writer, up_reader, upstream)
                return
            upstream.write(_rewrite_head(lines[1:], f"{method} {path} {version}".encode("latin-1")))
            await upstream.drain()
            to_server = asyncio.ensure_future(self._pipe(reader, upstream))
            try:
                status_head = await up_reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                to_server.cancel()
                return
            status_lines = status_head[:-4].split(b"\r\n")
            writer.write(_rewrite_head(status_lines[1:], status_lines[0]))
            await writer.drain()
            await self._pipe(up_reader, writer)
            to_server.cancel()
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            pass
        except asyncio.CancelledError:
            pass  # the proxy is closing (this task is the connection's top level: nothing above it waits)
        finally:
            for w in (writer, upstream):
                if w is not None:
                    with suppress(Exception):
                        w.close()
            if task is not None:
                self._tasks.discard(task)

    async def _checked_address(self, host: str, port: int) -> tuple[str, str | None]:
        """(address to connect to, None) or ("", reason). Every address the name resolves to is checked."""
        literal = parse_ip_literal(host)
        if literal is not None:
            addresses = [str(literal)]
        else:
            try:
                infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except (OSError, UnicodeError):
                return "", "dns_error"
            addresses = list(dict.fromkeys(info[4][0] for info in infos))
            if not addresses:
                return "", "dns_error"
        reason = self.refusal(host, port, addresses)
        if reason is not None:
            return "", reason
        return addresses[0], None

    async def _answer(self, writer: asyncio.StreamWriter, status: int, reason: str) -> None:
        text = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
        with suppress(Exception):
            writer.write(
                f"HTTP/1.1 {status} {text}\r\nX-Boilerstrip-Refused: {reason}\r\nContent-Length: 0\r\n"
                "Connection: close\r\n\r\n".encode("latin-1")
            )
            await writer.drain()

    @staticmethod
    async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        with suppress(ConnectionError, OSError, asyncio.IncompleteReadError):
            while True:
                chunk = await src.read(_PIPE_CHUNK)
                if not chunk:
                    break
                dst.write(chunk)
                await dst.drain()
        with suppress(Exception):
            if dst.can_write_eof():
                dst.write_eof()

    async def _pipe_both(self, r1: asyncio.StreamReader, w1: asyncio.StreamWriter,
                         r2: asyncio.StreamReader, w2: asyncio.StreamWriter) -> None:
        a = asyncio.ensure_future(self._pipe(r1, w2))
        b = asyncio.ensure_future(self._pipe(r2, w1))
        try:
            await asyncio.wait({a, b}, return_when=asyncio.ALL_COMPLETED)
        finally:
            a.cancel()
            b.cancel()
