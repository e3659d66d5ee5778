"""CONCURRENT_REQUESTS_PER_DOMAIN holds even with no download delay (boilerstrip.core.downloader).

Both cases fail on Scrapy 2.19's own downloader, which hands a slot's whole queue out at once when
DOWNLOAD_DELAY is 0 (8 requests in flight here).
"""

from __future__ import annotations

import threading
import time

import pytest
from _crawlsite import FAST, page, small_site
from conftest import run_crawl


@pytest.mark.parametrize(("per_host", "lowest_peak"), [(1, 1), (4, 2)])
def test_per_host_concurrency_limit_holds_without_delay(serve, tmp_path, per_host, lowest_peak) -> None:
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
        settings={"CONCURRENT_REQUESTS_PER_DOMAIN": per_host, "DOWNLOAD_DELAY": 0},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(records) == n + 1
    assert lowest_peak <= peak <= per_host, f"{peak} requests at once with CONCURRENT_REQUESTS_PER_DOMAIN={per_host}"
