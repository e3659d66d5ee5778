"""The site benchmark's floors: real Debian documentation sites, scored against their markup.

Each site's default configuration (``auto``) is crawled end to end: a real ``boilerstrip crawl`` (the CLI's
code path, in a forked child: ``conftest.run_crawl``) of the site served on loopback, with its finishing
pass. The other variants change a setting of the extractor (``auto -semantic``) or of the cross-page model
(``page``), not of the crawl: they run the same extractor and the same finishing pass over every HTML file
of the site (``site_benchmark.direct_records``, the benchmark's ``--via direct``), without a second crawl of
the same pages. Each test stands alone (no state shared between tests: pytest-xdist may run them anywhere).
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

import pytest

from _incrawl import run_cli
from conftest import ROOT, run_crawl

sys.path.insert(0, str(ROOT))
from benchmarks.site_benchmark import CRAWL_SETTINGS, SITES, direct_records, load_truth, score  # noqa: E402
from boilerstrip.boilerplate.finish import read_records  # noqa: E402
from boilerstrip.check import check_records  # noqa: E402
from boilerstrip.demo.server import SiteServer  # noqa: E402
from boilerstrip.items import without_trail  # noqa: E402

FLOORS = json.loads((ROOT / "benchmarks" / "site_floor.json").read_text())
#: variant name in site_floor.json -> its settings
VARIANTS = {
    "auto": {},  # the default configuration
    "auto -semantic": {"BOILERSTRIP_EXTRACTION_PARAMS": '{"semantic_enabled": false}'},  # density plus cross-page alone
    "page": {"BOILERSTRIP_BOILERPLATE_PARAMS": '{"source": "page"}'},
}
#: the variant that is crawled; the others read the site's files (the crawl is the same for every variant)
CRAWLED = "auto"
CASES = [(site, variant) for site, floors in FLOORS.items() if not site.startswith("_") for variant in floors
         if not variant.startswith("_")]
#: the site's URL when its files are read without a crawl (scoring reads the truth by a URL's path)
FILES_URL = "http://127.0.0.1"


@pytest.mark.slow
@pytest.mark.timeout(900)  # a 932-page crawl plus its finishing pass on a shared, busy 2-core machine
@pytest.mark.benchmark_floor
@pytest.mark.parametrize(("site_name", "variant"), CASES)
def test_site_floor(site_name: str, variant: str, tmp_path: Path) -> None:
    site = SITES[site_name]
    if not site.root.is_dir():
        message = f"Debian package {site_name} not installed (apt-get install {site_name})"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (CI=true: a quality gate must not skip)")
        pytest.skip(message)
    floor = FLOORS[site_name][variant]
    if variant == CRAWLED:
        records = _crawled_records(site, tmp_path / "out.jsonl", VARIANTS[variant])
    else:
        records = direct_records(FILES_URL, site, VARIANTS[variant], limit=0)
    texts = {r["url"]: r.get("text") or "" for r in records if r.get("url")}
    pages = load_truth(site, FILES_URL, sorted(texts), chrome_min_pages=3)  # (the truth is read by URL path)
    row = score(pages, variant, texts)
    assert row.pages >= floor["min_pages"], row.pages
    assert row.f1 >= floor["min_f1"], (row.f1, row.leaking_pages[:3])
    assert row.leakage <= floor["max_leakage"], row.leaking_pages[:5]
    if "max_nav_lines" in floor:
        assert row.nav_lines <= floor["max_nav_lines"], row.nav_lines
    # the records as a crawl writes them (lean: the block-by-block trail is opt-in), shuffled and not
    assert _shuffled_identical([without_trail(r) for r in records], random.Random(variant).randrange(1000), tmp_path)
    if variant == CRAWLED:
        _check_passes_the_crawl_and_flags_an_injected_line(records)


def _crawled_records(site, out: Path, settings: dict[str, str]) -> list[dict]:
    """The records of a real crawl of ``site`` served on loopback, after its finishing pass."""
    with SiteServer(root=site.root) as server:
        proc, _ = run_crawl(f"{server.url}/{site.start}", out=out, settings={**CRAWL_SETTINGS, **settings}, timeout=840)
    assert proc.returncode == 0, proc.stderr[-3000:]
    records, invalid = read_records(out)
    assert not invalid, invalid[:5]
    return records


def _shuffled_identical(records: list[dict], seed: int, tmp_path: Path) -> bool:
    """``boilerstrip dedup`` gives byte-identical output for the records as they are and shuffled."""
    shuffled = list(records)
    random.Random(seed).shuffle(shuffled)
    outputs = []
    for name, recs in (("asis", records), ("shuffled", shuffled)):
        src, out = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.dedup.jsonl"
        src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
        proc = run_cli(["dedup", src, "-o", out, "--no-report"])
        assert proc.returncode == 0, proc.stderr[-2000:]
        outputs.append(out.read_bytes())
    return outputs[0] == outputs[1]


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
