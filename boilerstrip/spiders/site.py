"""SiteSpider ("site"): crawl each start URL's site and yield one PageItem per HTML page.

``scrapy crawl site -a url=https://example.org/ -O out.jsonl`` or ``boilerstrip crawl URL -o out.jsonl``.

Arguments (``-a NAME=VALUE``; each beats its ``BOILERSTRIP_CRAWL_*`` setting):

- ``url``: one start URL, or several separated by commas;
- ``max_pages``: admit at most this many page requests (0 = no limit);
- ``max_depth``: follow links at most this many hops from a start URL (-1 = no limit);
- ``scope``: ``host`` (the start URL's host and port, the default) or ``domain`` (its registrable domain
  and port); what a site is lives in :mod:`boilerstrip.scope`;
- ``sitemaps``: read robots.txt ``Sitemap:`` lines and ``/sitemap.xml`` (true by default).

Every URL is normalised (:mod:`boilerstrip.urls`) before it becomes a request and admitted once. Every
admitted URL ends as an item or as an outcome with a reason (:mod:`boilerstrip.outcomes`): the errback
records failures and refusals; offsite, over-depth and over-budget links are recorded as filtered once
per distinct URL; requests the scheduler drops as duplicates are recorded as ``filtered:duplicate``; a
page whose callback raises is recorded as ``failed:parse_error`` (never lost, never fatal to the crawl).

A start URL that redirects to another site (``example.org`` -> ``www.example.org``) brings that site into
the crawl: its links are followed as the start URL's would be (and its sitemaps read). The scope middleware
lets the same redirect chain through; redirects of any other page to another site stay offsite.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, Spider, signals
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Response
from scrapy.linkextractors import IGNORED_EXTENSIONS
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap

from boilerstrip import ROBOTS_TOKEN
from boilerstrip.config import params_from_settings, setting_name
from boilerstrip.optout import robots_nofollow
from boilerstrip.safety.sniff import sniff_not_html
from boilerstrip.politeness import HostRobots, robots_ready
from boilerstrip.extraction import ExtractionParams
from boilerstrip.items import PageItem
from boilerstrip.outcomes import CrawlStopping, Filtered, failure_reason, report_failed, report_filtered
from boilerstrip.scope import in_scope, joined_site, origin, site_key
from boilerstrip.reading.links import PageLinks, page_links
from boilerstrip.urls import UrlParams, link_targets, normalize_url, url_credentials
from boilerstrip.rendering.flags import render_flags
from boilerstrip.meta import BODY_FLAGS_META, KIND_META, LASTMOD_META, OPT_OUT_META, READING_META, RENDER_REASON_META

__all__ = ["SiteSpider", "CrawlParams", "parse_start_urls"]

logger = logging.getLogger(__name__)

_GZIP_MAGIC = b"\x1f\x8b"
#: how far into a sitemap body its root element (urlset / sitemapindex) is looked for
_SITEMAP_SNIFF_BYTES = 64 * 1024
#: reasons and details passed to outcomes are cut to this many characters
_DETAIL_CHARS = 200
#: links to these file types are not followed (images, archives, media, office files: Scrapy's list)
_SKIPPED_EXTENSIONS = frozenset("." + ext for ext in IGNORED_EXTENSIONS)


def _has_credentials(given: str | Iterable[str] | None) -> bool:
    """Does a start URL of ``url=`` (comma-separated) or of a list carry ``user:password@``?"""
    urls = given.split(",") if isinstance(given, str) else list(given or ())
    try:
        return url_credentials(urls) is not None
    except ValueError:  # several sets: credentials all the same
        return True


def _status_line(response: Response) -> str:
    """"404 Not Found": a response's status and its standard reason phrase (the status alone when it has none)."""
    try:
        return f"{response.status} {HTTPStatus(response.status).phrase}"
    except ValueError:
        return str(response.status)


def _ignored_extension(url: str) -> bool:
    path = urlsplit(url).path.lower()
    dot = path.rfind(".")
    return dot > path.rfind("/") and path[dot:] in _SKIPPED_EXTENSIONS


