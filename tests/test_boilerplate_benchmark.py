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
from boilerstrip.demo.server import SiteServer  # noqa: E402

FLOORS = json.loads((ROOT / "benchmarks" / "site_floor.json").read_text())
#: variant name in site_floor.json -> crawl settings
VARIANTS = {
    "auto": {},  # the default configuration
    "auto -semantic": {"BOILERSTRIP_EXTRACTION_SEMANTIC_ENABLED": "false"},  # density plus cross-page alone
    "page": {"BOILERSTRIP_BOILERPLATE_SOURCE": "page"},
}
CASES = [(site, variant) for site, floors in FLOORS.items() if not site.startswith("_") for variant in floors]


@pytest.mark.slow
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
    assert shuffled_identical(records, seed=random.Random(variant).randrange(1000))
