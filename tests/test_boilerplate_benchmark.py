"""The site benchmark's floors: real Debian documentation sites crawled on loopback, scored against their markup."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT))
from benchmarks.site_benchmark import SITES, crawl_records, load_truth, score, shuffled_identical  # noqa: E402
from boilerstrip.check import check_records  # noqa: E402
from boilerstrip.demo.server import SiteServer  # noqa: E402

FLOORS = json.loads((ROOT / "benchmarks" / "site_floor.json").read_text())
#: variant name in site_floor.json -> crawl settings
VARIANTS = {
    "auto": {},  # the default configuration
    "auto -semantic": {"BOILERSTRIP_EXTRACTION_PARAMS": '{"semantic_enabled": false}'},  # density plus cross-page alone
    "page": {"BOILERSTRIP_BOILERPLATE_PARAMS": '{"source": "page"}'},
}
CASES = [(site, variant) for site, floors in FLOORS.items() if not site.startswith("_") for variant in floors
         if not variant.startswith("_")]


@pytest.mark.slow
@pytest.mark.timeout(900)  # a 1,085-page crawl plus two finishing passes on a shared 2-core machine
@pytest.mark.benchmark_floor
@pytest.mark.parametrize(("site_name", "variant"), CASES)
def test_site_floor(site_name: str, variant: str, tmp_path: Path) -> None:
    site = SITES[site_name]
    if not site.root.is_dir():
        pytest.skip(f"Debian package {site_name} not installed (apt-get install {site_name})")
    floor = FLOORS[site_name][variant]
    with SiteServer(root=site.root) as server:
        records = crawl_records(server.url, site, tmp_path / "out.jsonl", VARIANTS[variant], limit=0)
        texts = {r["url"]: r.get("text") or "" for r in records if r.get("url")}
        pages = load_truth(site, server.url, sorted(texts), chrome_min_pages=3)
    row = score(pages, variant, texts)
    assert row.pages >= floor["min_pages"], row.pages
    assert row.f1 >= floor["min_f1"], (row.f1, row.leaking_pages[:3])
    assert row.leakage <= floor["max_leakage"], row.leaking_pages[:5]
    if "max_nav_lines" in floor:
        assert row.nav_lines <= floor["max_nav_lines"], row.nav_lines
    assert shuffled_identical(records, seed=random.Random(variant).randrange(1000))
    if variant == "auto":
        _check_passes_the_crawl_and_flags_an_injected_line(records)


def _check_passes_the_crawl_and_flags_an_injected_line(records: list[dict]) -> None:
    """``boilerstrip check`` on the real crawl: ok; with a line injected into 60% of the records: fail."""
    pages = sorted((r for r in records if r.get("url")), key=lambda r: r["url"])
    (site,) = check_records(pages)["sites"]
    assert site["verdict"] == "ok", site["reasons"]
    line = "Sign up for the weekly digest of release notes and security advisories"
    injected = [dict(r, text=(r.get("text") or "") + "\n\n" + line) if i % 5 < 3 else r for i, r in enumerate(pages)]
    (site,) = check_records(injected)["sites"]
    assert site["verdict"] == "fail"
    assert any(r["rule"] == "repeated_lines" and r["level"] == "fail" for r in site["reasons"]), site["reasons"]
