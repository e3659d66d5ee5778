"""Glue components built with scrapy.utils.test.get_crawler and fed hand-made requests/responses."""

from __future__ import annotations

import io
import time

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse, Response
from scrapy.utils.test import get_crawler

from boilerstrip.config import ConfigError
from boilerstrip.downloadermiddlewares.htmlonly import HtmlOnlyMiddleware
from boilerstrip.safety.sniff import is_html_content_type
from boilerstrip.downloadermiddlewares.politeness import RETRIES_META, PolitenessMiddleware
from boilerstrip.extensions.progress import ProgressExtension, ProgressParams, summarize
from boilerstrip.items import PageItem
from boilerstrip.outcomes import Filtered
from boilerstrip.pipelines.finalize import FinalizePipeline, content_hash, placeholder_fields


def politeness(**settings) -> tuple[PolitenessMiddleware, object]:
    crawler = get_crawler(settings_dict={"BOILERSTRIP_POLITENESS_PARAMS": {"max_retries": 2, **settings}})
    crawler.stats.open_spider()
    return PolitenessMiddleware.from_crawler(crawler), crawler


def page_request(url: str = "http://example.org/a", **meta) -> Request:
    return Request(url, meta={"download_slot": "example.org", "boilerstrip_kind": "page", **meta})


def test_429_with_retry_after_pauses_the_host_and_retries() -> None:
    mw, crawler = politeness(max_retry_after_s=60)
    request = page_request()
    response = Response(request.url, status=429, headers={"Retry-After": "7"}, request=request)
    before = time.monotonic()
    result = mw.process_response(request, response)
    assert isinstance(result, Request) and result.url == request.url and result.dont_filter
    assert result.meta[RETRIES_META] == 1
    assert mw.paused_until["example.org"] - before == pytest.approx(7, abs=0.5)
    assert crawler.stats.get_value("boilerstrip/politeness/paused/http_429") == 1


def test_a_paused_host_is_on_the_progress_line_until_its_pause_ends() -> None:
    # a host that answers "Retry-After: 600" held its pages for minutes while the line said only
    # "fetched 1 ... 0.0 pages/s" (a stalled crawl, to the eye), and a Ctrl-C waited for them in silence
    from boilerstrip.extensions.progress import paused_hosts, paused_note

    mw, crawler = politeness(max_retry_after_s=60)
    request = page_request()
    before = time.time()
    mw.process_response(request, Response(request.url, status=429, headers={"Retry-After": "40"}, request=request))
    stats = crawler.stats.get_stats()
    count, until = paused_hosts(stats)
    assert count == 1 and until - before == pytest.approx(40, abs=1)
    expected = time.strftime("%H:%M:%S", time.gmtime(until))
    assert paused_note(stats) == f"  [1 host(s) asked to wait (429/503): paused until {expected} UTC]"
    assert paused_note(stats, now=until + 1) == "" and paused_hosts(stats, now=until + 1) == (0, 0.0)  # pause over


def test_a_host_paced_by_its_crawl_delay_is_on_the_progress_line_and_in_the_summary() -> None:
    # a robots.txt "Crawl-delay: 20" made a crawl fetch one page every 20 s while the line said only
    # "(0.1 pages/s)": nothing told the user that the site asked for it
    from boilerstrip.politeness import HostRobots

    mw, crawler = politeness()
    mw.configured_delay_s = 1.0
    mw._robots_ready("http://example.org", HostRobots("http://example.org", action="allow_all", crawl_delay_s=20))
    mw._robots_ready("http://fast.example", HostRobots("http://fast.example", action="allow_all", crawl_delay_s=0.5))
    stream = io.StringIO()
    ext = ProgressExtension(ProgressParams(), crawler.stats, ["out.jsonl"], stream=stream, configured_delay_s=1.0)
    assert ext.line().endswith("  [1 host(s) ask for a Crawl-delay of up to 20 s (robots.txt): one request each that often]")
    ext.spider_closed(reason="finished")
    assert "[boilerstrip]   paced by robots.txt Crawl-delay: example.org 20 s\n" in stream.getvalue()
    quiet = ProgressExtension(ProgressParams(), crawler.stats, [], stream=io.StringIO(), configured_delay_s=30.0)
    assert "Crawl-delay" not in quiet.line()  # DOWNLOAD_DELAY sets the pace: nothing to explain


