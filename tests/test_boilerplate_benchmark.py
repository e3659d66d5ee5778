"""The site benchmark's floors: a real Debian documentation site crawled on loopback, scored against its markup."""

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
HANDBOOK = SITES["debian-handbook"]


@pytest.mark.slow
@pytest.mark.benchmark_floor
@pytest.mark.skipif(not HANDBOOK.root.is_dir(), reason="Debian package debian-handbook not installed (apt-get install debian-handbook)")
@pytest.mark.parametrize("source", ["extracted", "page"])
def test_debian_handbook_floor(source: str, tmp_path: Path) -> None:
    floor = FLOORS["debian-handbook"][source]
    with SiteServer(root=HANDBOOK.root) as server:
        records = crawl_records(server.url, HANDBOOK, tmp_path / "out.jsonl",
                                {"BOILERSTRIP_BOILERPLATE_SOURCE": source}, limit=0)
        texts = {r["url"]: r.get("text") or "" for r in records if r.get("url")}
        pages = load_truth(HANDBOOK, server.url, sorted(texts), chrome_min_pages=3)
    row = score(pages, source, texts)
    assert row.pages >= 120, row.pages
    assert row.f1 >= floor["min_f1"], (row.f1, row.leaking_pages[:3])
    assert row.leakage <= floor["max_leakage"], row.leaking_pages[:5]
    assert shuffled_identical(records, seed=random.Random(source).randrange(1000))
