"""Recurring crawls end to end: real crawls (the CLI's, in forked children: ``_incrawl.run_cli``) of a
loopback site served by a real HTTP server that answers conditional requests (ETag / Last-Modified -> 304)
and counts the bytes it sends.

A 100-page site (``benchmarks/recrawl_benchmark.py`` measures the issue's 500) is crawled once per module,
and a 60-page one for the checks that need a site of their own; each test starts from a copy of the first
crawl's state folder. Only the edit tests change a site, and each is the last to use its site.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _crawlsite import crawl_with_state as crawl  # noqa: E402
from benchmarks.recrawl_benchmark import MAX_UNCHANGED_BYTES_RATIO, EditableSite, read_records  # noqa: E402

#: one worker for the module under ``pytest-xdist --dist loadgroup``: its sites are crawled once, not per worker
pytestmark = [pytest.mark.timeout(900), pytest.mark.slow, pytest.mark.xdist_group("test_recrawl")]

#: enough pages that the bytes of a second crawl are the pages' 304s, not robots.txt and the sitemap
PAGES = 100
SMALL = 60


def _ledger(out: Path) -> dict[str, str]:
    ledger = out.with_name(out.name.replace(".jsonl", ".ledger.jsonl"))
    entries = [json.loads(line) for line in ledger.read_text().splitlines()]
    return {e["url"]: f"{e['outcome']}:{e['reason']}" for e in entries}


def _manifest(out: Path) -> dict:
    return json.loads(out.with_name(out.name.replace(".jsonl", ".manifest.json")).read_text())


@pytest.fixture(scope="module")
def first_crawl(tmp_path_factory):
    """(site, server, work folder, first crawl's records): the PAGES-page site crawled once."""
    work = tmp_path_factory.mktemp("recrawl")
    site = EditableSite(PAGES)
    server = site.serve()
    code, err = crawl(server.url + "/", work / "first.jsonl", work / "state")
    assert code == 0, err[-3000:]
    records = read_records(work / "first.jsonl")
    assert len(records) == PAGES and {r["change"] for r in records} == {"new"}
    yield site, server, work, records, server.bytes_sent
    server.stop()


@pytest.fixture(scope="module")
def small_crawl(tmp_path_factory):
    """The same kind of site with 60 pages, for the checks that need a site of their own."""
    work = tmp_path_factory.mktemp("recrawl-small")
    site = EditableSite(SMALL)
    server = site.serve()
    code, err = crawl(server.url + "/", work / "first.jsonl", work / "state")
    assert code == 0, err[-3000:]
    records = read_records(work / "first.jsonl")
    assert len(records) == SMALL
    yield site, server, work, records, server.bytes_sent
    server.stop()


def _template_counts(state_dir: Path, url: str) -> tuple:
    from boilerstrip.boilerplate.blocks import site_of_url
    from boilerstrip.state import SqliteState

    state = SqliteState(state_dir)
    try:
        site = site_of_url(url)
        return state.templates.site_counts(site), state.templates.cluster_counts(site)
    finally:
        state.close()


def _state_copy(work: Path, name: str) -> Path:
    target = work / name
    shutil.copytree(work / "state", target)
    return target


def test_unchanged_site_second_crawl_transfers_at_most_a_tenth_of_the_bytes(first_crawl) -> None:
    site, server, work, first, first_bytes = first_crawl
    state = _state_copy(work, "state-unchanged")
    counts_before = _template_counts(state, server.url)
    server.reset_counts()
    # sitemap <lastmod> not trusted: every page is asked for, and must be answered by a 304
    code, err = crawl(server.url + "/", work / "second.jsonl", state, "-s", 'BOILERSTRIP_RECRAWL_PARAMS={"trust_lastmod": false}')
    assert code == 0, err[-3000:]
    ratio = server.bytes_sent / first_bytes
    assert ratio <= MAX_UNCHANGED_BYTES_RATIO, f"second crawl sent {ratio:.3f} of the first crawl's bytes"
    page_hits = [e for e in server.log if e.path not in ("/robots.txt", "/sitemap.xml") and not e.path.startswith("/.well-known/")]
    assert len(page_hits) == PAGES and all("if-none-match" in e.headers for e in page_hits)
    second = read_records(work / "second.jsonl")
    assert Counter(r["change"] for r in second) == {"unchanged": PAGES}
    by_url = {r["url"]: r for r in first}
    for record in second:  # the stored record re-emitted: same text, same first_seen, flagged as reused
        before = by_url[record["url"]]
        assert record["text"] == before["text"] and record["content_hash"] == before["content_hash"]
        assert record["first_seen"] == before["first_seen"] and record["last_changed"] == before["last_changed"]
        assert "reused:not_modified" in record["flags"]
    assert set(_ledger(work / "second.jsonl").values()) == {"item:"}
    assert _manifest(work / "second.jsonl")["reconciled"] is True
    assert f"changes: 0 new, 0 changed, {PAGES} unchanged, 0 removed" in err
    # the reused records carried the stored block hashes: the template counts are as the first crawl left them
    assert _template_counts(state, server.url) == counts_before and counts_before[0][0] == PAGES


def test_sitemap_lastmod_skips_requests_of_pages_unchanged_since_the_last_crawl(small_crawl) -> None:
    site, server, work, first, first_bytes = small_crawl
    state = _state_copy(work, "state-lastmod")
    server.reset_counts()
    code, err = crawl(server.url + "/", work / "lastmod.jsonl", state)
    assert code == 0, err[-3000:]
    records = read_records(work / "lastmod.jsonl")
    assert Counter(r["change"] for r in records) == {"unchanged": SMALL}
    skipped = sum("reused:sitemap_lastmod" in r["flags"] for r in records)
    page_hits = [e for e in server.log if e.path not in ("/robots.txt", "/sitemap.xml") and not e.path.startswith("/.well-known/")]
    # how many: the pages admitted from the sitemap before a link reached them (crawl order decides)
    assert skipped > 0 and len(page_hits) == SMALL - skipped


def test_settings_change_distrusts_the_stored_validators(small_crawl) -> None:
    site, server, work, first, first_bytes = small_crawl
    state = _state_copy(work, "state-settings")
    server.reset_counts()
    code, err = crawl(server.url + "/", work / "settings.jsonl", state, "--max-pages", "30",
                      "-s", "BOILERSTRIP_EXTRACTION_MARKDOWN=false")
    assert code == 0, err[-3000:]
    page_hits = [e for e in server.log if e.path not in ("/robots.txt", "/sitemap.xml") and not e.path.startswith("/.well-known/")]
    assert page_hits and not any("if-none-match" in e.headers for e in page_hits)
    assert not any(any(f.startswith("reused:") for f in r.get("flags") or []) for r in read_records(work / "settings.jsonl"))


def test_cut_short_recrawl_marks_nothing_removed(small_crawl) -> None:
    site, server, work, first, first_bytes = small_crawl
    state = _state_copy(work, "state-cut")
    code, err = crawl(server.url + "/", work / "cut.jsonl", state, "--max-pages", "20")
    assert code == 0, err[-3000:]
    records = read_records(work / "cut.jsonl")
    changes = Counter(r["change"] for r in records)
    assert "removed" not in changes
    unseen = [r for r in records if r["change"] == "unseen"]
    assert len(unseen) == SMALL - changes["unchanged"] > 30
    assert all(r["reason"].startswith("crawl_cut:max_pages") and r["last_seen"] for r in unseen)
    assert "crawl cut by max_pages: nothing marked removed" in err
    # the history still holds every page: a full crawl afterwards finds nothing removed either
    code, err = crawl(server.url + "/", work / "after-cut.jsonl", state)
    assert code == 0, err[-3000:]
    assert Counter(r["change"] for r in read_records(work / "after-cut.jsonl")) == {"unchanged": SMALL}


def test_edited_site_reports_exactly_five_changed_three_removed_two_new(first_crawl) -> None:
    """Runs last: it edits the module's site."""
    site, server, work, first, first_bytes = first_crawl
    state = _state_copy(work, "state-edited")
    leaves = site.leaves()
    edited = site.paths[10:15]
    site.add_page("/new/1.html", 1)
    site.add_page("/new/2.html", 2)
    for k, path in enumerate(edited):
        site.edit_text(path, ["/new/1.html"] if k == 0 else ["/new/2.html"] if k == 1 else [])
    deleted_linked, deleted_unlinked = leaves[:2], leaves[2]
    for path in deleted_linked:
        site.delete(path)
    site.delete(deleted_unlinked, unlink=True)
    site.change_template("1 December 2026")  # footer date and sidebar change on every page
    server.reset_counts()
    code, err = crawl(server.url + "/", work / "edited.jsonl", state, "-s", 'BOILERSTRIP_RECRAWL_PARAMS={"trust_lastmod": false}')
    assert code == 0, err[-3000:]
    # template churn changed every page's bytes: every surviving page was downloaded again, none was a 304
    assert sum(1 for e in server.log if e.path.startswith("/p/")) >= PAGES - 2
    records = read_records(work / "edited.jsonl")
    by_change: dict[str, set[str]] = {}
    for record in records:
        by_change.setdefault(record["change"], set()).add(record["url"].removeprefix(server.url))
    assert by_change["changed"] == set(edited)
    assert by_change["new"] == {"/new/1.html", "/new/2.html"}
    assert by_change["removed"] == {*deleted_linked, deleted_unlinked}
    assert len(by_change["unchanged"]) == PAGES - 5 - 3 and set(by_change) == {"new", "changed", "unchanged", "removed"}
    tombstones = {r["url"].removeprefix(server.url): r for r in records if r["change"] == "removed"}
    assert all(set(t) == {"url", "change", "reason", "last_seen"} for t in tombstones.values())
    assert {tombstones[p]["reason"] for p in deleted_linked} == {"http_404"}
    assert tombstones[deleted_unlinked]["reason"] == "unreachable"
    first_by_url = {r["url"]: r for r in first}
    for record in records:
        if record["change"] == "unchanged":
            assert record["last_changed"] == first_by_url[record["url"]]["last_changed"]
        elif record["change"] == "changed":
            assert record["first_seen"] == first_by_url[record["url"]]["first_seen"]
            assert record["last_changed"] > first_by_url[record["url"]]["last_changed"]
    assert _manifest(work / "edited.jsonl")["reconciled"] is True
    assert f"changes: 2 new, 5 changed, {PAGES - 5 - 3} unchanged, 3 removed, 0 unseen" in err



def test_changes_only_writes_only_new_changed_and_removed(small_crawl) -> None:
    """Runs last on the small site: it edits it."""
    site, server, work, first, first_bytes = small_crawl
    state = _state_copy(work, "state-changes-only")
    leaves = site.leaves()
    site.edit_text(site.paths[20])
    site.delete(leaves[0])
    site.add_page("/new/9.html", 9)
    site.edit_text(site.paths[21], ["/new/9.html"])
    code, err = crawl(server.url + "/", work / "changes-only.jsonl", state, "--changes-only")
    assert code == 0, err[-3000:]
    written = {r["url"].removeprefix(server.url): r["change"] for r in read_records(work / "changes-only.jsonl")}
    assert written == {site.paths[20]: "changed", site.paths[21]: "changed", "/new/9.html": "new", leaves[0]: "removed"}
    ledger = _ledger(work / "changes-only.jsonl")
    assert Counter(ledger.values())["filtered:unchanged"] == SMALL - 1 - 2
    assert _manifest(work / "changes-only.jsonl")["reconciled"] is True
    assert f"changes: 1 new, 2 changed, {SMALL - 3} unchanged, 1 removed, 0 unseen" in err
