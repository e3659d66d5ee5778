"""Crawler traps end within budget, each dropped link with a reason (``boilerstrip/filtered/<reason>``).

``TrapFilterMiddleware`` looks at every Request the spider yields (it sits on the spider side of Scrapy's
DepthMiddleware and UrlLengthMiddleware, which drop without a recorded reason) and applies the pure rules of
:mod:`boilerstrip.safety.traps`: depth, per-host page budget, repeated path segments, date-pattern budget
(calendars), URL length, and an outlink cap per page. Session-id parameters are stripped, not dropped
(the spider's URL normalisation already did; this catches requests built elsewhere).
A filtered URL is reported once (``report_filtered``), however many pages link to it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse

from boilerstrip.config import component_enabled, params_from_settings
from boilerstrip.outcomes import report_filtered
from boilerstrip.safety.traps import TrapParams, TrapState, non_http_scheme
from boilerstrip.reading.links import LinksUnreadable, page_hrefs
from boilerstrip.urls import UrlParams, strip_session_ids

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["TrapFilterMiddleware"]

logger = logging.getLogger(__name__)

#: meta key: True exempts a request from the trap rules (the spider vouches for it)
EXEMPT_META = "boilerstrip_traps_exempt"


class TrapFilterMiddleware:
    def __init__(self, params: TrapParams, crawler: Crawler | None = None, strip_session_ids: bool = True) -> None:
        self.params = params
        self.crawler = crawler
        self.strip_session_ids = strip_session_ids
        self.state = TrapState(params)
        self.reported: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TrapFilterMiddleware:
        if not component_enabled(crawler.settings, "traps"):
            raise NotConfigured("BOILERSTRIP_TRAPS_ENABLED is off")
        url_params = params_from_settings(crawler.settings, "urls", UrlParams)
        return cls(params_from_settings(crawler.settings, "traps", TrapParams), crawler, url_params.strip_session_ids)

    # -- the hooks (sync and async spider output) ---------------------------------------------------------
    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterable[Any]:
        self._report_other_schemes(response)
        outlinks = 0
        for entry in result:
            out, outlinks = self._filter(response, entry, outlinks)
            if out is not None:
                yield out

    async def process_spider_output_async(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        self._report_other_schemes(response)
        outlinks = 0
        async for entry in result:
            out, outlinks = self._filter(response, entry, outlinks)
            if out is not None:
                yield out

    def _report_other_schemes(self, response: Response) -> None:
        """Links to file://, ftp://, data:... are never requested (the spider skips them, the handlers are
        off); record each once as filtered:scheme_not_allowed so the user sees why it is missing."""
        if not isinstance(response, HtmlResponse):  # the spider follows the links of HTML pages only
            return
        try:
            hrefs = page_hrefs(response)
        except LinksUnreadable:  # no links to report (the spider counts the page's link_extraction_error)
            return
        for href in hrefs[: self.params.max_outlinks_per_page or None]:
            scheme = non_http_scheme(href)
            if scheme is None:
                continue
            url = href.strip()[:300]
            if url in self.reported:
                continue
            self.reported.add(url)
            self._inc("filtered/scheme_not_allowed")
            if self.crawler is not None:
                report_filtered(self.crawler, url, "scheme_not_allowed", scheme)

    # -- the decision ---------------------------------------------------------------------------------------
    def _filter(self, response: Response, entry: Any, outlinks: int) -> tuple[Any, int]:
        if not isinstance(entry, Request) or entry.meta.get(EXEMPT_META):
            return entry, outlinks
        request = entry
        if self.strip_session_ids:
            clean = strip_session_ids(request.url)
            if clean != request.url:
                request = request.replace(url=clean)
                self._inc("session_id_stripped")
        outlinks += 1
        if self.params.max_outlinks_per_page and outlinks > self.params.max_outlinks_per_page:
            self._drop(request, "outlink_cap")
            return None, outlinks
        depth = int(response.meta.get("depth", 0)) + 1
        reason = self.state.check_and_admit(request.url, depth)
        if reason:
            self._drop(request, reason)
            return None, outlinks
        return request, outlinks

    def _drop(self, request: Request, reason: str) -> None:
        self._inc(f"filtered/{reason}")
        if request.url in self.reported:
            return
        self.reported.add(request.url)
        logger.debug("traps: filtered %s (%s)", request.url, reason)
        if self.crawler is not None:
            report_filtered(self.crawler, request, reason)

    def _inc(self, key: str) -> None:
        if self.crawler is not None and self.crawler.stats is not None:
            self.crawler.stats.inc_value(f"boilerstrip/traps/{key}")