@dataclass(frozen=True)
class CrawlParams:
    # "host" keeps the crawl on the start URL's host:port; "domain" widens it to the registrable domain.
    scope: str = "host"
    # 0 = no limit. A budget of admitted page requests (start URLs included), not of items written.
    max_pages: int = 0
    # -1 = no limit. Link hops from a start URL (a sitemap file counts as one hop).
    max_depth: int = -1
    # Read robots.txt Sitemap: lines and /sitemap.xml (index files and .gz included).
    sitemaps: bool = True
    # A sitemap larger than 50 MiB uncompressed is truncated: the sitemaps.org limit is 50 MB.
    max_sitemap_bytes: int = 50 * 1024 * 1024
    # Sitemap index files nest at most this deep (index -> index -> urlset); deeper is a trap.
    max_sitemap_nesting: int = 3
    # A page whose <meta name="robots"> (or name="boilerstrip") or X-Robots-Tag for us says nofollow (or none):
    # its links are not followed; the page itself is read (flag robots_nofollow:meta / :header).
    obey_nofollow: bool = True

    def __post_init__(self) -> None:
        if self.scope not in ("host", "domain"):
            raise ValueError(f"scope must be 'host' or 'domain', got {self.scope!r}")
        if self.max_pages < 0:
            raise ValueError("max_pages must be >= 0 (0 = no limit)")
        if self.max_depth < -1:
            raise ValueError("max_depth must be >= -1 (-1 = no limit)")
        if self.max_sitemap_bytes < 1024 or self.max_sitemap_nesting < 0:
            raise ValueError("max_sitemap_bytes must be >= 1024 and max_sitemap_nesting >= 0")


def parse_start_urls(value: str | Iterable[str] | None) -> list[str]:
    """Normalised start URLs from ``url=`` (comma-separated) or a list; ValueError names a bad one."""
    if value is None:
        raise ValueError("no start URL: pass -a url=https://example.org/")
    raw = [part.strip() for part in value.split(",")] if isinstance(value, str) else [str(v).strip() for v in value]
    urls: list[str] = []
    for item in raw:
        if not item:
            continue
        normal = normalize_url(item)
        if normal is None:
            raise ValueError(f"not an http(s) URL: {item!r}")
        if normal not in urls:
            urls.append(normal)
    if not urls:
        raise ValueError("no start URL: pass -a url=https://example.org/")
    return urls


