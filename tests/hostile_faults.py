"""Loopback fault servers and ledger checks shared by the tests/test_hostile_*.py files.

``RawServer`` answers each connection with a Python function writing raw bytes to the socket, for the
faults a well-behaved HTTP server cannot produce: endless bodies, slowloris drips, lying Content-Length.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from pathlib import Path

from boilerstrip.feeds import output_paths

__all__ = ["RawServer", "read_manifest", "read_ledger", "assert_reconciled", "html_page"]


class RawServer:
    """A loopback TCP server on port 0; ``handler(conn, request_bytes)`` writes the answer."""

    def __init__(self, handler: Callable[[socket.socket, bytes], None]) -> None:
        self.handler = handler
        self.hits: list[bytes] = []
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        try:
            self._sock.close()
        except OSError:
            pass

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(30)
            data = b""
            while b"\r\n\r\n" not in data and len(data) < 65536:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            line = data.split(b"\r\n", 1)[0]
            if b" /robots.txt " in line:
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            self.hits.append(line)
            self.handler(conn, data)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass


def html_page(body: str, title: str = "page") -> bytes:
    return f"<!doctype html><html><head><title>{title}</title></head><body><main>{body}</main></body></html>".encode()


def read_manifest(out: str | Path) -> dict:
    return json.loads(output_paths(out).manifest.read_text(encoding="utf-8"))


def read_ledger(out: str | Path) -> dict[str, dict]:
    lines = output_paths(out).ledger.read_text(encoding="utf-8").splitlines()
    return {entry["url"]: entry for entry in map(json.loads, lines)}


def assert_reconciled(out: str | Path, proc=None, returncode: int = 0) -> dict:
    """The run's manifest says reconciled and its counts agree with the ledger and the output file; the
    crawl exited ``returncode`` (1: no start URL could be reached, a reconciled outcome too)."""
    manifest = read_manifest(out)
    dead = output_paths(out).deadletter
    detail = f"manifest: {json.dumps(manifest, indent=1)[:3000]}" + (f"\nstderr: {proc.stderr[-3000:]}" if proc else "")
    if dead.exists():
        detail += f"\ndead letters: {dead.read_text(encoding='utf-8')[:3000]}"
    assert manifest["reconciled"] is True, detail
    counts = manifest["counts"]
    assert counts["pending"] == 0 and counts["settled_twice"] == 0, detail
    assert counts["urls"] == counts["item"] + counts["filtered"] + counts["failed"], detail
    ledger = read_ledger(out)
    assert len(ledger) == counts["urls"], detail
    assert sum(1 for e in ledger.values() if e["outcome"] == "item") == counts["item"], detail
    raw = Path(out).read_bytes()
    assert raw == b"" or raw.endswith(b"\n"), "output does not end with a whole line"
    records = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
    assert {r["url"] for r in records} == {u for u, e in ledger.items() if e["outcome"] == "item"}, detail
    assert len(records) == len({r["url"] for r in records}), "a URL written twice"
    if proc is not None:
        assert proc.returncode == returncode, detail
        if returncode == 1:
            assert "no start URL could be reached" in proc.stderr, detail
    return manifest