def test_retry_after_is_capped_and_backoff_doubles_per_host() -> None:
    mw, _ = politeness(max_retry_after_s=5, retry_backoff_base_s=1, max_retries=10)
    request = page_request()
    start = time.monotonic()
    mw.process_response(request, Response(request.url, status=503, headers={"Retry-After": "86400"}, request=request))
    assert mw.paused_until["example.org"] - start == pytest.approx(5, abs=0.5)
    mw.paused_until.clear()
    retry = mw.process_response(request, Response(request.url, status=503, request=request))
    assert retry is not request and mw.paused_until == {}  # one pause per response, not per call
    mw.process_response(retry, Response(retry.url, status=503, request=retry))  # 2nd in a row: 2 s
    assert mw.paused_until["example.org"] - start == pytest.approx(2, abs=0.5)
    ok = Response(request.url, status=200, request=request)
    assert mw.process_response(request, ok) is ok
    assert "example.org" not in mw.consecutive  # a success resets the back-off


def test_give_up_is_passed_on_with_dont_retry() -> None:
    mw, crawler = politeness()
    request = page_request(**{RETRIES_META: 2})
    response = Response(request.url, status=503, request=request)
    assert mw.process_response(request, response) is response
    assert request.meta["dont_retry"] is True  # Scrapy's RetryMiddleware must not retry it again
    assert crawler.stats.get_value("boilerstrip/politeness/gave_up/http_503") == 1


def test_robots_requests_are_left_alone() -> None:
    mw, _ = politeness()
    request = page_request("http://example.org/robots.txt", boilerstrip_kind="robots")
    response = Response(request.url, status=503, request=request)
    assert mw.process_response(request, response) is response
    assert mw.paused_until == {}


def test_bad_politeness_setting_names_the_setting() -> None:
    crawler = get_crawler(settings_dict={"BOILERSTRIP_POLITENESS_PARAMS": {"max_retries": "-3"}})
    with pytest.raises(ConfigError, match="BOILERSTRIP_POLITENESS_PARAMS field max_retries"):
        PolitenessMiddleware.from_crawler(crawler)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("text/html; charset=utf-8", True), (b"application/xhtml+xml", True), ("TEXT/HTML", True),
     ("application/pdf", False), ("image/png", False), ("", None), (None, None)],
)
def test_is_html_content_type(value, expected) -> None:
    assert is_html_content_type(value) is expected


def test_html_only_refuses_non_html_pages_with_a_reason() -> None:
    crawler = get_crawler()
    crawler.stats.open_spider()
    mw = HtmlOnlyMiddleware.from_crawler(crawler)
    request = page_request("http://example.org/file")
    pdf = Response(request.url, status=200, headers={"Content-Type": "application/pdf"}, request=request)
    with pytest.raises(Filtered) as raised:
        mw.process_response(request, pdf)
    assert (raised.value.reason, raised.value.detail) == ("not_html", "application/pdf")
    html = HtmlResponse(request.url, body=b"<p>x</p>", headers={"Content-Type": "text/html"}, request=request)
    assert mw.process_response(request, html) is html
    error = Response(request.url, status=503, headers={"Content-Type": "text/plain"}, request=request)
    assert mw.process_response(request, error) is error  # a 503 is for the politeness middleware
    sitemap = Request("http://example.org/sitemap.xml", meta={"boilerstrip_kind": "sitemap"})
    xml = Response(sitemap.url, status=200, headers={"Content-Type": "application/xml"}, request=sitemap)
    assert mw.process_response(sitemap, xml) is xml


