"""A throwaway ``redis-server`` on a loopback port, for tests, benchmarks and one-machine trials.

Redis does not accept port 0, so a free port is found by binding a socket first; the server keeps nothing
on disk (``--save '' --appendonly no``) and is stopped (and its process reaped) by :meth:`LocalRedis.stop`.
Pure Python: no Scrapy import.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time

__all__ = ["LocalRedis", "redis_server_path", "free_port"]

#: how long a fresh redis-server may take to answer PING
_START_TIMEOUT_S = 30.0  # under a saturated machine a start takes ~1 s


def redis_server_path() -> str | None:
    """The ``redis-server`` binary (Debian's ``/usr/bin/redis-server``), or None when it is not installed."""
    return shutil.which("redis-server") or ("/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class LocalRedis:
    """``with LocalRedis() as r: r.url`` -> ``redis://127.0.0.1:PORT/0``."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = 0
        self.process: subprocess.Popen | None = None
        self._folder: tempfile.TemporaryDirectory | None = None

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def start(self) -> "LocalRedis":
        binary = redis_server_path()
        if binary is None:
            raise FileNotFoundError("redis-server is not installed (Debian: apt-get install redis-server)")
        self._folder = tempfile.TemporaryDirectory(prefix="boilerstrip-redis-")
        for _ in range(5):  # another process may take the port between the probe and the bind
            self.port = free_port(self.host)
            self.process = subprocess.Popen(
                [binary, "--port", str(self.port), "--bind", self.host, "--save", "", "--appendonly", "no",
                 "--dir", self._folder.name, "--protected-mode", "yes"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._wait_ready():
                return self
            self._kill()
        raise RuntimeError("redis-server did not start")

    def restart(self) -> LocalRedis:
        """Kill the server and start an empty one on the same port (what a crash and a restart without
        persistence look like to the clients)."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
        binary = redis_server_path()
        assert binary is not None and self._folder is not None
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", self.host, "--save", "", "--appendonly", "no",
             "--dir", self._folder.name, "--protected-mode", "yes"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not self._wait_ready():
            raise RuntimeError("redis-server did not start again")
        return self

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                return False
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5) as sock:
                    # the server that answers must be ours: another redis-server (a parallel test's) may have
                    # taken the port between the probe and our bind, and ours then exits while that one answers
                    sock.sendall(b"INFO server\r\n")
                    reply = b""
                    while b"process_id:" not in reply or not reply.split(b"process_id:", 1)[1].count(b"\r\n"):
                        chunk = sock.recv(4096)
                        if not chunk:
                            break
                        reply += chunk
                    pid = reply.split(b"process_id:", 1)[1].split(b"\r\n", 1)[0] if b"process_id:" in reply else b""
                    if self.process is not None and pid.strip() == str(self.process.pid).encode():
                        return True
                    if pid:
                        return False
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def _kill(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
            self.process = None

    def stop(self) -> None:
        self._kill()
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def __enter__(self) -> "LocalRedis":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
