"""Conditional requests for recurring crawls: a thin adapter around :mod:`boilerstrip.recrawl`.

For a page request whose URL the state knows (``BOILERSTRIP_STATE_DIR``; same extraction and template
settings, a page last time, a stored copy), sends ``If-None-Match`` / ``If-Modified-Since`` from the
stored validators. A 304 answer becomes a small HTML response holding the stored page's links (the spider
follows them as it followed the page) with ``meta["boilerstrip_reused"] = "not_modified"``; the
:class:`boilerstrip.spidermiddlewares.recrawl.RecrawlMiddleware` then puts the stored record in place of
the item. A request admitted from a sitemap whose ``<lastmod>`` is older than the page's last visit is
answered the same way without a request at all (``"sitemap_lastmod"``). A browser (re-)request is never
conditional. Registered at 558: its ``process_request`` runs after the render middleware (555) chose
static or browser, its ``process_response`` before the render middleware looks at a body.

Stats: ``boilerstrip/recrawl/conditional``, ``.../not_modified``, ``.../sitemap_lastmod``,
``.../modified``, ``.../full_fetch/<why>``.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response

from boilerstrip.config import component_enabled, params_from_settings
from boilerstrip.recrawl import (
    RecrawlParams,
    conditional_headers,
    digest_of_settings,
    lastmod_unchanged,
    reuse_refusal,
    stub_html,
)
from boilerstrip.state import State, StateParams, feed_output, open_state, resolve_state_dir
from boilerstrip.meta import COPY_META, DONT_RENDER_META, KIND_META, LASTMOD_META, REUSED_META

__all__ = ["ConditionalRequestMiddleware"]

logger = logging.getLogger(__name__)
STATS = "boilerstrip/recrawl"

_CONDITIONAL_META = "boilerstrip_conditional"
_VALIDATOR_HEADERS = (b"If-None-Match", b"If-Modified-Since")


class ConditionalRequestMiddleware:
    def __init__(self, params: RecrawlParams, digest: str, state: State | None = None, stats: Any = None,
                 state_params: StateParams | None = None, output: Any = None) -> None:
        self.params = params
        self.digest = digest
        self.stats = stats
        self.state = state
        self._own_state = state is None
        self.state_params = state_params
        self.output = output

    @classmethod
    def from_crawler(cls, crawler: Any) -> "ConditionalRequestMiddleware":
        settings = crawler.settings
        if not component_enabled(settings, "recrawl"):
            raise NotConfigured("BOILERSTRIP_RECRAWL_ENABLED is false")
        params = params_from_settings(settings, "recrawl", RecrawlParams)
        if not params.conditional and not params.trust_lastmod:
            raise NotConfigured("neither conditional requests nor sitemap lastmod")
        state_params = params_from_settings(settings, "state", StateParams)
        output = feed_output(settings)
        if resolve_state_dir(state_params.dir, output) is None:
            raise NotConfigured("no state kept (BOILERSTRIP_STATE_DIR is empty)")
        mw = cls(params, digest_of_settings(settings), stats=crawler.stats, state_params=state_params, output=output)
        crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def spider_opened(self) -> None:
        if self.state is None and self.state_params is not None:
            self.state = open_state(self.state_params, self.output)  # read only during the crawl

    def spider_closed(self, reason: str = "") -> None:
        if self.state is not None and self._own_state:
            self.state.close()
            self.state = None

    # -- requests --------------------------------------------------------------------------------------
    def process_request(self, request: Request) -> Response | None:
        meta = request.meta
        if meta.get(KIND_META, "page") != "page" or request.method != "GET" or self.state is None:
            return None
        if meta.get(_CONDITIONAL_META):
            if meta.get("playwright"):  # re-issued to the browser: a 304 would render an empty page
                for name in _VALIDATOR_HEADERS:
                    request.headers.pop(name, None)
                meta.pop(_CONDITIONAL_META, None)
            return None
        if REUSED_META in meta or "redirect_urls" in meta:
            return None  # a hop or re-issue of a request already decided
        previous = self.state.history.get(request.url)
        copy = self.state.pages.get(request.url) if previous is not None else None
        refusal = reuse_refusal(previous, copy is not None, self.digest)
        if refusal is not None:
            self._inc(f"full_fetch/{refusal}")
            return None
        assert previous is not None and copy is not None
        if self.params.trust_lastmod and lastmod_unchanged(meta.get(LASTMOD_META), previous.last_seen):
            self._inc("sitemap_lastmod")
            return self._reused(request, copy, "sitemap_lastmod", copy.record.get("final_url") or request.url)
        if not self.params.conditional or meta.get("playwright"):
            return None
        headers = conditional_headers(previous)
        if not headers:
            self._inc("full_fetch/no_validators")
            return None
        for name, value in headers.items():
            request.headers.setdefault(name, value)
        meta[_CONDITIONAL_META] = True
        meta[COPY_META] = copy
        self._inc("conditional")
        return None

    def process_response(self, request: Request, response: Response) -> Response:
        meta = request.meta
        if not meta.get(_CONDITIONAL_META) or REUSED_META in meta:
            return response
        copy = meta.get(COPY_META)  # kept: a retry of this request (after a 503, say) may still get a 304
        if response.status != 304 or copy is None:
            if 200 <= response.status < 300:
                self._inc("modified")
            return response
        self._inc("not_modified")
        return self._reused(request, copy, "not_modified", response.url, validators=response.headers)

    def _reused(self, request: Request, copy: Any, how: str, url: str, validators: Any = None) -> HtmlResponse:
        meta = request.meta
        meta[REUSED_META] = how
        meta[COPY_META] = copy
        meta[DONT_RENDER_META] = True  # the stand-in is not the page: nothing to render
        headers = {"Content-Type": "text/html; charset=utf-8"}
        for name in (b"ETag", b"Last-Modified"):  # a 304 may carry fresher validators
            value = validators.get(name) if validators is not None else None
            if value:
                headers[name.decode()] = value.decode("latin-1")
        return HtmlResponse(url=url, status=200, headers=headers, body=stub_html(copy.links).encode("utf-8"),
                            encoding="utf-8", request=request, flags=[f"reused:{how}"])

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"{STATS}/{key}")
