"""Recurring crawls without a crawl: the pure decisions (boilerstrip.recrawl), the change step over an
in-memory state, the conditional answers of the test server, and the two middlewares with hand-made
requests and responses."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from urllib.error import HTTPError

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler

from boilerstrip.demo.server import Reply, SiteServer
from boilerstrip.finishing import FinishContext, run_steps
from boilerstrip.finishing.change import ChangeStep
from boilerstrip.items import PageItem
from boilerstrip.recrawl import (
    RecrawlParams,
    change_of,
    lastmod_unchanged,
    reuse_refusal,
    settings_digest,
    stub_html,
    text_hash,
    vanished_verdicts,
)
from boilerstrip.state import MemoryState, PageCopy, UrlState


def test_the_recrawl_core_loads_no_scrapy() -> None:
    code = ("import sys, boilerstrip.recrawl, boilerstrip.finishing.change, boilerstrip.schedule.jobs;"
            "bad=[m for m in sys.modules if m.split('.')[0] in ('scrapy','twisted','playwright','apscheduler')];"
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("lastmod, last_seen, skip", [
    ("2026-11-29T10:00:00Z", "2026-11-30T10:00:00Z", True),
    ("2026-11-30T10:00:00Z", "2026-11-30T10:00:00Z", False),  # the same second: may have changed after
    ("2026-11-30", "2026-11-30T23:00:00Z", False),  # a date is the whole day
    ("2026-11-29", "2026-11-30T00:00:00Z", True),
    ("2026-11-29T11:00:00+01:00", "2026-11-29T10:30:00Z", True),
    ("yesterday", "2026-11-30T10:00:00Z", False),  # unreadable: fetch
    (None, "2026-11-30T10:00:00Z", False),
    ("2026-11-29", None, False),
])
def test_sitemap_lastmod_skips_only_what_changed_before_the_last_visit(lastmod, last_seen, skip) -> None:
    assert lastmod_unchanged(lastmod, last_seen) is skip


def _state(**kw) -> UrlState:
    values = {"url": "http://s/a", "site": "s", "text_hash": text_hash("x"), "last_outcome": "item", "settings_digest": "d"}
    values.update(kw)
    return UrlState(**values)


def test_change_is_decided_on_the_text_hash() -> None:
    assert change_of(None, text_hash("x")) == "new"
    assert change_of(_state(), text_hash("x")) == "unchanged"
    assert change_of(_state(), text_hash("y")) == "changed"
    assert change_of(_state(last_outcome="removed:http_404"), text_hash("x")) == "new"  # back after removal
    assert change_of(_state(last_outcome="failed:timeout", text_hash=None), text_hash("x")) == "new"


def test_stored_state_stands_in_only_under_the_same_settings() -> None:
    assert reuse_refusal(None, False, "d") == "unknown_url"
    assert reuse_refusal(_state(settings_digest="other"), True, "d") == "settings_changed"
    assert reuse_refusal(_state(), False, "d") == "no_stored_copy"
    assert reuse_refusal(_state(last_outcome="filtered:duplicate"), True, "d") == "not_a_page_last_time"
    assert reuse_refusal(_state(), True, "d") is None
    from boilerstrip.extraction.params import ExtractionParams

    assert settings_digest(ExtractionParams()) == settings_digest(ExtractionParams())
    assert settings_digest(ExtractionParams()) != settings_digest(ExtractionParams(), extra={"markdown": "false"})


def test_vanished_pages_are_removed_only_by_a_whole_plausible_crawl() -> None:
    params = RecrawlParams()
    gone = [("http://s/a", "http_404", "t"), ("http://s/b", "unreachable", "t")]
    assert [v.change for v in vanished_verdicts(100, gone, None, params)] == ["removed", "removed"]
    cut = vanished_verdicts(100, gone, "max_pages", params)
    assert [(v.change, v.reason) for v in cut] == [("unseen", "crawl_cut:max_pages:http_404"),
                                                   ("unseen", "crawl_cut:max_pages:unreachable")]
    many = [(f"http://s/{i}", "unreachable", "t") for i in range(60)]
    assert {v.change for v in vanished_verdicts(100, many, None, params)} == {"unseen"}
    assert {v.reason for v in vanished_verdicts(100, many, None, params)} == {"vanished_share_too_high:unreachable"}
    assert {v.change for v in vanished_verdicts(100, many[:50], None, params)} == {"removed"}  # half is still plausible
    assert {v.change for v in vanished_verdicts(4, many[:3], None, params)} == {"removed"}  # a small site


def test_stub_page_holds_the_links_escaped() -> None:
    html = stub_html({"base": "http://s/x/", "hrefs": ["a?b=1&c=2", '"><script>'], "canonical": "/c"})
    assert '<base href="http://s/x/">' in html and 'href="a?b=1&amp;c=2"' in html
    assert "<script>" not in html and '<link rel="canonical" href="/c">' in html


def _page(url: str, text: str, **extra) -> dict:
    return {"url": url, "final_url": url, "status": 200, "text": text, "flags": [], **extra}


def _run(step: ChangeStep, state: MemoryState, records: list[dict]) -> list[dict]:
    return list(run_steps(records, [step], FinishContext(state=state)))


def test_change_step_marks_pages_and_writes_tombstones() -> None:
    state = MemoryState()
    links = {"base": "http://s/", "hrefs": ["/b"], "canonical": None}
    facts = {"http://s/a": {"status": 200, "etag": '"1"', "links": links}, "http://s/b": {"status": 200, "links": links}}
    first = _run(ChangeStep(digest="d", facts=facts.get, settled={}, now="2026-12-01T00:00:00Z"), state,
                 [_page("http://s/a", "alpha"), _page("http://s/b", "beta"), _page("http://s/c", "gamma")])
    assert [(r["url"], r["change"], r["first_seen"]) for r in first] == [
        ("http://s/a", "new", "2026-12-01T00:00:00Z"), ("http://s/b", "new", "2026-12-01T00:00:00Z"),
        ("http://s/c", "new", "2026-12-01T00:00:00Z")]
    assert state.history.get("http://s/a").etag == '"1"' and state.pages.get("http://s/a").links == links
    assert state.pages.get("http://s/c") is None and state.history.get("http://s/c").etag is None  # no links: no copy
    assert "change" not in state.pages.get("http://s/a").record
    second = _run(ChangeStep(digest="d", facts=facts.get, settled={"http://s/c": "failed:http_410"},
                             now="2026-12-02T00:00:00Z"), state,
                  [_page("http://s/a", "alpha"), _page("http://s/b", "beta, edited")])
    assert [(r["url"], r["change"]) for r in second] == [("http://s/a", "unchanged"), ("http://s/b", "changed"),
                                                        ("http://s/c", "removed")]
    assert second[0]["last_changed"] == "2026-12-01T00:00:00Z" and second[1]["last_changed"] == "2026-12-02T00:00:00Z"
    assert second[2] == {"url": "http://s/c", "change": "removed", "reason": "http_410", "last_seen": "2026-12-01T00:00:00Z"}
    assert state.history.get("http://s/c").last_outcome == "removed:http_410"
    third = _run(ChangeStep(digest="d", facts=facts.get, settled={}), state, [_page("http://s/a", "alpha")])
    assert [(r["url"], r["change"], r.get("reason")) for r in third] == [("http://s/a", "unchanged", None),
                                                                       ("http://s/b", "removed", "unreachable")]


def test_change_step_without_a_ledger_removes_nothing_by_absence() -> None:
    state = MemoryState()
    _run(ChangeStep(digest="d", settled={}), state, [_page("http://s/a", "a"), _page("http://s/b", "b")])
    out = _run(ChangeStep(digest="d", settled=None), state, [_page("http://s/a", "a")])
    assert [r["change"] for r in out] == ["unchanged"]


def test_the_test_server_answers_conditional_requests_and_counts_bytes() -> None:
    reply = Reply(200, b"<p>hi</p>", (("Content-Type", "text/html"), ("ETag", '"v1"'),
                                      ("Last-Modified", "Mon, 30 Nov 2026 10:00:00 GMT")))
    with SiteServer(routes={"/": reply}) as server:
        def get(**headers) -> tuple[int, bytes]:
            try:
                with urllib.request.urlopen(urllib.request.Request(server.url + "/", headers=headers)) as r:
                    return r.status, r.read()
            except HTTPError as exc:
                return exc.code, exc.read()

        assert get() == (200, b"<p>hi</p>")
        full = server.bytes_sent
        assert full > len(b"<p>hi</p>")
        assert get(**{"If-None-Match": 'W/"v1"'})[0] == 304
        assert get(**{"If-None-Match": '"v0"'})[0] == 200
        assert get(**{"If-Modified-Since": "Mon, 30 Nov 2026 10:00:00 GMT"})[0] == 304
        assert get(**{"If-Modified-Since": "Sun, 29 Nov 2026 10:00:00 GMT"})[0] == 200
        server.reset_counts()
        get(**{"If-None-Match": '"v1"'})
        assert 0 < server.bytes_sent < full


# -- glue: the middlewares with hand-made requests and responses ---------------------------------------------
def _middlewares(tmp_path, state):
    from boilerstrip.downloadermiddlewares.conditional import ConditionalRequestMiddleware
    from boilerstrip.spidermiddlewares.recrawl import RecrawlMiddleware

    crawler = get_crawler(settings_dict={"BOILERSTRIP_STATE_DIR": str(tmp_path)})
    from boilerstrip.recrawl import digest_of_settings

    dmw = ConditionalRequestMiddleware(RecrawlParams(), digest_of_settings(crawler.settings), state=state,
                                       stats=crawler.stats)
    return crawler, dmw, RecrawlMiddleware(stats=crawler.stats)


def test_a_304_re_emits_the_stored_record_and_links(tmp_path) -> None:
    from boilerstrip.recrawl import digest_of_settings

    state = MemoryState()
    digest = digest_of_settings(get_crawler(settings_dict={}).settings)
    record = {"url": "http://s/a", "final_url": "http://s/a", "status": 200, "text": "stored text",
              "page_block_hashes": ["h1", "h2"], "flags": ["x"], "change": None}
    state.history.put(_state(etag='"e1"', last_modified="Mon, 30 Nov 2026 10:00:00 GMT", settings_digest=digest,
                             last_seen="2026-11-30T11:00:00Z"))
    state.pages.put(PageCopy("http://s/a", record, {"base": "http://s/a", "hrefs": ["/b", "c"], "canonical": None}))
    crawler, dmw, smw = _middlewares(tmp_path, state)
    request = Request("http://s/a")
    assert dmw.process_request(request) is None
    assert request.headers[b"If-None-Match"] == b'"e1"' and request.headers[b"If-Modified-Since"]
    stub = dmw.process_response(request, Response("http://s/a", status=304, headers={"ETag": '"e1"'}, request=request))
    assert isinstance(stub, HtmlResponse) and stub.status == 200 and stub.meta["boilerstrip_reused"] == "not_modified"
    assert stub.xpath("//a/@href").getall() == ["/b", "c"] and stub.meta["boilerstrip_dont_render"] is True
    spider_item = PageItem(url="http://s/a", depth=2, fetched_at="2026-12-01T00:00:00Z", html=stub.text)
    [item] = list(smw.process_spider_output(stub, [spider_item]))
    assert item.text == "stored text" and item.html is None and item.depth == 2
    assert item.page_block_hashes == ["h1", "h2"] and item.flags == ["x", "reused:not_modified"]
    assert smw.facts_for("http://s/a")["links"]["hrefs"] == ["/b", "c"]
    assert crawler.stats.get_value("boilerstrip/recrawl/not_modified") == 1
    # a page that changed comes back whole, untouched
    request = Request("http://s/a")
    dmw.process_request(request)
    fresh = HtmlResponse("http://s/a", body=b"<a href='/z'>z</a>", headers={"ETag": '"e2"'}, request=request)
    assert dmw.process_response(request, fresh) is fresh
    list(smw.process_spider_output(fresh, [PageItem(url="http://s/a", html=fresh.text)]))
    assert smw.facts_for("http://s/a") == {"status": 200, "etag": '"e2"', "last_modified": None,
                                           "links": {"base": "http://s/a", "hrefs": ["/z"], "canonical": None}}
    # a sitemap lastmod older than the last visit: no request at all
    request = Request("http://s/a", meta={"boilerstrip_sitemap_lastmod": "2026-11-29"})
    answered = dmw.process_request(request)
    assert isinstance(answered, HtmlResponse) and answered.meta["boilerstrip_reused"] == "sitemap_lastmod"
    smw.close()


def test_nothing_is_conditional_under_other_settings_or_for_the_browser(tmp_path) -> None:
    state = MemoryState()
    state.history.put(_state(etag='"e1"', settings_digest="made-with-other-settings"))
    state.pages.put(PageCopy("http://s/a", {"url": "http://s/a"}, {"base": "http://s/a", "hrefs": []}))
    crawler, dmw, smw = _middlewares(tmp_path, state)
    request = Request("http://s/a")
    assert dmw.process_request(request) is None and b"If-None-Match" not in request.headers
    assert crawler.stats.get_value("boilerstrip/recrawl/full_fetch/settings_changed") == 1
    state.history.put(_state(etag='"e1"', settings_digest=dmw.digest))
    browser = Request("http://s/a", meta={"playwright": True})
    assert dmw.process_request(browser) is None and b"If-None-Match" not in browser.headers
    conditional = Request("http://s/a")
    dmw.process_request(conditional)
    reissued = conditional.replace(meta={**conditional.meta, "playwright": True})
    dmw.process_request(reissued)
    assert b"If-None-Match" not in reissued.headers  # a browser re-issue never asks conditionally
    json.dumps(smw.facts_for("http://s/a"))  # None


def test_offsite_links_do_not_make_another_crawls_pages_vanish() -> None:
    """Two sites crawled into one state folder by two crawls: crawl B links to site A (offsite)."""
    state = MemoryState()
    _run(ChangeStep(digest="d", settled={}), state, [_page("http://a/1", "one"), _page("http://a/2", "two")])
    out = _run(ChangeStep(digest="d", settled={"http://b/": "item:", "http://a/1": "filtered:offsite"}), state,
               [_page("http://b/", "bee")])
    assert [(r["url"], r["change"]) for r in out] == [("http://b/", "new")]
    assert state.history.get("http://a/2").last_outcome == "item"


def test_a_retried_conditional_request_can_still_be_answered_by_a_304(tmp_path) -> None:
    from boilerstrip.recrawl import digest_of_settings

    state = MemoryState()
    state.history.put(_state(etag='"e1"', settings_digest=digest_of_settings(get_crawler(settings_dict={}).settings)))
    state.pages.put(PageCopy("http://s/a", {"url": "http://s/a", "text": "t"}, {"base": "http://s/a", "hrefs": []}))
    crawler, dmw, smw = _middlewares(tmp_path, state)
    request = Request("http://s/a")
    dmw.process_request(request)
    busy = Response("http://s/a", status=503, request=request)
    assert dmw.process_response(request, busy) is busy
    retry = request.replace(dont_filter=True)  # what RetryMiddleware sends: same meta, same headers
    assert dmw.process_request(retry) is None and retry.headers[b"If-None-Match"] == b'"e1"'
    answered = dmw.process_response(retry, Response("http://s/a", status=304, request=retry))
    assert answered.status == 200 and answered.meta["boilerstrip_reused"] == "not_modified"
