"""Record the AI-training opt-out signals of every page (the logic is in :mod:`boilerstrip.optout`).

- ``process_request`` (page requests): the first page of an origin waits for the origin's
  ``/.well-known/tdmrep.json`` (fetched once per origin, ``boilerstrip_kind`` = ``tdmrep``: not a page, so
  the ledger does not account for it; counted in ``boilerstrip/optout/tdmrep/<result>``);
- ``process_response`` (pages): the robots.txt lines (from the ``robots_ready`` signal), the tdmrep.json
  rules, the ``X-Robots-Tag``/``tdm-reservation`` headers and the ``<meta>`` tags give the page's signals,
  left in ``request.meta`` for the spider, which writes them to the record's ``ai_opt_out``.

Nothing is refused here: the crawl records, ``boilerstrip export`` decides. Pages a robots.txt group for
our token disallows are never fetched (the robots middleware refuses them).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response
from scrapy.http.request import NO_CALLBACK

from boilerstrip import ROBOTS_TOKEN
from boilerstrip.config import component_enabled, params_from_settings
from boilerstrip.politeness import HostRobots, robots_ready
from boilerstrip.optout import TDMREP_PATH, OptOutParams, RobotsAiRules, TdmRepRule, page_opt_out, parse_tdmrep
from boilerstrip.outcomes import failure_reason
from boilerstrip.scope import origin
from boilerstrip.reading.links import page_links
from boilerstrip.meta import KIND_META, OPT_OUT_META

__all__ = ["AiOptOutMiddleware"]

logger = logging.getLogger(__name__)



class AiOptOutMiddleware:
    DOWNLOAD_PRIORITY = 1000  # as robots.txt: before the site's pages

    def __init__(self, params: OptOutParams, token: str = ROBOTS_TOKEN, crawler: Any = None) -> None:
        self.params = params
        self.token = token
        self.crawler = crawler
        self.robots: dict[str, RobotsAiRules | None] = {}
        self.tdmrep: dict[str, tuple[TdmRepRule, ...]] = {}
        self._tasks: dict[str, asyncio.Future] = {}
        self.max_nodes = 0  # the extraction budget (max_nodes of BOILERSTRIP_EXTRACTION_PARAMS), read in from_crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> "AiOptOutMiddleware":
        settings = crawler.settings
        if not component_enabled(settings, "optout"):
            raise NotConfigured("AI opt-out signals not recorded (BOILERSTRIP_OPTOUT_ENABLED)")
        params = params_from_settings(settings, "optout", OptOutParams)
        mw = cls(params, token=settings.get("ROBOTSTXT_USER_AGENT") or ROBOTS_TOKEN, crawler=crawler)
        from boilerstrip.extraction import ExtractionParams

        mw.max_nodes = params_from_settings(settings, "extraction", ExtractionParams).max_nodes
        crawler.signals.connect(mw._robots_ready, signal=robots_ready)
        return mw

    def _robots_ready(self, origin: str, robots: HostRobots) -> None:
        self.robots[origin] = getattr(robots, "ai_rules", None)

    @staticmethod
    def _is_page(request: Request) -> bool:
        return request.meta.get(KIND_META, "page") == "page" and request.url.startswith(("http://", "https://"))

    # -- tdmrep.json -----------------------------------------------------------------------------------
    async def process_request(self, request: Request) -> None:
        if not self.params.tdmrep or not self._is_page(request):
            return None
        key = origin(request.url)
        if key in self.tdmrep:
            return None
        task = self._tasks.get(key)
        if task is None:
            task = self._tasks[key] = asyncio.ensure_future(self._fetch_tdmrep(key))
        await asyncio.shield(task)
        return None

    async def _fetch_tdmrep(self, key: str) -> None:
        request = Request(
            key + TDMREP_PATH,
            priority=self.DOWNLOAD_PRIORITY,
            callback=NO_CALLBACK,
            dont_filter=True,
            meta={
                "dont_obey_robotstxt": True,  # a policy file, read as robots.txt is
                "dont_redirect": True,
                "dont_retry": True,
                "handle_httpstatus_all": True,
                "download_timeout": self.params.tdmrep_timeout_s,
                "download_maxsize": self.params.tdmrep_max_bytes,
                KIND_META: "tdmrep",
            },
        )
        rules: tuple[TdmRepRule, ...] = ()
        try:
            response = await self.crawler.engine.download_async(request)
        except Exception as exc:  # noqa: BLE001 - no file is no reservation; counted
            result = f"error_{failure_reason(exc)}"
        else:
            if 200 <= response.status < 300:
                rules = parse_tdmrep(response.body)
                result = "rules" if rules else "unreadable"
            else:
                result = f"http_{response.status}"
        self.tdmrep[key] = rules
        self._tasks.pop(key, None)
        self._inc(f"boilerstrip/optout/tdmrep/{result}")
        logger.debug("tdmrep.json of %s: %s (%d rules)", key, result, len(rules))

    # -- the page's signals ----------------------------------------------------------------------------
    def process_response(self, request: Request, response: Response) -> Response:
        if not self._is_page(request) or not isinstance(response, HtmlResponse):
            return response
        key = origin(response.url)
        headers = {name: [v.decode("latin-1", errors="replace") for v in response.headers.getlist(name)]
                   for name in ("X-Robots-Tag", "tdm-reservation")}
        signals = page_opt_out(
            response.url,
            token=self.token,
            headers={name.lower(): values for name, values in headers.items()},
            metas=self._metas(response, request),
            robots=self.robots.get(key),
            tdmrep=self.tdmrep.get(key, ()),
        )
        request.meta[OPT_OUT_META] = signals
        for signal in signals:
            self._inc(f"boilerstrip/optout/signal/{signal}")
        return response

    def _metas(self, response: HtmlResponse, request: Any = None) -> list[tuple[str, str]]:
        # the page's one parse, read by the render decision's worker job (not parsed here over the node budget)
        links = page_links(response, max_nodes=self.max_nodes, request=request)
        if links.error is not None:
            self._inc("boilerstrip/optout/metas_unreadable")
        return list(links.metas)

    def _inc(self, key: str) -> None:
        if self.crawler is not None and self.crawler.stats is not None:
            self.crawler.stats.inc_value(key)
