"""Shared fixtures: loopback servers on port 0 and a real crawl (the CLI's, in a forked child: _incrawl.py)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from _incrawl import run_cli
from _redis import redis_url  # noqa: F401 -- the fixture, shared by every test module that names it
from boilerstrip.demo.server import Reply, SiteServer
from boilerstrip.items import complete_record

ROOT = Path(__file__).resolve().parents[1]


#: the order tests start in when the suite runs on several workers (``./run tests``: pytest-xdist, ``--dist loadgroup``,
#: which hands tests out in collection order): the longest kinds first, so no worker starts a two-minute
#: test while the others are finishing (the suite's wall time is then about its CPU time over the cores)
_FIRST_MARKERS = ("benchmark_floor", "slow", "browser")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return next((i for i, name in enumerate(_FIRST_MARKERS) if item.get_closest_marker(name)), len(_FIRST_MARKERS))

    if getattr(config.option, "numprocesses", None):  # only on several workers: alone, files keep their order
        items.sort(key=rank)  # stable: within a rank, the collection order


@pytest.fixture
def serve() -> Iterator:
    """serve(root=None, routes=None) -> a started SiteServer on 127.0.0.1:0, stopped after the test."""
    servers: list[SiteServer] = []

    def start(root=None, routes=None) -> SiteServer:
        server = SiteServer(root=root, routes=routes).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def read_jsonl(path: str | Path) -> list[dict]:
    """The records of a JSONL output as a reader sees them: the fields a line leaves out at their default
    filled in (``boilerstrip.items.complete_record``; tombstones and outcome lines as written)."""
    path = Path(path)
    if not path.exists():
        return []
    return [complete_record(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_crawl(
    *urls: str,
    out: str | Path,
    settings: dict | None = None,
    args: list[str] | tuple[str, ...] = (),
    timeout: float = 240,
) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """Run ``boilerstrip crawl URL... -o OUT`` (a real Scrapy run, through the CLI, in a forked child of the
    test process: :func:`_incrawl.run_cli`); return its ``CompletedProcess`` and the records."""
    argv = ["crawl", *urls, "-o", str(out)]
    for key, value in (settings or {}).items():
        argv += ["-s", f"{key}={value}"]
    argv += list(args)
    proc = run_cli(argv, cwd=ROOT, timeout=timeout)
    return proc, read_jsonl(out)


__all__ = ["Reply", "SiteServer", "read_jsonl", "run_crawl", "ROOT"]
