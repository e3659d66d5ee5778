"""Integration: crawl the bundled demo site on loopback with a real Scrapy run."""

from __future__ import annotations

import re
from collections import Counter
from urllib.parse import urlsplit

import pytest

from boilerstrip.demo.sitegen import DISALLOWED_PREFIX, SITE_DIR, expected_pages
from boilerstrip.items import EXPORT_FIELDS
from conftest import run_crawl

FAST = ["--profile", "test"]
REQUIRED = ("url", "final_url", "status", "fetched_at", "title", "lang", "text", "content_hash", "fetch", "depth")


def reasons(stderr: str, kind: str = "skipped") -> dict[str, int]:
    """Reason counts from the progress summary line '[boilerstrip]   skipped by reason: a=1, b=2'."""
    match = re.search(rf"{kind} by reason: (.*)", stderr)
    assert match, stderr[-2000:]
    if match.group(1).strip() == "none":
        return {}
    return {k: int(v) for k, v in (part.split("=") for part in match.group(1).split(", "))}


@pytest.fixture(scope="module")
def demo_crawl(tmp_path_factory):
    from boilerstrip.demo.server import SiteServer

    out = tmp_path_factory.mktemp("demo") / "demo.jsonl"
    with SiteServer(root=SITE_DIR) as server:
        proc, records = run_crawl(server.url + "/", out=out, args=FAST)
        log = list(server.log)
    return server, proc, records, log


def test_finds_every_allowed_page_once(demo_crawl) -> None:
    server, proc, records, _ = demo_crawl
    assert proc.returncode == 0, proc.stderr[-3000:]
    paths = [urlsplit(r["url"]).path for r in records]
    assert Counter(paths).most_common(1)[0][1] == 1, "a page was recorded twice"
    assert set(paths) == expected_pages()
    assert "/press/" in paths  # only the sitemap links to it


def test_records_are_valid_and_complete(demo_crawl) -> None:
    _, _, records, _ = demo_crawl
    for record in records:
        assert list(record) == [f for f in EXPORT_FIELDS if f in record]  # export order
        for name in REQUIRED:
            assert name in record, name
        assert "html" not in record
        assert record["status"] == 200 and record["fetch"] == "http"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["fetched_at"])
        assert record["lang"] == "en"
        assert record["title"] and "Northfield" in record["title"]
        assert len(record["text"]) > 200
        assert re.fullmatch(r"[0-9a-f]{64}", record["content_hash"])
        assert isinstance(record["depth"], int) and record["depth"] >= 0
    home = next(r for r in records if urlsplit(r["url"]).path == "/")
    assert home["depth"] == 0


def test_robots_disallowed_section_never_requested(demo_crawl) -> None:
    _, proc, _, log = demo_crawl
    paths = [entry.path for entry in log]
    assert "/robots.txt" in paths
    assert not [p for p in paths if p.startswith(DISALLOWED_PREFIX)]
    assert reasons(proc.stderr)["robots_disallowed"] == 2


def test_url_variants_fetched_once(demo_crawl) -> None:
    _, proc, _, log = demo_crawl
    paths = Counter(entry.path for entry in log)
    # linked as ?utm_source=..., ?utm_campaign=...#results and plainly: one request
    assert paths["/posts/no-dig-beds.html"] == 1
    assert not [p for p in paths if "utm_" in p]
    # linked with #comments and plainly: one request
    assert paths["/posts/hot-composting-in-winter.html"] == 1
    # ?ref=sidebar is a different URL (fetched) but rel=canonical makes it one record
    assert reasons(proc.stderr)["duplicate_canonical"] == 1


def test_sitemaps_read_from_robots_and_well_known_path(demo_crawl) -> None:
    _, _, _, log = demo_crawl
    paths = {entry.path for entry in log}
    assert {"/sitemap_index.xml", "/sitemap-pages.xml", "/sitemap-posts.xml.gz", "/sitemap.xml"} <= paths


def test_user_agent_is_honest(demo_crawl) -> None:
    _, _, _, log = demo_crawl
    agents = {entry.headers.get("user-agent", "") for entry in log}
    assert len(agents) == 1
    assert re.fullmatch(r"boilerstrip/\d+\.\d+\.\d+ \(\+https?://\S+\)", agents.pop())


def test_progress_summary_printed(demo_crawl) -> None:
    _, proc, records, _ = demo_crawl
    match = re.search(r"(\d+) pages fetched, (\d+) pages extracted", proc.stderr)
    assert match and int(match.group(2)) == len(records)
