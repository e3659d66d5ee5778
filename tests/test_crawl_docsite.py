"""A real documentation site (Debian's sqlite3-doc) behind a loopback server: every linked, allowed page."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import crawl_benchmark  # noqa: E402

SITE = crawl_benchmark.DEFAULT_ROOT


@pytest.mark.slow
@pytest.mark.skipif(not (SITE / "index.html").is_file(), reason="sqlite3-doc is not installed")
def test_docsite_crawl_finds_exactly_the_linked_allowed_pages(tmp_path: Path) -> None:
    disallow = crawl_benchmark.DEFAULT_DISALLOW
    expected = crawl_benchmark.independent_pages(SITE, disallow)
    assert len(expected) > 300  # the walk itself works
    result = crawl_benchmark.crawl(
        SITE, disallow, "own-site", {"BOILERSTRIP_DUPLICATES_ENABLED": "false"}, tmp_path / "out.jsonl"
    )
    assert result["returncode"] == 0, result["stderr"][-2000:]
    assert result["disallowed_requests"] == []
    assert result["found"] == expected, (sorted(expected - result["found"])[:10], sorted(result["found"] - expected)[:10])
    assert result["records"] == len(expected)  # each page once
