"""One robots.txt fetch per host for the whole distributed crawl (``SharedRobotsMiddleware``).

The RFC 9309 middleware of a single-process crawl (:mod:`boilerstrip.downloadermiddlewares.robots`), with
its result shared through Redis (``boilerstrip:crawl:ID:robots:ORIGIN``): the first worker to need a host's
robots.txt takes a fetch lock (``SET NX``, expiring after the fetch timeout) and fetches it; the others wait
for its result and apply it as if they had fetched it (the ``robots_ready`` signal included, so Crawl-delay
and Sitemap lines take effect in every worker). A result that means "unreachable" is not shared: each
worker re-fetches as RFC 9309 asks. If the fetching worker dies, its lock expires and another fetches.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any

from scrapy.exceptions import NotConfigured

from boilerstrip.config import params_from_settings
from boilerstrip.distributed.connection import crawl_client
from boilerstrip.distributed.params import DistributedParams
from boilerstrip.distributed.store import CrawlKeys
from boilerstrip.downloadermiddlewares.robots import Rfc9309RobotsMiddleware
from boilerstrip.politeness import HostRobots, robots_ready
from boilerstrip.politeness import RobotsVerdict

__all__ = ["SharedRobotsMiddleware"]

#: how often a worker waiting for another's robots.txt fetch looks for its result
_WAIT_POLL_S = 0.05


class SharedRobotsMiddleware(Rfc9309RobotsMiddleware):
    client: Any = None
    keys: CrawlKeys | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> "SharedRobotsMiddleware":
        params = params_from_settings(crawler.settings, "distributed", DistributedParams)
        if not params.redis_url or not params.crawl_id:
            raise NotConfigured("not a distributed crawl")
        mw = super().from_crawler(crawler)
        mw.client = crawl_client(params)
        mw.keys = CrawlKeys(params.crawl_id)
        return mw

    def _shared(self, origin: str) -> tuple[RobotsVerdict, bytes] | None:
        raw = self.client.get(self.keys.robots(origin))
        if raw is None:
            return None
        data = json.loads(raw)
        return RobotsVerdict(data["action"], data["reason"], detail=data.get("detail", "")), base64.b64decode(data["body"])

    async def _fetch_and_apply(self, host: HostRobots) -> None:
        lock = self.keys.robots(host.origin) + ":fetching"
        deadline = time.monotonic() + self.params.fetch_timeout_s + 5
        while True:
            shared = self._shared(host.origin)
            if shared is not None:
                super()._apply(host, *shared)
                self.crawler.stats.inc_value("boilerstrip/distributed/robots/shared")
                await self.crawler.signals.send_catch_log_async(robots_ready, origin=host.origin, robots=host)
                return
            if self.client.set(lock, "1", nx=True, px=int((self.params.fetch_timeout_s + 5) * 1000)):
                try:
                    await super()._fetch_and_apply(host)
                finally:
                    self.client.delete(lock)
                return
            if time.monotonic() >= deadline:
                await super()._fetch_and_apply(host)  # the fetching worker is gone: fetch ourselves
                return
            await asyncio.sleep(_WAIT_POLL_S)

    def _apply(self, host: HostRobots, verdict: RobotsVerdict, body: bytes) -> None:
        super()._apply(host, verdict, body)
        if verdict.action in ("parse", "allow_all"):  # "unreachable" is re-fetched by each worker
            data = {"action": verdict.action, "reason": verdict.reason, "detail": verdict.detail,
                    "body": base64.b64encode(body[: self.params.max_bytes]).decode("ascii")}
            self.client.set(self.keys.robots(host.origin), json.dumps(data), nx=True)
