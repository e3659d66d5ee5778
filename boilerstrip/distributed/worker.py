"""The spider side of a worker: say when its start requests are all scheduled, and when a request's callback
has run (``WorkerSpiderMiddleware``); and the settings that make a Scrapy run a worker (:func:`worker_settings`).

A worker's spider is the ordinary ``site`` spider: every worker yields the start URLs from ``start()`` (our
own feeding: scrapy-redis's ``RedisSpider`` would read them from a Redis list only on the idle path, which
Scrapy 2.16+ reaches too late), and the shared dupefilter lets the first of each in. The coordinator does
not call the crawl done while a live worker is still inside ``start()``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any

from scrapy.exceptions import NotConfigured

from boilerstrip.config import params_from_settings
from boilerstrip.distributed.connection import OUTAGE, OutageParams, crawl_client, redis_options
from boilerstrip.distributed.params import DistributedParams
from boilerstrip.distributed.scheduler import request_done, start_done
from boilerstrip.distributed.store import CrawlKeys, CrawlStore

__all__ = ["WorkerSpiderMiddleware", "worker_settings"]

#: a worker waits at most this long for the coordinator's "go" (then starts anyway)
_GO_TIMEOUT_S = 120.0
_GO_POLL_S = 0.05


class WorkerSpiderMiddleware:
    def __init__(self, store: CrawlStore, worker: str, crawler: Any = None) -> None:
        self.store = store
        self.worker = worker
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> "WorkerSpiderMiddleware":
        params = params_from_settings(crawler.settings, "distributed", DistributedParams)
        if not params.redis_url or not params.crawl_id:
            raise NotConfigured("not a distributed crawl")
        return cls(CrawlStore(crawl_client(params), params.crawl_id), params.worker_id, crawler)

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        # the coordinator says "go" when its local workers are all up, so they start together (a worker
        # joining later finds it set)
        deadline = time.monotonic() + _GO_TIMEOUT_S
        while not self.store.is_go() and time.monotonic() < deadline:
            await asyncio.sleep(_GO_POLL_S)
        async for entry in start:
            yield entry
        if self.crawler is not None:
            self.crawler.signals.send_catch_log(start_done)  # the scheduler marks it (and keeps it marked)

    def _done(self, response: Any) -> None:
        request = getattr(response, "request", None)
        if request is not None and self.crawler is not None:
            self.crawler.signals.send_catch_log(request_done, request=request)

    def process_spider_output(self, response: Any, result: Iterable[Any]) -> Iterable[Any]:
        yield from result
        self._done(response)

    async def process_spider_output_async(self, response: Any, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for entry in result:
            yield entry
        self._done(response)


def worker_settings(redis_url: str, crawl_id: str, worker_id: str, outage: OutageParams = OUTAGE) -> dict[str, Any]:
    """The Scrapy settings (command-line priority) that turn a ``site`` crawl into a worker of ``crawl_id``
    (its scrapy-redis client with the crawl's ``outage`` limits)."""
    keys = CrawlKeys(crawl_id)
    return {
        # the frontier: scrapy-redis's scheduler, a queue of its kind whose pop is a lease, and its
        # dupefilter, on the crawl's keys
        "SCHEDULER": "boilerstrip.distributed.scheduler.RedisFrontierScheduler",
        "SCHEDULER_QUEUE_CLASS": "boilerstrip.distributed.queue.LeasedPriorityQueue",
        "SCHEDULER_QUEUE_CONSUMER": worker_id,  # the queue's leases and heartbeat are the worker's
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_QUEUE_KEY": keys.queue,
        "SCHEDULER_DUPEFILTER_KEY": keys.dupefilter,
        "SCHEDULER_PERSIST": True,  # a worker that stops must not clear the queue the others share
        "REDIS_URL": redis_url,
        # scrapy-redis's client rides out an outage as the others do (its default retries a timed-out
        # command, which a paused server would run twice)
        "REDIS_PARAMS": redis_options(outage),
        "BOILERSTRIP_DISTRIBUTED_REDIS_URL": redis_url,
        "BOILERSTRIP_DISTRIBUTED_CRAWL_ID": crawl_id,
        "BOILERSTRIP_DISTRIBUTED_WORKER_ID": worker_id,
        # records and ledger go to Redis (WorkerLedger); the coordinator writes the files and finishes once
        "FEEDS": {},
        "BOILERSTRIP_LEDGER_ENABLED": False,
        "BOILERSTRIP_FINISHING_ENABLED": False,
        # the template counts every worker cleans with
        "BOILERSTRIP_STATE_DIR": redis_url,
        "BOILERSTRIP_STATE_BACKEND": "boilerstrip.state.RedisState",
        "DOWNLOADER_MIDDLEWARES": {"boilerstrip.distributed.lease.HostLeaseMiddleware": 980,
                                   # one robots.txt fetch per host for the whole crawl
                                   "boilerstrip.downloadermiddlewares.robots.Rfc9309RobotsMiddleware": None,
                                   "boilerstrip.distributed.robots.SharedRobotsMiddleware": 100},
        "SPIDER_MIDDLEWARES": {"boilerstrip.distributed.worker.WorkerSpiderMiddleware": 10,
                               # one page budget per host (and per date pattern) for the whole crawl
                               "boilerstrip.spidermiddlewares.traps.TrapFilterMiddleware": None,
                               "boilerstrip.distributed.traps.SharedTrapFilterMiddleware": 950},
    }
