"""Scope follow-ups: start URLs that redirect to another origin, robots.txt redirected across origins,
pages that make the spider's callback fail, and the ``scrapy crawl site`` route.

Two (or three) SiteServers on different loopback ports stand in for different hosts. Loopback origins other
than the start URLs' are private, so a test opens one with ``--allow-private`` when it wants the refusal (or
the admission) to be about *offsite*, not about SSRF.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from scrapy import Request
from scrapy.http import Response
from scrapy.utils.test import get_crawler

from _crawlsite import FAST as CRAWL_FAST
from _crawlsite import page, robots, small_site
from _incrawl import run_cli
from conftest import Reply, run_crawl
from hostile_faults import assert_reconciled, read_ledger

from boilerstrip.downloadermiddlewares.scope import ScopeMiddleware
from boilerstrip.outcomes import Filtered

FAST = [*CRAWL_FAST, "--log-level", "INFO"]


def _outcomes(out: Path) -> dict[str, str]:
    return {url: f"{e['outcome']}:{e['reason']}".rstrip(":") for url, e in read_ledger(out).items()}


def _stat(stderr: str, key: str) -> int | None:
    match = re.search(rf"'{re.escape(key)}': (\d+)", stderr)
    return int(match.group(1)) if match else None


def _allow(*servers) -> list[str]:
    return [arg for server in servers for arg in ("--allow-private", f"127.0.0.1:{server.port}")]


# -- ScopeMiddleware glue: which hops are exempt from the offsite rule ---------------------------------------
START = "http://127.0.0.1:8000/"
PUBLIC = "http://93.184.216.34/"  # a global address: no private-address rule in the way


def _mw(**settings) -> tuple[ScopeMiddleware, object]:
    crawler = get_crawler(settings_dict={f"BOILERSTRIP_SCOPE_{k.upper()}": v for k, v in settings.items()})
    mw = ScopeMiddleware.from_crawler(crawler)
    mw.set_start_urls([START])
    return mw, crawler


def _decide(mw: ScopeMiddleware, request: Request) -> str | None:
    try:
        result = mw.process_request(request)
    except Filtered as exc:
        return exc.reason
    assert result is None, "an IP literal needs no DNS"
    return None


def test_a_start_urls_redirect_chain_passes_and_its_final_origin_joins() -> None:
    mw, crawler = _mw()
    hop = Request(PUBLIC + "home", meta={"redirect_urls": [START]})
    assert _decide(mw, Request(PUBLIC + "home")) == "offsite"  # control: not a hop of a start URL
    assert _decide(mw, hop) is None
    assert _decide(mw, Request(PUBLIC + "next")) == "offsite"  # not joined before the chain ends
    mw.process_response(hop, Response(hop.url, status=200, request=hop))
    assert _decide(mw, Request(PUBLIC + "next")) is None  # joined: its links are on site now
    assert crawler.stats.get_value("boilerstrip/scope/start_redirect_origin_added") == 1
    mw.process_response(hop, Response(hop.url, status=200, request=hop))
    assert crawler.stats.get_value("boilerstrip/scope/start_redirect_origin_added") == 1  # counted once


@pytest.mark.parametrize(
    "meta",
    [
        {"redirect_urls": [START + "page"]},  # a redirect of a non-start page
        {"redirect_urls": [START], "depth": 1},  # the start URL reached again as a link
        {"redirect_urls": [START + "sitemap.xml"], "boilerstrip_kind": "sitemap"},  # a sitemap's redirect
    ],
)
def test_other_redirects_to_another_origin_stay_offsite(meta: dict) -> None:
    mw, crawler = _mw()
    hop = Request(PUBLIC, meta=dict(meta))
    assert _decide(mw, hop) == "offsite"
    mw.process_response(hop, Response(PUBLIC, status=200, request=hop))
    assert crawler.stats.get_value("boilerstrip/scope/start_redirect_origin_added") is None


def test_a_start_redirect_is_still_held_to_the_private_address_and_scheme_rules() -> None:
    mw, _ = _mw()
    assert _decide(mw, Request("http://127.0.0.1:8001/", meta={"redirect_urls": [START]})) == "private_address"
    assert _decide(mw, Request("http://169.254.169.254/", meta={"redirect_urls": [START]})) == "private_address"
    # joining does not make a private origin reachable: only --allow-private does
    allowed, _ = _mw(allow_private="127.0.0.1:8001")
    assert _decide(allowed, Request("http://127.0.0.1:8001/", meta={"redirect_urls": [START]})) is None


def test_robots_hops_are_exempt_from_offsite_only() -> None:
    mw, _ = _mw()
    kind = {"boilerstrip_kind": "robots"}
    assert _decide(mw, Request(PUBLIC + "robots.txt", meta=dict(kind))) is None
    assert _decide(mw, Request(PUBLIC + "robots.txt")) == "offsite"  # control: a page request
    assert _decide(mw, Request("http://10.0.0.1/robots.txt", meta=dict(kind))) == "private_address"
    assert _decide(mw, Request("ftp://93.184.216.34/robots.txt", meta=dict(kind))) == "scheme_not_allowed"


# -- start URL redirects, end to end ------------------------------------------------------------------------
def test_start_url_redirecting_to_another_origin_crawls_that_site(serve, tmp_path: Path) -> None:
    third = serve(routes={"/": page("third"), "/x": page("third x")})
    final = serve(
        routes={
            "/": page("home", ["/a", "/go", f"{third.url}/x"]),
            "/a": page("a", ["/"]),
            "/go": Reply(302, b"", (("Location", f"{third.url}/"),)),  # a non-start page redirecting away
            "/robots.txt": robots("User-agent: *\nAllow: /\nSitemap: /pages.xml\n"),
            "/only-in-sitemap": page("only in sitemap"),
        }
    )
    loc = f"<url><loc>{final.url}/only-in-sitemap</loc></url>"
    urlset = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{loc}</urlset>'
    final.routes["/pages.xml"] = Reply(200, urlset.encode(), (("Content-Type", "application/xml"),))
    start = serve(routes={"/": Reply(301, b"", (("Location", f"{final.url}/"),))})
    out = tmp_path / "start-redirect.jsonl"
    # both other origins are opened for SSRF, so whatever is refused below is refused as *offsite*
    proc, records = run_crawl(start.url + "/", out=out, args=[*FAST, *_allow(final, third)])
    assert_reconciled(out, proc)
    outcomes = _outcomes(out)
    assert outcomes[start.url + "/"] == "item", outcomes  # the start URL's record, its content from final
    assert [r["final_url"] for r in records if r["url"] == start.url + "/"] == [final.url + "/"]
    assert outcomes[final.url + "/a"] == "item", outcomes  # the joined site's links are followed
    assert final.hits("/pages.xml") and outcomes[final.url + "/only-in-sitemap"] == "item", outcomes
    assert outcomes[final.url + "/go"] == "filtered:offsite", outcomes  # non-start redirects stay offsite
    assert outcomes[third.url + "/x"] == "filtered:offsite", outcomes
    assert third.requested_paths() == []
    assert _stat(proc.stderr, "boilerstrip/scope/start_redirect_origin_added") == 1
    assert re.search(r"start URL .* redirects to .*joins the crawl's sites", proc.stderr)


def test_start_url_redirecting_to_an_unnamed_private_address_is_refused(serve, tmp_path: Path) -> None:
    final = serve(routes={"/": page("internal", ["/a"]), "/a": page("a")})
    start = serve(routes={"/": Reply(302, b"", (("Location", f"{final.url}/"),))})
    out = tmp_path / "start-private.jsonl"
    proc, records = run_crawl(start.url + "/", out=out, args=FAST)  # the user named start, not final
    assert_reconciled(out, proc)
    assert records == []
    assert _outcomes(out) == {start.url + "/": "filtered:private_address"}
    assert final.requested_paths() == []
    assert _stat(proc.stderr, "boilerstrip/scope/start_redirect_origin_added") is None


# -- robots.txt redirected to another origin ----------------------------------------------------------------
def test_robots_redirect_to_another_origin_is_followed_and_obeyed(serve, tmp_path: Path) -> None:
    cdn = serve(routes={"/robots.txt": robots("User-agent: *\nDisallow: /p1\n"), "/p9": page("cdn page")})
    site = serve(routes=small_site(robots_reply=Reply(301, b"", (("Location", cdn.url + "/robots.txt"),))))
    site.routes["/"] = page("home", ["/p1", "/p2", "/p3", "/p4", cdn.url + "/p9"])
    out = tmp_path / "robots-cdn.jsonl"
    proc, records = run_crawl(site.url + "/", out=out, args=[*FAST, "--no-sitemaps", *_allow(cdn)])
    assert_reconciled(out, proc)
    assert cdn.requested_paths() == ["/robots.txt"]  # the file, and nothing else of that origin
    assert not site.hits("/p1")
    outcomes = _outcomes(out)
    assert outcomes[site.url + "/p1"] == "filtered:robots_disallowed", outcomes
    assert outcomes[cdn.url + "/p9"] == "filtered:offsite", outcomes  # robots hops only, not pages
    assert {r["url"].rsplit("/", 1)[1] for r in records} == {"", "p2", "p3", "p4"}
    assert _stat(proc.stderr, "boilerstrip/robots/fetch/robots_ok") == 1


def test_robots_redirect_to_a_private_address_means_disallow(serve, tmp_path: Path) -> None:
    internal = serve(routes={"/robots.txt": robots("User-agent: *\nAllow: /\n")})
    site = serve(routes=small_site(robots_reply=Reply(302, b"", (("Location", internal.url + "/robots.txt"),))))
    out = tmp_path / "robots-private.jsonl"
    proc, records = run_crawl(site.url + "/", out=out, args=[*FAST, "--no-sitemaps"])
    assert_reconciled(out, proc, returncode=1)  # the only start URL could not be reached
    assert internal.requested_paths() == []
    assert records == []
    assert [e.path for e in site.log] == ["/robots.txt"]  # refused for good: not fetched again, no page
    assert _outcomes(out) == {site.url + "/": "filtered:robots_unreachable"}
    assert read_ledger(out)[site.url + "/"]["detail"] == "redirect_refused:private_address"


# -- a page that breaks the callback is recorded, not lost ---------------------------------------------------
@pytest.mark.parametrize("base", ["http://example.org:port/", "http://[oops/"])
def test_meta_refresh_middleware_keeps_a_page_with_an_unusable_base(base: str) -> None:
    from scrapy.http import HtmlResponse

    from boilerstrip.downloadermiddlewares.metarefresh import TolerantMetaRefreshMiddleware

    crawler = get_crawler(settings_dict={"METAREFRESH_MAXDELAY": 10})
    mw = TolerantMetaRefreshMiddleware.from_crawler(crawler)
    request = Request("http://127.0.0.1:8000/page")
    body = f'<html><head><base href="{base}"><meta http-equiv="refresh" content="0; url=/next"></head></html>'
    response = HtmlResponse(request.url, body=body.encode(), encoding="utf-8", request=request)
    assert mw.process_response(request, response) is response
    assert crawler.stats.get_value("boilerstrip/crawl/meta_refresh_unparsable") == 1
    # control: with a usable base the same refresh is followed
    good = HtmlResponse(request.url, body=body.replace(base, "/").encode(), encoding="utf-8", request=request)
    assert mw.process_response(request, good).url == "http://127.0.0.1:8000/next"


def test_unusable_base_href_neither_loses_the_page_nor_its_links(serve, tmp_path: Path) -> None:
    hostile = (
        b"<!DOCTYPE html><html><head><title>hostile</title><base href='http://[oops/'>"
        b"<link rel='canonical' href='/odd'></head><body><main><h1>Odd base</h1>"
        b"<p>This page carries a base element no URL parser accepts, and a canonical link.</p>"
        b"<a href='/child'>child</a></main></body></html>"
    )
    odd = Reply(200, hostile, (("Content-Type", "text/html"),))
    site = serve(routes={"/": page("home", ["/odd"]), "/odd": odd, "/child": page("child")})
    out = tmp_path / "base.jsonl"
    proc, records = run_crawl(site.url + "/", out=out, args=[*FAST, "--no-sitemaps"])
    assert_reconciled(out, proc)
    outcomes = _outcomes(out)
    assert outcomes[site.url + "/odd"] == "item", outcomes
    assert outcomes[site.url + "/child"] == "item", outcomes  # links resolved against the page URL
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]


# -- `scrapy crawl site` from the project folder --------------------------------------------------------------
def test_scrapy_crawl_route_follows_a_start_redirect_and_reconciles(serve, tmp_path: Path) -> None:
    final = serve(routes=small_site(n=2))
    start = serve(routes={"/": Reply(301, b"", (("Location", f"{final.url}/"),))})
    out = tmp_path / "native.jsonl"
    proc = run_cli(
        ["crawl", "site", "-a", f"url={start.url}/", "-O", str(out),
         "-s", "BOILERSTRIP_PROFILE=test", "-s", "BOILERSTRIP_RENDER_MODE=never", "-s", "LOG_LEVEL=INFO",
         "-s", f"BOILERSTRIP_SCOPE_ALLOW_PRIVATE=127.0.0.1:{final.port}"],
        scrapy=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_reconciled(out, proc)  # the ledger and manifest are written on this route too
    assert {e.path for e in final.log} >= {"/", "/p1", "/p2"}
    outcomes = _outcomes(out)
    assert outcomes[start.url + "/"] == "item" and outcomes[final.url + "/p1"] == "item", outcomes