def test_finalize_fills_a_placeholder_and_hashes_the_text() -> None:
    html = """<html lang="de"><head><title> Der  Titel </title></head><body>
      <header>Site name</header><nav><a href="/">Home</a></nav>
      <div><h1>Überschrift</h1><p>Der eigentliche   Text.</p></div>
      <aside>Sidebar</aside><footer>Impressum</footer><script>var x = 1;</script></body></html>"""
    item = PageItem(url="http://example.org/", html=html)
    FinalizePipeline().process_item(item)
    assert item.html is None
    assert item.text == "Überschrift\n\nDer eigentliche Text."
    assert (item.title, item.lang, item.method) == ("Der Titel", "de", "placeholder")
    assert item.content_hash == content_hash(item.text)


def test_finalize_keeps_what_extraction_produced() -> None:
    item = PageItem(url="http://example.org/", html="<p>raw</p>", text="Extracted text.", method="semantic",
                    title="T", lang="en")
    FinalizePipeline().process_item(item)
    assert (item.text, item.method, item.title, item.html) == ("Extracted text.", "semantic", "T", None)
    assert item.content_hash == content_hash("Extracted text.")


@pytest.mark.parametrize("html", ["", "   ", "<<<>>>", "\x00\x01", "<html><body></body></html>", "a" * 10])
def test_placeholder_never_raises(html: str) -> None:
    found = placeholder_fields(html)
    assert isinstance(found["text"], str)


def test_progress_summary_counts_reasons() -> None:
    crawler = get_crawler()
    crawler.stats.open_spider()
    for key, n in {"response_received_count": 7, "item_scraped_count": 5, "boilerstrip/filtered/offsite": 3,
                   "boilerstrip/filtered/robots_disallowed": 1, "boilerstrip/failed/http_404": 2}.items():
        crawler.stats.set_value(key, n)
    s = summarize(crawler.stats.get_stats(), 2.0)
    assert (s["fetched"], s["written"]) == (7, 5)
    assert s["filtered"] == {"offsite": 3, "robots_disallowed": 1} and s["failed"] == {"http_404": 2}
    stream = io.StringIO()
    ext = ProgressExtension(ProgressParams(), crawler.stats, ["out.jsonl"], stream=stream)
    ext.spider_closed(reason="finished")
    text = stream.getvalue()
    assert "7 pages fetched, 5 pages extracted" in text
    assert "skipped by reason: offsite=3, robots_disallowed=1" in text
    assert "failed by reason: http_404=2" in text and "output: out.jsonl" in text


def test_progress_live_line_names_top_reasons() -> None:
    crawler = get_crawler()
    crawler.stats.open_spider()
    for key, n in {"response_received_count": 3, "boilerstrip/filtered/offsite": 9, "boilerstrip/filtered/max_pages": 4,
                   "boilerstrip/filtered/not_html": 2, "boilerstrip/filtered/robots_disallowed": 1}.items():
        crawler.stats.set_value(key, n)
    ext = ProgressExtension(ProgressParams(live_reasons=2), crawler.stats, [], stream=io.StringIO())
    line = ext.line()
    assert "fetched 3" in line and "skipped 16 (offsite=9, max_pages=4, ...)" in line


