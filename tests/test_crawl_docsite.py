"""A real documentation site (Debian's sqlite3-doc) behind a loopback server: every linked, allowed page."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from conftest import ROOT, Reply, SiteServer, run_crawl

sys.path.insert(0, str(ROOT / "benchmarks"))
import crawl_benchmark  # noqa: E402

SITE = crawl_benchmark.DEFAULT_ROOT
#: what is under test is which pages the crawl finds: the pages are not extracted (the extraction and the
#: template removal have their own floors, tests/test_boilerplate_benchmark.py), nor compared as duplicates
NOT_UNDER_TEST = {"BOILERSTRIP_EXTRACTION_ENABLED": "false", "BOILERSTRIP_BOILERPLATE_ENABLED": "false",
                  "BOILERSTRIP_DUPLICATES_ENABLED": "false"}


@pytest.mark.slow
@pytest.mark.skipif(not (SITE / "index.html").is_file(), reason="sqlite3-doc is not installed")
def test_docsite_crawl_finds_exactly_the_linked_allowed_pages(tmp_path: Path) -> None:
    disallow = crawl_benchmark.DEFAULT_DISALLOW
    expected = crawl_benchmark.independent_pages(SITE, disallow)
    assert len(expected) > 300  # the walk itself works
    robots = "User-agent: *\n" + "".join(f"Disallow: {path}\n" for path in disallow)
    routes = {"/robots.txt": Reply(200, robots.encode(), (("Content-Type", "text/plain"),))}
    with SiteServer(root=SITE, routes=routes) as server:
        # links only (no sitemaps): the check is "every page that is linked and allowed"
        proc, records = run_crawl(server.url + "/", out=tmp_path / "out.jsonl", settings=NOT_UNDER_TEST,
                                  args=["--profile", "own-site", "--no-sitemaps"], timeout=600)
        log = list(server.log)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [e.path for e in log if e.path.startswith(disallow)] == []
    found = {unquote(urlsplit(r["final_url"]).path) for r in records}
    assert found == expected, (sorted(expected - found)[:10], sorted(found - expected)[:10])
    assert len(records) == len(expected)  # each page once
