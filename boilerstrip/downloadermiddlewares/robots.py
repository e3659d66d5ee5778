"""robots.txt with RFC 9309 semantics (Scrapy's RobotsTxtMiddleware allows everything on any error).

- 2xx: parsed with Protego (the first ``max_bytes``, 512 KiB, the rest ignored; ``BOILERSTRIP_ROBOTS_PARAMS``);
- 3xx: followed by hand, up to 5 hops (then "unavailable" -> allow all, RFC 9309 §2.3.1.2), across
  authorities too (a CDN): the scope middleware exempts robots.txt hops from its offsite rule but not from
  its scheme and private-address rules. A hop it refuses makes the file *unreachable* -> disallow all
  (reason ``robots_unreachable``, detail ``redirect_refused:<reason>``), at once and without re-fetching:
  the refusal is the crawl's own rule and would not change on a second try;
- 4xx: allow all (§2.3.1.3);
- 5xx, 429, timeout, connection failure: **disallow all** for that origin (§2.3.1.4). The origin's page
  requests wait and robots.txt is fetched again after ``UNREACHABLE_RETRY_S``; after
  ``UNREACHABLE_MAX_FETCHES`` failed fetches they are filtered with reason ``robots_unreachable``.

A refused page raises :class:`boilerstrip.outcomes.Filtered` (``robots_disallowed``). Each resolved
robots.txt is announced with the :data:`robots_ready` signal (Crawl-delay for the politeness middleware,
Sitemap lines for the spider). The decision logic lives in :mod:`boilerstrip.politeness`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any
from urllib.parse import urljoin

from protego import Protego
from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest, NotConfigured, StopDownload
from scrapy.http.request import NO_CALLBACK

from boilerstrip import ROBOTS_TOKEN
from boilerstrip.config import params_from_settings
from boilerstrip.optout import parse_robots_ai_rules
from boilerstrip.outcomes import CrawlStopping, Filtered, crawl_stopping, failure_reason
from boilerstrip.politeness import HostRobots, RobotsParams, RobotsVerdict, robots_ready, robots_verdict_for_status
from boilerstrip.urls import origin
from boilerstrip.meta import KIND_META

__all__ = ["Rfc9309RobotsMiddleware"]

logger = logging.getLogger(__name__)
#: robots.txt fetches under way (a gauge: the progress line says pages wait for them)
PENDING_STAT = "boilerstrip/robots/pending"
#: the detail of the last unreachable verdict (``connection_refused``, ``dns_not_found``...): the progress line's
UNREACHABLE_DETAIL_STAT = "boilerstrip/robots/unreachable_detail"
#: a page waiting for an unreachable robots.txt's next fetch looks this often whether the crawl is stopping
_STOP_CHECK_S = 1.0


_BYTES_META = "_boilerstrip_robots_bytes"


class Rfc9309RobotsMiddleware:
    """Obey robots.txt per origin (scheme, host, port), refusing pages with a recorded reason."""

    DOWNLOAD_PRIORITY = 1000

    def __init__(self, params: RobotsParams, token: str = ROBOTS_TOKEN, crawler: Any = None) -> None:
        self.params = params
        self.token = token
        self.crawler = crawler
        self.hosts: dict[str, HostRobots] = {}

    @classmethod
    def from_crawler(cls, crawler: Any) -> "Rfc9309RobotsMiddleware":
        settings = crawler.settings
        if not settings.getbool("ROBOTSTXT_OBEY"):  # the one switch for robots.txt
            raise NotConfigured("robots.txt not obeyed (ROBOTSTXT_OBEY is false)")
        params = params_from_settings(settings, "robots", RobotsParams)
        token = settings.get("ROBOTSTXT_USER_AGENT") or ROBOTS_TOKEN
        mw = cls(params, token=token, crawler=crawler)
        crawler.signals.connect(mw._bytes_received, signal=signals.bytes_received)
        return mw

    # -- the hook ------------------------------------------------------------------------------------
    async def process_request(self, request: Request) -> None:
        if request.meta.get("dont_obey_robotstxt") or not request.url.startswith(("http://", "https://")):
            return None
        host = await self.robots_for(origin(request.url))
        if host.allows(request.url, self.token):
            return None
        if host.action == "disallow_all":
            raise Filtered("robots_unreachable", host.detail)
        logger.debug("Forbidden by robots.txt: %s", request.url)
        raise Filtered("robots_disallowed")

    async def robots_for(self, key: str) -> HostRobots:
        """The resolved robots.txt of origin ``key``; fetches (and re-fetches) it as RFC 9309 asks."""
        host = self.hosts.get(key)
        if host is None:
            host = self.hosts[key] = HostRobots(origin=key)
        while True:
            if host.task is not None and not host.task.done():
                await asyncio.shield(host.task)
                continue
            if host.action == "pending" or (
                host.action == "disallow_all"
                and host.fetches < self.params.unreachable_max_fetches
                and time.monotonic() >= host.next_fetch_at
            ):
                host.task = asyncio.ensure_future(self._fetch(host))
                continue
            if host.action == "disallow_all" and host.fetches < self.params.unreachable_max_fetches:
                # unreachable: the page waits for the next fetch instead of being refused at once, unless the
                # crawl is stopping (a Ctrl-C waited out the retries, a minute with polite)
                if crawl_stopping(self.crawler):
                    raise CrawlStopping(f"stopping: robots.txt of {host.origin} unreachable")
                await asyncio.sleep(min(_STOP_CHECK_S, max(0.0, host.next_fetch_at - time.monotonic())))
                continue
            return host

    # -- fetching ------------------------------------------------------------------------------------
    async def _fetch(self, host: HostRobots) -> None:
        host.fetches += 1
        stats = self.crawler.stats if self.crawler is not None else None
        if stats is not None:  # a gauge the progress line shows: pages of this host wait for the file
            stats.inc_value(PENDING_STAT)
        try:
            await self._fetch_and_apply(host)
        except Exception as exc:  # noqa: BLE001 - a bug here must not loop or allow everything
            logger.exception("robots.txt handling failed for %s", host.origin)
            self._apply(host, RobotsVerdict("disallow_all", "robots_unreachable", detail=type(exc).__name__), b"")
        finally:
            if stats is not None:
                stats.inc_value(PENDING_STAT, -1)

    async def _fetch_and_apply(self, host: HostRobots) -> None:
        url = f"{host.origin}/robots.txt"
        redirects = 0
        refused_for_good = False
        stats = self.crawler.stats if self.crawler is not None else None
        while True:
            request = Request(
                url,
                priority=self.DOWNLOAD_PRIORITY,
                callback=NO_CALLBACK,
                dont_filter=True,
                meta={
                    "dont_obey_robotstxt": True,
                    "dont_redirect": True,
                    "dont_retry": True,
                    "handle_httpstatus_all": True,
                    "download_timeout": self.params.fetch_timeout_s,
                    KIND_META: "robots",
                },
            )
            try:
                response = await self.crawler.engine.download_async(request)
            except IgnoreRequest as exc:
                detail = failure_reason(exc)
                if isinstance(exc, Filtered):
                    # refused by the crawl's own rules (a redirect to a private address or another scheme):
                    # the file cannot be read, which is "unreachable" (never a silent allow-all), for good
                    logger.warning("robots.txt of %s: %s refused (%s): disallow all", host.origin, url, exc.reason)
                    detail = f"redirect_refused:{exc.reason}" if redirects else f"refused:{exc.reason}"
                    refused_for_good = True
                verdict = RobotsVerdict("disallow_all", "robots_unreachable", detail=detail)
                body = b""
            except Exception as exc:  # noqa: BLE001 - any failure means "unreachable", never allow-all
                detail = failure_reason(exc)
                verdict = RobotsVerdict("disallow_all", "robots_unreachable", detail=detail)
                body = b""
                # no TLS handshake (https:// to a plain-HTTP server): the same in a minute, so no re-fetch
                refused_for_good = detail == "tls_error"
            else:
                verdict = robots_verdict_for_status(response.status, redirects, self.params)
                body = response.body
                if verdict.redirect:
                    location = response.headers.get(b"Location")
                    if location:
                        url = urljoin(response.url, location.decode("latin-1"))
                        redirects += 1
                        continue
                    verdict = RobotsVerdict("allow_all", "robots_redirect_without_location")
            break
        self._apply(host, verdict, body)
        if refused_for_good:
            host.fetches = max(host.fetches, self.params.unreachable_max_fetches)  # no re-fetch: pages filtered now
        if stats is not None:
            stats.inc_value(f"boilerstrip/robots/fetch/{verdict.reason}")
            if verdict.action == "disallow_all" and verdict.detail:  # why, for the progress line
                stats.set_value(UNREACHABLE_DETAIL_STAT, verdict.detail)
        logger.debug("robots.txt of %s: %s %s %s", host.origin, host.action, host.reason, host.detail)
        if self.crawler is not None:
            await self.crawler.signals.send_catch_log_async(robots_ready, origin=host.origin, robots=host)

    def _apply(self, host: HostRobots, verdict: RobotsVerdict, body: bytes) -> None:
        host.reason, host.detail = verdict.reason, verdict.detail
        if verdict.action == "parse":
            # "utf-8-sig" drops a leading byte-order mark: left in, it glues itself to the first line's
            # field name ("\ufeffUser-agent") and Protego ignores the whole first group.
            text = body[: self.params.max_bytes].decode("utf-8-sig", errors="replace")
            try:
                parser = Protego.parse(text)
                crawl_delay = parser.crawl_delay(self.token)
                sitemaps = tuple(parser.sitemaps)
            except Exception as exc:  # noqa: BLE001 - a file we cannot parse is as good as no rules
                host.action, host.reason, host.detail = "allow_all", "robots_unparsable", type(exc).__name__
                return
            host.action, host.parser = "parse", parser
            host.crawl_delay_s = float(crawl_delay) if crawl_delay is not None else None
            host.sitemaps = sitemaps
            host.ai_rules = parse_robots_ai_rules(text, self.token)
        elif verdict.action == "allow_all":
            host.action = "allow_all"
        else:
            host.action = "disallow_all"
            host.next_fetch_at = time.monotonic() + self.params.unreachable_retry_s

    def _bytes_received(self, data: bytes, request: Request) -> None:
        if request.meta.get(KIND_META) != "robots":
            return
        seen = request.meta.get(_BYTES_META, 0) + len(data)
        request.meta[_BYTES_META] = seen
        if seen > self.params.max_bytes:
            # keep what arrived (the parser reads the first max_bytes), stop the transfer
            raise StopDownload(fail=False)
