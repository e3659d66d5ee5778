"""Integration: real crawls (``boilerstrip crawl`` in a subprocess) with cross-page template removal."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from boilerstrip.demo.server import SiteServer
from boilerstrip.demo.sitegen import ARTICLES, SITE_DIR
from conftest import run_crawl

FAST = ["--profile", "test"]
LETTERS = "abcdefghijklmnopqrstuvwxyz"
SQLITE_DOC = Path("/usr/share/doc/sqlite3")
EXTRACTION = "boilerstrip.pipelines.extraction.ExtractionPipeline"


def _with_extraction(settings: dict | None = None) -> dict:
    """The crawl's settings, with the extraction pipeline (300) added if the project does not register it
    yet: cross-page removal works on the extractor's blocks, not on FinalizePipeline's placeholder text."""
    from boilerstrip import settings as project

    settings = dict(settings or {})
    if EXTRACTION not in project.ITEM_PIPELINES:
        settings["ITEM_PIPELINES"] = json.dumps({**project.ITEM_PIPELINES, EXTRACTION: 300})
    return settings


def _lines(record: dict) -> list[str]:
    return [line.strip() for line in record["text"].split("\n") if line.strip()]


# -- the demo site -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("bp-demo") / "demo.jsonl"
    with SiteServer(root=SITE_DIR) as server:
        proc, records = run_crawl(server.url + "/", out=out, args=FAST, settings=_with_extraction())
    return proc, records, out


def test_demo_template_blocks_are_gone_and_articles_keep_their_text(demo) -> None:
    proc, records, out = demo
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "finishing pass" in proc.stderr
    assert records
    for record in records:
        assert "We use cookies" not in record["text"], record["url"]
        assert "Related posts" not in _lines(record), record["url"]
        assert "Accept all cookies" not in record["text"]
        assert record["template_cluster"]
        # a lean record (schema 2): no block-by-block trail, a summary of what was removed and why
        assert not {"blocks", "page_blocks", "page_block_hashes"} & set(record)
        by_reason = record["boilerplate_removed_by"]
        if not any(flag.startswith("boilerplate_source_page") for flag in record["flags"]):
            # the text is the extractor's blocks minus template: the summary adds up to the counts
            assert set(by_reason) <= {"template:site", "template:cluster", "template:list", "template:structure"}
            assert record["boilerplate_removed_blocks"] == sum(v["blocks"] for v in by_reason.values())
            assert record["boilerplate_removed_chars"] == sum(v["chars"] for v in by_reason.values())
    by_path = {urlsplit(r["url"]).path: r for r in records}
    for article in ARTICLES:
        record = by_path.get(f"/posts/{article.slug}.html")
        if record is None:  # a post the demo keeps out of the crawl (robots, drafts)
            continue
        for paragraph in article.paragraphs:
            assert " ".join(paragraph.split()) in " ".join(record["text"].split()), (article.slug, paragraph[:40])
    report = json.loads((out.parent / "demo.report" / "template-report.json").read_text())
    (site,) = report["sites"].values()
    assert site["pages"] == len(records) and site["clusters"]["posts:2"] >= 10
    # whatever the extractor let through of the banner or the related box was removed as template
    for block in site["removed_blocks"]:
        assert block["scope"] in ("template:site", "template:cluster", "template:list")
        if block["scope"] != "template:list":
            assert block["pages_with_block"] >= 5


# -- a generated site ------------------------------------------------------------------------------------------
def _words(i: int, n: int) -> str:
    return " ".join(f"{LETTERS[i % 26]}{LETTERS[(i // 26) % 26]}{LETTERS[k % 26]}{LETTERS[(k // 26) % 26]}o" for k in range(n))


def _write_site(root: Path, pages: int) -> None:
    """index.html links to ``pages`` articles; each has a menu, a subscribe box and a footer."""
    root.mkdir(parents=True, exist_ok=True)
    chrome_top = ('<div class="top"><ul><li><a href="/index.html">Home</a></li><li><a href="/index.html">All notes'
                  '</a></li><li>Opening hours: Monday to Friday</li></ul></div>')
    chrome_bottom = ('<div class="subscribe"><p>Subscribe to our monthly letter about the workshop</p></div>'
                     '<div class="legal"><p>Workshop notes, all rights reserved, updated 2026-11-30</p></div>')
    links = "".join(f'<li><a href="/notes/{i}.html">Note {_words(i, 2)}</a></li>' for i in range(pages))
    (root / "index.html").write_text(f"<html><body>{chrome_top}<h1>All notes</h1><ul>{links}</ul>{chrome_bottom}"
                                     "</body></html>", encoding="utf-8")
    (root / "notes").mkdir(exist_ok=True)
    for i in range(pages):
        body = "".join(f"<p>{_words(i * 5 + k, 30)}.</p>" for k in range(4))
        (root / "notes" / f"{i}.html").write_text(
            f"<html><head><title>Note {i}</title></head><body>{chrome_top}<div class=content><h1>Note "
            f"{_words(i, 2)}</h1>{body}</div>{chrome_bottom}</body></html>", encoding="utf-8")


TEMPLATE_LINES = ("Subscribe to our monthly letter about the workshop", "Opening hours: Monday to Friday",
                  "Workshop notes, all rights reserved, updated 2026-11-30", "Home")


def test_a_five_page_site_is_cleaned_by_the_finishing_pass(tmp_path) -> None:
    """Nothing is held during the crawl (its clean is provisional); the finishing pass cleans every page."""
    _write_site(tmp_path / "site", pages=5)
    out = tmp_path / "out.jsonl"
    started = time.monotonic()
    with SiteServer(root=tmp_path / "site") as server:
        proc, records = run_crawl(server.url + "/index.html", out=out, args=FAST, timeout=120,
                                  settings=_with_extraction({"BOILERSTRIP_BOILERPLATE_PARAMS": '{"min_pages": 5}'}))
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert elapsed < 60, elapsed
    notes = [r for r in records if "/notes/" in r["url"]]
    assert len(notes) == 5
    # cleaned by the finishing pass with the whole 6-page model, the first pages crawled too
    for record in records:
        for line in TEMPLATE_LINES:
            assert line not in _lines(record), (record["url"], line)
    for record in notes:
        assert len(record["text"]) > 300
    assert (tmp_path / ".boilerstrip-state" / "state.sqlite3").exists()  # state next to the output


def test_crawl_order_and_concurrency_do_not_change_the_output(tmp_path) -> None:
    _write_site(tmp_path / "site", pages=30)
    outputs = []
    with SiteServer(root=tmp_path / "site") as server:
        for n, concurrency in enumerate((1, 16)):
            out = tmp_path / f"run{n}" / "out.jsonl"
            proc, records = run_crawl(server.url + "/index.html", out=out, args=FAST, timeout=180,
                                      settings=_with_extraction({"CONCURRENT_REQUESTS": concurrency,
                                                                 "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
                                                                 "BOILERSTRIP_STATE_DIR": ""}))
            assert proc.returncode == 0, proc.stderr[-3000:]
            outputs.append([{k: r[k] for k in ("url", "text", "boilerplate_removed_by", "boilerplate_removed_chars", "flags")}
                            for r in records])
    assert outputs[0] == outputs[1]
    assert [r["url"] for r in outputs[0]] == sorted(r["url"] for r in outputs[0])
    assert len(outputs[0]) == 31
    for record in outputs[0]:
        for line in TEMPLATE_LINES:
            assert line not in _lines(record)


def test_page_source_keeps_the_whole_article_and_drops_the_template(tmp_path) -> None:
    _write_site(tmp_path / "site", pages=8)
    out = tmp_path / "out.jsonl"
    with SiteServer(root=tmp_path / "site") as server:
        proc, records = run_crawl(server.url + "/index.html", out=out, args=FAST, timeout=120,
                                  settings=_with_extraction({"BOILERSTRIP_BOILERPLATE_PARAMS": '{"source": "page"}',
                                                             "BOILERSTRIP_STATE_DIR": ""}))
    assert proc.returncode == 0, proc.stderr[-3000:]
    notes = [r for r in records if "/notes/" in r["url"]]
    assert len(notes) == 8
    for record in notes:
        i = int(record["url"].rsplit("/", 1)[1].split(".")[0])
        assert record["method"] == "crosspage"
        assert _lines(record) == [f"Note {_words(i, 2)}"] + [f"{_words(i * 5 + k, 30)}." for k in range(4)]
    index = next(r for r in records if r["url"].endswith("/index.html"))
    assert f"Note {_words(7, 2)}" in _lines(index) and not set(_lines(index)) & set(TEMPLATE_LINES)


# -- a real Debian documentation site -----------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(not SQLITE_DOC.is_dir(), reason="Debian package sqlite3-doc not installed (apt-get install sqlite3-doc)")
def test_sqlite_docs_subset_loses_its_template(tmp_path) -> None:
    root = tmp_path / "sqlite"
    root.mkdir()
    # a subset: the top-level pages (one template) and the C-API pages (their own footer), 80 pages
    top = sorted(p for p in SQLITE_DOC.glob("*.html"))[:50]
    c3ref = sorted((SQLITE_DOC / "c3ref").glob("*.html"))[:30]
    for path in top:
        shutil.copy(path, root / path.name)
    (root / "c3ref").mkdir()
    for path in c3ref:
        shutil.copy(path, root / "c3ref" / path.name)
    shutil.copy(SQLITE_DOC / "sqlite.css", root / "sqlite.css") if (SQLITE_DOC / "sqlite.css").exists() else None
    index = "".join(f'<li><a href="{p.name}">{p.stem}</a></li>' for p in top)
    index += "".join(f'<li><a href="c3ref/{p.name}">{p.stem}</a></li>' for p in c3ref)
    (root / "start.html").write_text(f"<html><body><ul>{index}</ul></body></html>", encoding="utf-8")
    out = tmp_path / "sqlite.jsonl"
    with SiteServer(root=root) as server:
        proc, records = run_crawl(server.url + "/start.html", out=out, args=[*FAST, "--max-depth", "1"], timeout=240,
                                  settings=_with_extraction({"BOILERSTRIP_STATE_DIR": ""}))
    assert proc.returncode == 0, proc.stderr[-3000:]
    pages = [r for r in records if not r["url"].endswith("/start.html")]
    assert len(pages) >= 60
    menu = {"Home", "About", "Documentation", "Download", "License", "Support", "Purchase", "Search", "Menu"}
    for record in pages:
        lines = set(_lines(record))
        assert not lines & menu, (record["url"], lines & menu)
        assert "This page last modified" not in record["text"], record["url"]
        assert "See also lists of Objects, Constants, and Functions." not in lines, record["url"]
        assert "Choose any three" not in record["text"], record["url"]
    # pages keep their real text: the C-API pages open with their declaration
    opened = next(r for r in pages if r["url"].endswith("c3ref/aggregate_context.html")) if any(
        r["url"].endswith("c3ref/aggregate_context.html") for r in pages) else None
    if opened is not None:
        assert "sqlite3_aggregate_context" in opened["text"]
    assert sum(len(r["text"]) for r in pages) > 50 * 500
    report = (tmp_path / "sqlite.report" / "template-report.txt").read_text()
    assert "template:cluster" in report and "template:site" in report
