"""Trap budgets for the whole distributed crawl (``SharedTrapFilterMiddleware``).

The trap rules of a single-process crawl (:mod:`boilerstrip.spidermiddlewares.traps`), with the counters
the budgets read -- pages per host, date-like URLs per pattern, the URLs already counted -- in Redis
(``boilerstrip:crawl:ID:traps:*``), so N workers together admit what one process would: a host's
``max_pages_per_host`` (``BOILERSTRIP_TRAPS_PARAMS``) is one budget, not one per worker, and a URL found by two workers
counts once. Each link is checked and counted in one atomic script (one round trip), so two workers can
never both take a host's last page. The rules that need no counter (length, depth, repeated segments) stay
local.
"""

from __future__ import annotations

from typing import Any

from scrapy.exceptions import NotConfigured

from boilerstrip.config import component_enabled, params_from_settings
from boilerstrip.distributed.connection import crawl_client
from boilerstrip.distributed.params import DistributedParams
from boilerstrip.distributed.store import CrawlKeys
from boilerstrip.safety.traps import TrapParams, TrapState, is_date_like, url_pattern
from boilerstrip.spidermiddlewares.traps import TrapFilterMiddleware
from boilerstrip.urls import UrlParams

__all__ = ["SharedTrapState", "SharedTrapFilterMiddleware"]

# KEYS: counted URLs (set), pages per host (hash), URLs per pattern (hash)
# ARGV: url, host, pattern ("" when not date-like), host budget, pattern budget (0 = none)
_CHECK_AND_ADMIT = """
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return '' end
local host_budget = tonumber(ARGV[4])
if host_budget > 0 and tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0') >= host_budget then
  return 'host_budget'
end
local pattern_budget = tonumber(ARGV[5])
if ARGV[3] ~= '' and pattern_budget > 0 and tonumber(redis.call('HGET', KEYS[3], ARGV[3]) or '0') >= pattern_budget then
  return 'pattern_budget'
end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
if ARGV[3] ~= '' then redis.call('HINCRBY', KEYS[3], ARGV[3], 1) end
return ''
"""


class SharedTrapState(TrapState):
    """A :class:`TrapState` whose counters live in Redis under one crawl's keys."""

    def __init__(self, params: TrapParams, client: Any, keys: CrawlKeys) -> None:
        super().__init__(params)
        self._script = client.register_script(_CHECK_AND_ADMIT)
        self._keys = [keys.traps("seen"), keys.traps("hosts"), keys.traps("patterns")]

    def check_and_admit(self, url: str, depth: int) -> str | None:
        reason = self.static_reason(url, depth)
        if reason is not None:
            return reason
        from urllib.parse import urlsplit

        host = urlsplit(url).netloc.lower()
        pattern = url_pattern(url) if is_date_like(url) else ""
        answer = self._script(keys=self._keys, args=[url, host, pattern, self.params.max_pages_per_host,
                                                     self.params.max_urls_per_pattern])
        answer = answer.decode() if isinstance(answer, bytes) else answer
        return answer or None


class SharedTrapFilterMiddleware(TrapFilterMiddleware):
    @classmethod
    def from_crawler(cls, crawler: Any) -> "SharedTrapFilterMiddleware":
        if not component_enabled(crawler.settings, "traps"):
            raise NotConfigured("BOILERSTRIP_TRAPS_ENABLED is off")
        dist = params_from_settings(crawler.settings, "distributed", DistributedParams)
        if not dist.redis_url or not dist.crawl_id:
            raise NotConfigured("not a distributed worker (BOILERSTRIP_DISTRIBUTED_REDIS_URL / _CRAWL_ID unset)")
        params = params_from_settings(crawler.settings, "traps", TrapParams)
        url_params = params_from_settings(crawler.settings, "urls", UrlParams)
        mw = cls(params, crawler, url_params.strip_session_ids)
        mw.state = SharedTrapState(params, crawl_client(dist), CrawlKeys(dist.crawl_id))
        return mw
