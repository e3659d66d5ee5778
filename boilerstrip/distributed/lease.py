"""One host's politeness shared by every worker: a lease per host in Redis (``HostLeaseMiddleware``).

A request may go to a host only under a lease: at most ``CONCURRENT_REQUESTS_PER_DOMAIN`` leases of a host
exist at once, across all workers, and none is granted before the host's *next allowed time*. Granting a
lease moves that time ``delay`` ahead (start to start, as Scrapy spaces one slot's requests); giving it
back when the response has arrived (``request_left_downloader``) moves it to *now + delay* (end to start).
So the host never sees two requests closer than ``delay``, whatever the network or the workers' clocks do:
all times are Redis server time (``TIME`` inside the scripts). ``delay`` is the worker's download slot
delay for the host: ``DOWNLOAD_DELAY``, raised by Crawl-delay, by AutoThrottle and by a 429/503 pause
(:mod:`boilerstrip.downloadermiddlewares.politeness` sets them on the slot).

The lease is taken in ``process_request`` at 980, after every other middleware (robots.txt, scope,
politeness) has let the request through, so nothing is refused while holding it; robots.txt fetches take
one too. A worker killed mid-download never gives its lease back: it expires after
``DOWNLOAD_TIMEOUT + DistributedParams.lease_margin_s``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.exceptions import NotConfigured

from boilerstrip.config import params_from_settings
from boilerstrip.distributed.connection import crawl_client
from boilerstrip.distributed.params import DistributedParams
from boilerstrip.distributed.store import CrawlKeys

__all__ = ["HostLeaseMiddleware", "LEASE_META", "HostLeases"]

logger = logging.getLogger(__name__)

#: meta: (host, token) of the lease a request holds
LEASE_META = "_boilerstrip_lease"

_NOW_MS = "local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"

# KEYS[1] leases (sorted set, score = expiry), KEYS[2] next allowed (ms); ARGV token, concurrency, ttl ms,
# delay ms. Returns 0 (granted), the ms to wait until the next allowed time, or -1 (all leases taken).
_ACQUIRE = _NOW_MS + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local nxt = tonumber(redis.call('GET', KEYS[2]) or '0')
if now < nxt then return nxt - now end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return -1 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
local delay = tonumber(ARGV[4])
if delay > 0 then redis.call('SET', KEYS[2], now + delay, 'PX', delay + 60000) end
return 0
"""

# KEYS as above; ARGV token, delay ms. Returns 1 when the lease was held.
_RELEASE = _NOW_MS + """
local held = redis.call('ZREM', KEYS[1], ARGV[1])
local delay = tonumber(ARGV[2])
if delay > 0 then
  local nxt = tonumber(redis.call('GET', KEYS[2]) or '0')
  if now + delay > nxt then redis.call('SET', KEYS[2], now + delay, 'PX', delay + 60000) end
end
return held
"""


class HostLeases:
    """The two scripts over a client; pure Python (no Scrapy)."""

    def __init__(self, client: Any, keys: CrawlKeys) -> None:
        self.keys = keys
        self._acquire = client.register_script(_ACQUIRE)
        self._release = client.register_script(_RELEASE)

    def try_acquire(self, host: str, token: str, concurrency: int, ttl_s: float, delay_s: float) -> int:
        return int(self._acquire(keys=[self.keys.lease(host), self.keys.next_allowed(host)],
                                 args=[token, max(1, concurrency), int(ttl_s * 1000), int(delay_s * 1000)]))

    def release(self, host: str, token: str, delay_s: float) -> bool:
        return bool(self._release(keys=[self.keys.lease(host), self.keys.next_allowed(host)],
                                  args=[token, int(delay_s * 1000)]))


class HostLeaseMiddleware:
    def __init__(self, leases: HostLeases, params: DistributedParams, delay_s: float, concurrency: int,
                 timeout_s: float, crawler: Any = None) -> None:
        self.leases = leases
        self.params = params
        self.delay_s = delay_s
        self.concurrency = concurrency
        self.ttl_s = timeout_s + params.lease_margin_s
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> "HostLeaseMiddleware":
        params = params_from_settings(crawler.settings, "distributed", DistributedParams)
        if not params.redis_url or not params.crawl_id:
            raise NotConfigured("not a distributed crawl")
        if not params.lease_enabled:
            raise NotConfigured("lease_enabled of BOILERSTRIP_DISTRIBUTED_PARAMS is false")
        settings = crawler.settings
        leases = HostLeases(crawl_client(params), CrawlKeys(params.crawl_id))
        mw = cls(leases, params, delay_s=settings.getfloat("DOWNLOAD_DELAY"),
                 concurrency=settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") or settings.getint("CONCURRENT_REQUESTS"),
                 timeout_s=settings.getfloat("DOWNLOAD_TIMEOUT"), crawler=crawler)
        crawler.signals.connect(mw._left, signal=signals.request_left_downloader)
        return mw

    def _host(self, request: Any) -> str:
        downloader = getattr(getattr(self.crawler, "engine", None), "downloader", None)
        if downloader is not None:
            return downloader.get_slot_key(request)
        return urlsplit(request.url).hostname or ""

    def _delay(self, host: str) -> float:
        """The host's delay as this worker's download slot has it now (Crawl-delay, AutoThrottle, pauses)."""
        downloader = getattr(getattr(self.crawler, "engine", None), "downloader", None)
        if downloader is None:
            return self.delay_s
        slot = downloader.slots.get(host)
        # a host whose slot does not exist yet: the delay Crawl-delay set for new slots (politeness.py)
        floor = float(downloader.per_slot_settings.get(host, {}).get("delay", 0.0) or 0.0)
        return max(self.delay_s, floor, float(getattr(slot, "delay", 0.0) or 0.0))

    async def process_request(self, request: Any) -> None:
        if LEASE_META in request.meta:
            return None
        host = self._host(request)
        token = uuid.uuid4().hex
        waited = 0.0
        while True:
            wait_ms = self.leases.try_acquire(host, token, self.concurrency, self.ttl_s, self._delay(host))
            if wait_ms == 0:
                break
            pause = self.params.lease_poll_s if wait_ms < 0 else min(wait_ms / 1000.0, 1.0)
            waited += pause
            await asyncio.sleep(pause)
        request.meta[LEASE_META] = (host, token)
        if self.crawler is not None:
            self.crawler.stats.inc_value("boilerstrip/distributed/lease/granted")
            if waited:
                self.crawler.stats.inc_value("boilerstrip/distributed/lease/waited_s", round(waited, 3))
        return None

    def _left(self, request: Any) -> None:
        lease = request.meta.pop(LEASE_META, None)
        if lease is not None:
            host, token = lease
            self.leases.release(host, token, self._delay(host))

    def process_exception(self, request: Any, exception: Any) -> None:
        self._left(request)  # refused after the lease was taken (rare at 980): give it back
        return None
