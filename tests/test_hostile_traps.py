"""Crawler traps: the pure rules, then TrapFilterMiddleware with real Requests/Responses and its reasons."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from boilerstrip.config import ConfigError
from boilerstrip.outcomes import url_settled
from boilerstrip.safety.traps import TrapParams, TrapState, is_date_like, url_pattern
from boilerstrip.urls import strip_session_ids
from boilerstrip.spidermiddlewares.traps import TrapFilterMiddleware


@pytest.mark.parametrize(
    ("url", "clean"),
    [
        ("http://a/x;jsessionid=ABC123?y=1", "http://a/x?y=1"),
        ("http://a/x?PHPSESSID=abc&page=2", "http://a/x?page=2"),
        ("http://a/x?sid=1&sort=asc&SessionId=2", "http://a/x?sort=asc"),
        ("http://a/x?page=2", "http://a/x?page=2"),
        ("http://a/side/", "http://a/side/"),  # "sid" only as a parameter name
    ],
)
def test_session_ids_are_stripped(url: str, clean: str) -> None:
    assert strip_session_ids(url) == clean


@pytest.mark.parametrize(
    ("url", "date_like"),
    [
        ("http://a/cal?year=2026&month=11", True),
        ("http://a/events/2026/11/30", True),
        ("http://a/archive/2026-11", True),
        ("http://a/post/12345", False),
        ("http://a/products?page=7", False),
    ],
)
def test_date_like_urls(url: str, date_like: bool) -> None:
    assert is_date_like(url) is date_like


def test_patterns_normalise_digits_and_query_order() -> None:
    assert url_pattern("http://a/cal?year=2026&month=11") == url_pattern("http://a/cal?month=1&year=1999")
    assert url_pattern("http://a/cal/2026/11") != url_pattern("http://a/news/2026/11")


def test_trap_state_budgets_and_reasons() -> None:
    state = TrapState(TrapParams(max_depth=3, max_pages_per_host=5, max_urls_per_pattern=2, max_url_chars=60))
    assert state.check("http://a/x", depth=4) == "max_depth"
    assert state.check("http://a/" + "y" * 80, depth=1) == "url_too_long"
    assert state.check("http://a/a/b/a/b/a/b", depth=1) == "repeated_segments"
    assert state.check("http://a/a/b/a/b", depth=1) is None  # twice is fine
    for month in (1, 2):
        assert state.check(f"http://a/cal/2026/{month}", depth=1) is None
        state.admit(f"http://a/cal/2026/{month}")
    assert state.check("http://a/cal/2026/3", depth=1) == "pattern_budget"
    for i in range(3):
        state.admit(f"http://a/p{i}")
    assert state.check("http://a/p9", depth=1) == "host_budget"
    assert state.check("http://b/p9", depth=1) is None  # per host
    assert state.check("http://a/p1", depth=1) is None  # already admitted: not counted again


def test_bad_trap_setting_names_itself() -> None:
    with pytest.raises(ConfigError, match="BOILERSTRIP_TRAPS_PARAMS field max_depth"):
        TrapFilterMiddleware.from_crawler(get_crawler(settings_dict={"BOILERSTRIP_TRAPS_PARAMS": {"max_depth": "deep"}}))


def _run(mw: TrapFilterMiddleware, response: HtmlResponse, requests: list) -> list:
    return list(mw.process_spider_output(response, iter(requests)))


def test_middleware_filters_reports_once_and_strips_session_ids() -> None:
    crawler = get_crawler(
        settings_dict={"BOILERSTRIP_TRAPS_PARAMS": {"max_outlinks_per_page": 3, "max_urls_per_pattern": 1}}
    )
    settled: list[tuple[str, str, str]] = []

    def on_settled(url, outcome, reason, **kw):
        settled.append((url, outcome, reason))

    crawler.signals.connect(on_settled, signal=url_settled)
    mw = TrapFilterMiddleware.from_crawler(crawler)
    page = HtmlResponse("http://a/", body=b"<html></html>", request=Request("http://a/", meta={"depth": 0}))
    item = {"url": "http://a/"}
    out = _run(
        mw,
        page,
        [item, Request("http://a/x;jsessionid=1"), Request("http://a/cal/2026/1"), Request("http://a/cal/2026/2"),
         Request("http://a/four"), Request("http://a/five")],
    )  # fmt: skip
    assert out[0] is item  # items pass untouched
    assert [r.url for r in out[1:]] == ["http://a/x", "http://a/cal/2026/1"]
    assert ("http://a/cal/2026/2", "filtered", "pattern_budget") in settled
    assert ("http://a/five", "filtered", "outlink_cap") in settled
    # the same over-cap URL linked from another page is reported once
    _run(mw, page, [Request("http://a/p1"), Request("http://a/p2"), Request("http://a/p3"), Request("http://a/five")])
    assert sum(1 for s in settled if s[0] == "http://a/five") == 1
    stats = crawler.stats
    assert stats.get_value("boilerstrip/traps/session_id_stripped") == 1
    assert stats.get_value("boilerstrip/traps/filtered/outlink_cap") == 3  # "four" and "five", then "five" again
    exempt = Request("http://a/cal/2026/3", meta={"boilerstrip_traps_exempt": True})
    assert _run(mw, page, [exempt]) == [exempt]


def test_links_to_other_schemes_are_recorded_once_never_requested() -> None:
    crawler = get_crawler()
    settled: list[tuple[str, str]] = []

    def on_settled(url, outcome, reason, **kw):
        settled.append((url, reason))

    crawler.signals.connect(on_settled, signal=url_settled)
    mw = TrapFilterMiddleware.from_crawler(crawler)
    body = (
        b'<a href="file:///etc/hostname">a</a><a href=" FTP://x/y">b</a><a href="data:text/html,hi">c</a>'
        b'<a href="mailto:me@x">d</a><a href="javascript:void(0)">e</a><a href="/ok">f</a><a href="file:///etc/hostname">g</a>'
    )
    page = HtmlResponse("http://a/", body=body, request=Request("http://a/"))
    assert _run(mw, page, []) == []
    assert settled == [
        ("file:///etc/hostname", "scheme_not_allowed"),
        ("FTP://x/y", "scheme_not_allowed"),
        ("data:text/html,hi", "scheme_not_allowed"),
    ]