class SiteSpider(Spider):
    name = "site"

    def __init__(
        self,
        url: str | None = None,
        max_pages: str | int | None = None,
        max_depth: str | int | None = None,
        scope: str | None = None,
        sitemaps: str | bool | None = None,
        start_urls: Iterable[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        given = start_urls if start_urls is not None else url
        self.start_urls = parse_start_urls(given)
        # user:password@ in a start URL given here (scrapy crawl site -a url=...): the settings are frozen and the
        # normal form dropped them; boilerstrip crawl sends them (HTTPAUTH_*). Said, not a login page in silence
        if _has_credentials(given):
            logger.warning("the credentials (user:password@) of the start URL are not sent from here: give "
                           "-s HTTPAUTH_USER=... -s HTTPAUTH_PASS=... -s HTTPAUTH_DOMAIN=HOST[:PORT] (boilerstrip crawl "
                           "sends them by itself)")
        self._arg_overrides = {
            key: value
            for key, value in {
                "max_pages": max_pages,
                "max_depth": max_depth,
                "scope": scope,
                "sitemaps": sitemaps,
            }.items()
            if value is not None and value != ""
        }
        self.params = CrawlParams()
        self.sites: frozenset[str] = frozenset()
        self.seen: set[str] = set()  # every normalised URL we decided about (admitted or refused)
        self.admitted: set[str] = set()  # page URLs admitted as requests
        self.claimed: set[str] = set()  # canonical URLs a recorded variant already stands for
        self.sitemaps_seen: set[str] = set()
        self.robots_sitemaps: dict[str, tuple[str, ...]] = {}  # origin -> its robots.txt Sitemap: lines
        self.url_params = UrlParams()
        self.max_nodes = 0  # ExtractionParams.max_nodes (BOILERSTRIP_EXTRACTION_PARAMS), read in from_crawler

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> "SiteSpider":
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings_view = dict(_settings_items(crawler.settings, "crawl", CrawlParams))
        for key, value in spider._arg_overrides.items():
            settings_view[f"BOILERSTRIP_CRAWL_{key.upper()}"] = value
        spider.params = params_from_settings(settings_view, "crawl", CrawlParams)
        spider.url_params = params_from_settings(crawler.settings, "urls", UrlParams)
        spider.max_nodes = params_from_settings(crawler.settings, "extraction", ExtractionParams).max_nodes
        spider.start_urls = [spider._normal(u) or u for u in spider.start_urls]
        spider.sites = frozenset(k for k in (site_key(u, spider.params.scope) for u in spider.start_urls) if k)
        crawler.signals.connect(spider._request_dropped, signal=signals.request_dropped)
        crawler.signals.connect(spider._robots_ready, signal=robots_ready)
        return spider

    # -- start ---------------------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[Any]:
        for url in self.start_urls:
            request = self._admit(url, depth=0)
            if request is not None:
                yield request
        if self.params.sitemaps:
            for url in self.start_urls:
                request = self._sitemap_request(origin(url) + "/sitemap.xml", nesting=0)
                if request is not None:
                    yield request

    def _normal(self, url: str, base: str | None = None) -> str | None:
        return normalize_url(url, base=base, params=self.url_params)

    # -- admission -------------------------------------------------------------------------------------
    def _admit(self, url: str, depth: int) -> Request | None:
        """A page request for normalised ``url``, or None (already seen, or refused with a reason)."""
        if url in self.seen:
            return None
        self.seen.add(url)
        if not in_scope(url, self.sites, self.params.scope):
            report_filtered(self.crawler, url, "offsite")
            return None
        if self.params.max_depth >= 0 and depth > self.params.max_depth:
            report_filtered(self.crawler, url, "max_depth")
            return None
        if self.params.max_pages and len(self.admitted) >= self.params.max_pages:
            report_filtered(self.crawler, url, "max_pages")
            return None
        request = Request(
            url,
            callback=self.parse,
            errback=self.errback,
            # breadth-first: shallow pages first, so a page budget keeps the most central pages
            priority=-depth,
            meta={KIND_META: "page"},
        )
        self.admitted.add(url)
        return request

    def _sitemap_request(self, url: str, nesting: int) -> Request | None:
        normal = self._normal(url)
        if normal is None or normal in self.sitemaps_seen:
            return None
        stats = self.crawler.stats
        if not in_scope(normal, self.sites, self.params.scope):
            stats.inc_value("boilerstrip/crawl/sitemap/offsite")  # not marked seen: its site may join later
            return None
        self.sitemaps_seen.add(normal)
        if nesting > self.params.max_sitemap_nesting:
            stats.inc_value("boilerstrip/crawl/sitemap/too_deep")
            return None
        return Request(
            normal,
            callback=self.parse_sitemap,
            errback=self.sitemap_errback,
            priority=1,
            meta={KIND_META: "sitemap", "_boilerstrip_sitemap_nesting": nesting},
        )

    # -- pages -----------------------------------------------------------------------------------------
    def parse(self, response: Response) -> Iterator[Any]:
        # A plain function that returns the generator: Scrapy checks a generator callback for a ``return
        # value`` by reading and parsing its source, once per response (its cache holds the request's bound
        # method, new for every request): 2% of the crawl's process on docbook-xsl-doc-html
        return self._parsed(response)

    def _parsed(self, response: Response) -> Iterator[Any]:
        request = response.request
        page_url = (response.meta.get("redirect_urls") or [request.url if request else response.url])[0]
        item_yielded = False
        try:
            for result in self._parse_page(response, page_url):
                item_yielded = item_yielded or isinstance(result, PageItem)
                yield result
        except Exception as exc:  # noqa: BLE001 - a bug or a hostile page must not lose the page silently
            logger.exception("parse failed for %s", response.url)
            if not item_yielded:
                detail = f"{type(exc).__name__}: {exc}"[:_DETAIL_CHARS]
                report_failed(self.crawler, request or page_url, "parse_error", detail)

    def _parse_page(self, response: Response, page_url: str) -> Iterator[Any]:
        request = response.request
        if not isinstance(response, HtmlResponse) and page_url in self.start_urls and self._sitemap_body(response):
            # a start URL that is a sitemap (an index, a .xml.gz): its URLs are the crawl's, as a site's own
            # sitemaps' are (--no-sitemaps or not: it was asked for); it was filtered:not_html, nothing crawled
            self.sitemaps_seen.add(page_url)
            found = list(self._parse_sitemap(response))
            report_filtered(self.crawler, request or page_url, "sitemap", f"read as a sitemap: {len(found)} request(s)")
            yield from found
            return
        if not isinstance(response, HtmlResponse):
            ctype = response.headers.get(b"Content-Type", b"").decode("latin-1", errors="replace")
            report_filtered(self.crawler, request or page_url, "not_html", ctype.split(";")[0].strip())
            return
        sniffed = sniff_not_html(response.body, response.encoding)
        if sniffed is not None:  # a PDF or other binary body served as text/html: not a page, not an empty record
            self.crawler.stats.inc_value("boilerstrip/crawl/not_html_sniffed")
            report_filtered(self.crawler, request or page_url, "not_html", f"{sniffed} (sniffed; declared HTML)")
            return
        depth = int(response.meta.get("depth", 0))
        final = self._normal(response.url) or response.url
        self.seen.add(final)  # a redirect target is fetched once, whoever links to it later
        if depth == 0 and page_url in self.start_urls and final != page_url:
            yield from self._join_start_redirect(final)
        # read by the render decision's worker job for a static page; a page over the node budget by a byte
        # scan is not parsed here (it would hold the reactor, and every other host, for seconds)
        links = page_links(response, max_nodes=self.max_nodes)
        if links.bad_base:
            self.crawler.stats.inc_value("boilerstrip/crawl/bad_base_href")
        nofollow = self._nofollow(response, links)
        if links.over_budget(self.max_nodes):
            # The extraction budget, applied to the tree parsed for the links anyway: a page this size would
            # hold the reactor in every per-block stage (block hashes, cleaning, dedup, export), not only in
            # extraction. Its links are still followed.
            if not nofollow:
                yield from self._follow(links, depth)
            unparsed = "; not parsed (a byte scan): its links not followed" if links.hrefs is None else ""
            report_failed(self.crawler, request or page_url, "extraction_budget",
                          f"more than {self.max_nodes} elements (max_nodes in BOILERSTRIP_EXTRACTION_PARAMS){unparsed}")  # fmt: skip
            return
        canonical = self._canonical(links)
        duplicate_of = None
        if canonical and canonical not in (page_url, final):
            if canonical in self.admitted or canonical in self.claimed:
                duplicate_of = canonical
            else:
                self.claimed.add(canonical)  # this page stands for its canonical URL ...
                self.seen.add(canonical)  # ... which will not be fetched again
        if not nofollow:
            yield from self._follow(links, depth)
        if duplicate_of is not None:
            report_filtered(self.crawler, request or page_url, "duplicate_canonical", duplicate_of)
            return
        yield PageItem(
            url=page_url,
            final_url=response.url,
            status=response.status,
            fetched_at=datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
            depth=depth,
            fetch="browser" if response.meta.get("playwright") else "http",
            render_reason=response.meta.get(RENDER_REASON_META),
            # render_failed:<reason>, render_truncated..., partial_body:<what> (a partial body kept on request)
            flags=(render_flags(response.meta) + list(response.meta.get(BODY_FLAGS_META) or ())
                   + ([f"robots_nofollow:{nofollow}"] if nofollow else [])),
            content_type=response.headers.get(b"Content-Type", b"").decode("latin-1", errors="replace") or None,
            encoding=response.encoding,
            html=response.text,
            reading=response.meta.get(READING_META),  # read with the render decision (a static page), or None
            canonical_url=canonical,
            ai_opt_out=list(response.meta.get(OPT_OUT_META) or ()),  # AiOptOutMiddleware's findings
        )

    def _join_start_redirect(self, final: str) -> Iterator[Request]:
        """A start URL redirected to another site: that site joins the crawl (its links, its sitemaps)."""
        key = joined_site(final, self.sites, self.params.scope)
        if key is None:
            return  # same site (say http -> https on default ports), or already joined
        self.sites = self.sites | {key}
        self.crawler.stats.inc_value("boilerstrip/crawl/start_redirect_site_added")
        logger.info("crawl: a start URL redirects to %s: site %s joins the crawl", final, key)
        if not self.params.sitemaps:
            return
        new_origin = origin(final)
        request = self._sitemap_request(new_origin + "/sitemap.xml", nesting=0)
        if request is not None:
            yield request
        # its robots.txt was read on the redirect hop, before the site joined: its Sitemap lines now count
        yield from self._robots_sitemap_requests(new_origin)

    def _canonical(self, links: PageLinks) -> str | None:
        """The first ``<link rel=canonical>`` target, normalised, when it is inside the site."""
        if not links.canonical:
            return None
        canonical = self._normal(links.canonical, base=links.base)
        if canonical and in_scope(canonical, self.sites, self.params.scope):
            return canonical
        return None

    def _nofollow(self, response: Response, links: PageLinks) -> str | None:
        """Where the page asks us not to follow its links ("meta", "header"), when the crawl obeys it."""
        if not self.params.obey_nofollow:
            return None
        header = [v.decode("latin-1", errors="replace") for v in response.headers.getlist(b"X-Robots-Tag")]
        where = robots_nofollow(links.metas, header, self.settings.get("ROBOTSTXT_USER_AGENT") or ROBOTS_TOKEN)
        if where is not None:
            self.crawler.stats.inc_value(f"boilerstrip/crawl/robots_nofollow/{where}")
        return where

    def _follow(self, links: PageLinks, depth: int) -> Iterator[Request]:
        if links.hrefs is None:  # a hostile page must not stop the crawl
            self.crawler.stats.inc_value(f"boilerstrip/crawl/link_extraction_error/{links.error}")
            return
        if links.targets is not None and links.url_params == self.url_params:
            targets, errors = links.targets, links.target_errors  # normalised by the render decision's job
        else:
            targets, errors = link_targets(links.hrefs, links.base, self.url_params)
        for name in errors:
            self.crawler.stats.inc_value(f"boilerstrip/crawl/link_error/{name}")
        for normal in targets:
            if normal is None or _ignored_extension(normal):
                continue
            request = self._admit(normal, depth + 1)
            if request is not None:
                yield request

    def errback(self, failure: Any) -> None:
        request = failure.request
        exc = failure.value
        if isinstance(exc, CrawlStopping):
            # let go as the crawl stops: not settled (the ledger lists it; --resume fetches it). Scrapy's JOBDIR
            # pause keeps the scheduler's queue, not the requests that left it: the page goes back in (the
            # engine sends nothing more once it is closing), so the next run with the same JOBDIR fetches it
            if self.settings.get("JOBDIR"):
                self.crawler.engine.crawl(request.replace(dont_filter=True))
            return
        if isinstance(exc, Filtered):
            report_filtered(self.crawler, request, exc.reason, exc.detail)
        elif isinstance(exc, IgnoreRequest) and not isinstance(exc, HttpError):
            report_filtered(self.crawler, request, failure_reason(failure), str(exc)[:_DETAIL_CHARS])  # too_many_redirects, decompressed_too_large, ignored
        elif isinstance(exc, HttpError):
            # what the server answered ("404 Not Found"), not Scrapy's "Ignoring non-200 response"
            report_failed(self.crawler, request, failure_reason(failure), _status_line(exc.response))
        else:
            report_failed(self.crawler, request, failure_reason(failure), str(exc)[:_DETAIL_CHARS])

    def _request_dropped(self, request: Request) -> None:
        if request.meta.get(KIND_META, "page") != "page" or request.callback != self.parse:
            return
        hops = request.meta.get("redirect_urls")
        if not hops:
            report_filtered(self.crawler, request, "duplicate")
            return
        # a redirect hop the dupefilter dropped: to a URL of its own chain (the page cannot be had), or to
        # one fetched or queued already (the page is that one)
        target = self._normal(request.url)
        if target is not None and target in {self._normal(hop) for hop in hops}:
            report_failed(self.crawler, request, "redirect_loop", " -> ".join([*hops, request.url])[:_DETAIL_CHARS])
        else:
            reason = (request.meta.get("redirect_reasons") or ["?"])[-1]
            report_filtered(self.crawler, request, "duplicate",
                            f"redirected ({reason}) to {request.url}, requested already"[:_DETAIL_CHARS])

    # -- sitemaps --------------------------------------------------------------------------------------
    def _robots_ready(self, origin: str, robots: HostRobots) -> None:
        if not self.params.sitemaps or self.crawler.engine is None:
            return
        self.robots_sitemaps[origin] = robots.sitemaps
        for request in self._robots_sitemap_requests(origin):
            self.crawler.engine.crawl(request)

    def _robots_sitemap_requests(self, origin: str) -> Iterator[Request]:
        for url in self.robots_sitemaps.get(origin, ()):
            # RFC 9309 asks for absolute URLs; a relative one is resolved against the robots.txt URL
            absolute = self._normal(url, base=origin + "/robots.txt")
            request = self._sitemap_request(absolute, nesting=0) if absolute else None
            if request is not None:
                yield request

    def parse_sitemap(self, response: Response) -> Iterator[Request]:
        try:
            yield from self._parse_sitemap(response)
        except Exception as exc:  # noqa: BLE001 - a sitemap is not a page: counted, never fatal
            logger.exception("sitemap %s: parse failed", response.url)
            self.crawler.stats.inc_value(f"boilerstrip/crawl/sitemap/error/{type(exc).__name__}")

    def _parse_sitemap(self, response: Response) -> Iterator[Request]:
        stats = self.crawler.stats
        body = self._sitemap_body(response)
        if body is None:
            stats.inc_value("boilerstrip/crawl/sitemap/invalid")
            return
        try:
            sitemap = Sitemap(body)
            entries = list(sitemap)
        except Exception:  # noqa: BLE001 - lxml on hostile XML: not a sitemap
            stats.inc_value("boilerstrip/crawl/sitemap/invalid")
            return
        nesting = int(response.meta.get("_boilerstrip_sitemap_nesting", 0))
        depth = int(response.meta.get("depth", 0))
        stats.inc_value(f"boilerstrip/crawl/sitemap/{sitemap.type}")
        for entry in entries:
            loc = entry.get("loc")
            if not loc:
                continue
            if sitemap.type == "sitemapindex":
                request = self._sitemap_request(self._normal(loc, base=response.url) or "", nesting + 1)
            else:
                normal = self._normal(loc, base=response.url)
                request = self._admit(normal, depth + 1) if normal else None
                if request is not None and entry.get("lastmod"):  # a recurring crawl may skip the fetch
                    request.meta[LASTMOD_META] = entry["lastmod"]
            if request is not None:
                yield request

    def _sitemap_body(self, response: Response) -> bytes | None:
        body = response.body
        limit = self.params.max_sitemap_bytes
        if body[:2] == _GZIP_MAGIC:
            try:
                body = gunzip(body, max_size=limit)
            except Exception:  # noqa: BLE001 - corrupt or too large
                return None
        body = body[:limit]
        # a sitemap names its root element early (after a prologue and comments); an HTML soft-404 does not
        head = body[:_SITEMAP_SNIFF_BYTES]
        if b"urlset" not in head and b"sitemapindex" not in head:
            return None
        return body

    def sitemap_errback(self, failure: Any) -> None:
        self.crawler.stats.inc_value(f"boilerstrip/crawl/sitemap/failed/{failure_reason(failure)}")
        logger.debug("sitemap %s: %s", failure.request.url, failure.value)


def _settings_items(settings: Any, component: str, cls: type) -> Iterator[tuple[str, Any]]:
    names = [setting_name(component, field.name) for field in dataclasses.fields(cls)]
    for name in [*names, setting_name(component, "params")]:  # the fields, and the params hook
        value = settings.get(name)
        if value is not None:
            yield name, value
