"""WarcReplaySpider ("warc"): the pages of an indexed WARC, site by site, through the crawl's machinery.

``boilerstrip warc FILE... -o OUT.jsonl`` builds the index (:mod:`boilerstrip.warc.index`) and runs this
spider with :class:`boilerstrip.downloadhandlers.warc.WarcReplayHandler` as the http(s) handler: each
response record becomes a request the handler answers from the file, so extraction, cross-page template
removal, duplicates, the opt-out signals, the ledger and the finishing pass are the crawl's own. Links are
not followed (the WARC is the crawl). Every response record ends in the ledger: ``item``,
``filtered:not_html``, ``filtered:redirect`` (a recorded 3xx, or a meta refresh a crawl follows; its target is a
record of its own),
``filtered:robots_*`` (``--robots``), ``failed:http_<status>`` or ``failed:warc_<reason>``; a record whose
URL was replayed already is counted (``boilerstrip/warc/repeated_url``), as are the records that are not
responses (``boilerstrip/warc/records/<type>``).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.http import HtmlResponse, Response
from scrapy.utils.response import get_meta_refresh

from boilerstrip.meta import KIND_META, WARC_ENTRY_META
from boilerstrip.outcomes import WARC_REPLAY_SPIDER, report_failed, report_filtered
from boilerstrip.scope import site_key
from boilerstrip.reading.links import PageLinks
from boilerstrip.spiders.site import SiteSpider
from boilerstrip.warc import IndexedEntry, WarcIndex, site_of

__all__ = ["WarcReplaySpider", "STATS"]

logger = logging.getLogger(__name__)
STATS = "boilerstrip/warc"
#: the start URL SiteSpider needs to be built; the replay has none
_NO_START = "http://warc.invalid/"
#: sites whose URLs the spider remembers after their last record was asked for (their pages may still be
#: in flight: a canonical link is checked against them); older sites' URLs are forgotten, so the spider's
#: memory does not grow with the file (CONCURRENT_REQUESTS is 16: a window of 64 sites is far behind)
_SITES_REMEMBERED = 64
#: record types whose errors reach the ledger (anything that may have been a page)
_MAY_BE_PAGE = ("response", "", "unknown")


def _same_site(url: str, site: str) -> bool:
    """Is ``url`` on ``site`` (``scheme://host:port`` of :func:`boilerstrip.warc.site_of`)?"""
    return site_of(url) == site


class WarcReplaySpider(SiteSpider):
    name = WARC_REPLAY_SPIDER

    def __init__(self, index: str | None = None, **kwargs: Any) -> None:
        kwargs.pop("start_urls", None)
        kwargs.pop("url", None)
        super().__init__(start_urls=[_NO_START], **kwargs)
        if not index:
            raise ValueError("no WARC index: pass -a index=PATH (boilerstrip warc builds it)")
        self.index_path = str(index)
        self.warc_index: WarcIndex | None = None
        self._done_sites: deque[tuple[str, list[str]]] = deque()

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> "WarcReplaySpider":
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.start_urls = []
        spider.sites = frozenset()
        return spider

    async def start(self) -> AsyncIterator[Any]:
        self.warc_index = WarcIndex(self.index_path)
        for site in self.warc_index.sites():
            key = site_key(site + "/", self.params.scope) if site else None
            if key:
                self.sites = self.sites | {key}
            urls: list[str] = []
            for entry in self.warc_index.entries_of(site):
                request = self._replay_request(entry, urls)
                if request is not None:
                    yield request
            self.crawler.stats.inc_value(f"{STATS}/sites")
            self._forget_old_sites(site, urls)
            logger.debug("warc: %s: %d records asked for", site, len(urls))

    def _forget_old_sites(self, site: str, urls: list[str]) -> None:
        self._done_sites.append((site, urls))
        while len(self._done_sites) > _SITES_REMEMBERED:
            old, old_urls = self._done_sites.popleft()
            for url in old_urls:
                self.seen.discard(url)
                self.admitted.discard(url)
            if old and self.claimed:  # canonical URLs its pages stood for
                gone = {u for u in self.claimed if _same_site(u, old)}
                self.claimed -= gone
                self.seen -= gone

    def closed(self, reason: str) -> None:
        if self.warc_index is not None:
            self.warc_index.close()

    def _replay_request(self, entry: IndexedEntry, urls: list[str]) -> Request | None:
        stats = self.crawler.stats
        if entry.error:
            stats.inc_value(f"{STATS}/unreadable/{entry.error}")
            if entry.kind not in _MAY_BE_PAGE:
                stats.inc_value(f"{STATS}/unreadable_not_page/{entry.kind}")
                return None
            url = self._normal(entry.url) if entry.url else None
            if url is None or url in self.seen:  # no URL to file it under: the record's place stands for it
                url = f"warc-record:{Path(entry.file).name}@{entry.offset}"
            self.seen.add(url)
            urls.append(url)
            report_failed(self.crawler, url, entry.error, entry.detail)
            return None
        if entry.kind != "response":
            stats.inc_value(f"{STATS}/records/{entry.kind}")
            return None
        stats.inc_value(f"{STATS}/records/response")
        url = self._normal(entry.url) if entry.url else None
        if url is None:
            key = entry.url or f"warc-record:{Path(entry.file).name}@{entry.offset}"
            if key in self.seen:
                stats.inc_value(f"{STATS}/repeated_url")
                return None
            self.seen.add(key)
            urls.append(key)
            report_failed(self.crawler, key, "warc_not_http", "not an http(s) URL")
            return None
        if url in self.seen:
            stats.inc_value(f"{STATS}/repeated_url")  # the first record of a URL is the page
            return None
        self.seen.add(url)
        self.admitted.add(url)
        urls.append(url)
        return Request(url, callback=self.parse, errback=self.errback, dont_filter=True,
                       meta={KIND_META: "page", WARC_ENTRY_META: entry, "dont_redirect": True,
                             "handle_httpstatus_list": list(range(300, 400)), "dont_retry": True})

    def _parse_page(self, response: Response, page_url: str) -> Iterator[Any]:
        if 300 <= response.status < 400:
            location = response.headers.get(b"Location", b"").decode("latin-1", errors="replace")
            report_filtered(self.crawler, response.request or page_url, "redirect", location[:200])
            return
        refresh = self._meta_refresh(response)
        if refresh:
            report_filtered(self.crawler, response.request or page_url, "redirect", f"meta refresh to {refresh}"[:200])
            return
        yield from super()._parse_page(response, page_url)

    def _meta_refresh(self, response: Response) -> str | None:
        """The target of a page's meta refresh that a crawl follows as a redirect (Scrapy's MetaRefreshMiddleware,
        with the same settings, which the replay's requests turn off with ``dont_redirect``), else None."""
        settings = self.settings
        if not isinstance(response, HtmlResponse) or not settings.getbool("METAREFRESH_ENABLED"):
            return None
        interval, url = get_meta_refresh(response, ignore_tags=settings.getlist("METAREFRESH_IGNORE_TAGS"))
        if not url or urlsplit(url).scheme not in ("http", "https"):
            return None
        return url if interval < settings.getint("METAREFRESH_MAXDELAY") else None

    def _follow(self, links: PageLinks, depth: int) -> Iterator[Request]:
        return iter(())  # the WARC is the crawl: its links were followed, or not, when it was written
