"""CONCURRENT_REQUESTS_PER_DOMAIN holds even with no download delay (boilerstrip.core.downloader)."""

from __future__ import annotations

import threading
import time

from _crawlsite import FAST, page, small_site
from conftest import run_crawl


def test_per_host_concurrency_limit_holds_without_delay(serve, tmp_path) -> None:
    in_flight = 0
    peak = 0
    lock = threading.Lock()

    def slow(path: str, headers: dict) -> object:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.15)  # long enough for a burst to overlap
        with lock:
            in_flight -= 1
        return page(path.strip("/"), ["/"])

    n = 8
    server = serve(routes=small_site(n=n, extra={f"/p{i}": slow for i in range(1, n + 1)}))
    proc, records = run_crawl(
        server.url + "/", out=tmp_path / "o.jsonl", args=[*FAST, "--no-sitemaps"],
        settings={"CONCURRENT_REQUESTS_PER_DOMAIN": 1, "DOWNLOAD_DELAY": 0},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(records) == n + 1
    assert peak == 1, f"{peak} requests reached the host at once with CONCURRENT_REQUESTS_PER_DOMAIN=1"


def test_per_host_concurrency_allows_parallelism_when_asked(serve, tmp_path) -> None:
    in_flight = 0
    peak = 0
    lock = threading.Lock()

    def slow(path: str, headers: dict) -> object:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.15)
        with lock:
            in_flight -= 1
        return page(path.strip("/"), ["/"])

    n = 8
    server = serve(routes=small_site(n=n, extra={f"/p{i}": slow for i in range(1, n + 1)}))
    proc, records = run_crawl(
        server.url + "/", out=tmp_path / "o.jsonl", args=[*FAST, "--no-sitemaps"],
        settings={"CONCURRENT_REQUESTS_PER_DOMAIN": 4, "DOWNLOAD_DELAY": 0},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(records) == n + 1
    assert 2 <= peak <= 4, peak