def test_a_host_failing_for_minutes_is_given_up_and_its_held_requests_fail_at_once() -> None:
    # a site that went down mid-crawl held the crawl for days: each of its ~1,000 pages waited out the capped
    # back-off three times (connection refused), the line said "0.1 pages/s"
    import asyncio

    from twisted.internet.error import ConnectionRefusedError as Refused

    from boilerstrip.extensions.progress import down_hosts, paused_note
    from boilerstrip.outcomes import HostDown, failure_reason

    mw, crawler = politeness(host_down_after_s=300, host_down_min_failures=5, retry_backoff_base_s=2)
    now = [1000.0]
    mw.clock = lambda: now[0]
    request = page_request()
    for _ in range(4):  # four failures over ten minutes: not yet (five are needed)
        mw.process_exception(request, Refused())
        now[0] += 150
    assert "example.org" not in mw.down and mw.paused_until["example.org"] > time.monotonic()
    assert "not answering: next try at" in paused_note(crawler.stats.get_stats())
    mw.process_exception(request, Refused())  # the fifth, 600 s after the first
    assert "600 s: 5 failures in a row, the last connection_refused" in mw.down["example.org"]
    assert "example.org" not in mw.paused_until  # the pause it held its requests for is over
    stats = crawler.stats.get_stats()
    assert set(down_hosts(stats)) == {"example.org"}
    assert paused_note(stats) == "  [1 host(s) given up: their pages fail as host_down]"
    with pytest.raises(HostDown) as raised:  # the retry (and every later page) fails at once, with the reason
        asyncio.run(mw.process_request(page_request("http://example.org/b")))
    assert failure_reason(raised.value) == "host_down" and "5 failures in a row" in str(raised.value)
    other = Request("http://example.net/", meta={"download_slot": "example.net", "boilerstrip_kind": "page"})
    assert asyncio.run(mw.process_request(other)) is None  # another host goes on


def test_a_good_answer_ends_a_hosts_failures_and_a_moments_burst_is_no_outage() -> None:
    from twisted.internet.error import TimeoutError as TimedOut

    mw, _ = politeness(host_down_after_s=300, host_down_min_failures=5)
    now = [0.0]
    mw.clock = lambda: now[0]
    request = page_request()
    for _ in range(20):  # the requests in flight when a site restarts fail together: twenty in one second
        mw.process_exception(request, TimedOut())
        now[0] += 0.05
    assert mw.down == {}
    now[0] += 400  # back after the restart: a page answers, then one more failure starts a new streak
    ok = Response(request.url, status=200, request=request)
    assert mw.process_response(request, ok) is ok
    mw.process_exception(request, TimedOut())
    now[0] += 400
    mw.process_exception(request, TimedOut())
    assert mw.down == {} and mw.streaks["example.org"].count == 2
    # a 5xx answer is a failure too (a proxy in front of a dead site: 502 after 502)
    for _ in range(3):
        bad = Response(request.url, status=502, request=request)
        assert mw.process_response(request, bad) is bad
    assert "the last http_502" in mw.down["example.org"]


def test_a_host_answering_429_for_good_is_given_up_and_the_answer_in_hand_is_not_retried() -> None:
    mw, crawler = politeness(host_down_after_s=300, host_down_min_failures=5, max_retries=10)
    now = [0.0]
    mw.clock = lambda: now[0]
    request = page_request()
    for _ in range(4):
        retry = mw.process_response(request, Response(request.url, status=429, request=request))
        assert isinstance(retry, Request)
        request = retry
        now[0] += 100
    last = Response(request.url, status=429, request=request)
    assert mw.process_response(request, last) is last  # given up: no retry, the errback records it
    assert request.meta["dont_retry"] is True and "the last http_429" in mw.down["example.org"]
    assert crawler.stats.get_value("boilerstrip/politeness/paused_until/example.org") == 0.0  # no pause shown


def test_never_giving_up_on_a_host_is_a_setting() -> None:
    from boilerstrip.politeness import FailureStreak, PolitenessParams, host_down

    streak = FailureStreak(since=0.0, count=1000, last="timeout")
    assert host_down(streak, 10_000.0, PolitenessParams())
    assert not host_down(streak, 10_000.0, PolitenessParams(host_down_after_s=0))
    assert not host_down(streak, 299.0, PolitenessParams())  # not long enough
    assert not host_down(FailureStreak(since=0.0, count=4), 10_000.0, PolitenessParams())  # not often enough
    with pytest.raises(ValueError, match="host_down_min_failures"):
        PolitenessParams(host_down_min_failures=0)
