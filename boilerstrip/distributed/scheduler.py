"""The worker's side of the shared frontier: scrapy-redis's scheduler on a leased queue, accountable.

``RedisFrontierScheduler`` is scrapy-redis's ``Scheduler`` with its public parts as they are configured by
:func:`boilerstrip.distributed.worker.worker_settings`: ``SCHEDULER_QUEUE_CLASS`` is
:class:`~boilerstrip.distributed.queue.LeasedPriorityQueue` (scrapy-redis's priority queue whose pop is a
lease), ``DUPEFILTER_CLASS`` scrapy-redis's ``RFPDupeFilter``, ``SCHEDULER_PERSIST`` on. It changes:

- **enqueue_request**: the dupefilter's check and the push are one step (the queue's ``push`` with the
  dupefilter's ``request_fingerprint`` and ``key``), and a redirect hop or retry releases the lease of the
  request it replaces in that step;
- **next_request**: the queue's pop leases the request to this worker; a page's URL is then entered as
  admitted, within the crawl's page budget (:meth:`CrawlStore.admit`; a URL over it is settled
  ``filtered:max_pages``);
- the requests a worker holds are **acked** when their URL settles (:class:`WorkerLedger`: the ledger entry,
  and for an item its JSONL line, commit in one transaction with the ack) or, for sitemaps, when their callback has run
  (:data:`request_done`, sent by :class:`~boilerstrip.distributed.worker.WorkerSpiderMiddleware`);
- the queue's heartbeat is refreshed every ``DistributedParams.heartbeat_s``, with the crawl's own side
  (:meth:`CrawlStore.beat`: is the coordinator alive?).

A worker killed with -9 loses nothing it settled, and whatever it held is requeued by the coordinator once its
heartbeat expires. Scrapy's engine calls ``next_request`` only when something wakes it (a finished download,
or its 5 s heartbeat): an idle worker is woken every ``DistributedParams.idle_poll_s``
(:meth:`RedisFrontierScheduler._wake`).
"""

from __future__ import annotations

import io
import logging
from typing import Any

import redis
from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.defer import deferred_from_coro
from scrapy_redis.scheduler import Scheduler as ScrapyRedisScheduler
from twisted.internet import task

from boilerstrip.config import params_from_settings
from boilerstrip.distributed.params import DistributedParams
from boilerstrip.distributed.queue import LEASE_META, LeasedPriorityQueue
from boilerstrip.distributed.store import CrawlStore
from boilerstrip.feeds import SafeJsonLinesExporter
from boilerstrip.items import EXPORT_FIELDS
from boilerstrip.ledger import admit, dropped_outcome, error_outcome, is_page, settlement_key
from boilerstrip.meta import KIND_META, LEDGER_KEY, LEDGER_SKIP
from boilerstrip.outcomes import url_settled

__all__ = ["RedisFrontierScheduler", "WorkerLedger", "request_done", "start_done"]

logger = logging.getLogger(__name__)

#: meta: set when this worker gave the request its ledger key (its first scheduling)
_FIRST_META = "_boilerstrip_first"
#: meta of the wake-up request an idle worker crawls to make the engine look at the queue (never queued)
_WAKE_META = "_boilerstrip_wake"
#: meta: this worker's first scheduling of the request was refused by the shared dupefilter (another worker, or an
#: earlier link, admitted the URL): its "duplicate" settlement is not this worker's to account for
_REFUSED_FIRST_META = "_boilerstrip_refused_first"
_WAKE_URL = "data:,wake"
#: signal request_done(request): a request's callback has run (sent for requests that are not pages)
request_done = object()
#: signal start_done(): every start request of this worker is scheduled
start_done = object()

STATS = "boilerstrip/distributed"


def _is_page(request: Any) -> bool:
    return is_page(request.meta)


class RedisFrontierScheduler(ScrapyRedisScheduler):
    queue: LeasedPriorityQueue

    @classmethod
    def from_crawler(cls, crawler: Any) -> "RedisFrontierScheduler":
        params = params_from_settings(crawler.settings, "distributed", DistributedParams)
        if not (params.redis_url and params.crawl_id and params.worker_id):
            raise ValueError("RedisFrontierScheduler needs BOILERSTRIP_DISTRIBUTED_REDIS_URL, _CRAWL_ID and _WORKER_ID")
        scheduler = super().from_crawler(crawler)
        scheduler.setup(crawler, params)
        return scheduler

    def setup(self, crawler: Any, params: DistributedParams) -> None:
        self.crawler = crawler
        self.params = params
        self.worker = params.worker_id
        self.store = CrawlStore(self.server, params.crawl_id)
        self.leases_by_key: dict[str, set[str]] = {}  # ledger key -> leases of its requests held here
        self.ledger = WorkerLedger(self, crawler)
        self._beat: task.LoopingCall | None = None
        self._poll: task.LoopingCall | None = None
        self.done_seen = False  # the coordinator said the crawl is done
        connect = crawler.signals.connect
        connect(self.ledger.request_scheduled, signal=signals.request_scheduled)
        connect(self.ledger.item_scraped, signal=signals.item_scraped)
        connect(self.ledger.item_dropped, signal=signals.item_dropped)
        connect(self.ledger.item_error, signal=signals.item_error)
        connect(self.ledger.url_settled, signal=url_settled)
        connect(self.request_done, signal=request_done)
        connect(self.start_done, signal=start_done)
        connect(self.spider_idle, signal=signals.spider_idle)

    # -- lifecycle -----------------------------------------------------------------------------------------
    def open(self, spider: Any) -> Any:
        result = super().open(spider)
        if not isinstance(self.queue, LeasedPriorityQueue) or self.queue.consumer != self.worker:
            raise ValueError("a worker's SCHEDULER_QUEUE_CLASS is boilerstrip.distributed.queue.LeasedPriorityQueue, "
                             "its SCHEDULER_QUEUE_CONSUMER the worker id (worker_settings sets both)")
        self.queue.beat(self.params.heartbeat_ttl_s)
        self.store.beat(self.worker)
        self._beat = task.LoopingCall(self._heartbeat)
        self._beat.start(self.params.heartbeat_s, now=False)
        return result

    def _heartbeat(self) -> None:
        try:
            self.queue.beat(self.params.heartbeat_ttl_s)
            coordinated = self.store.beat(self.worker)
        except redis.RedisError as exc:
            # Redis was gone past the outage limit (boilerstrip.distributed.connection): nothing this worker
            # crawls could be queued or settled any more, so it stops (its coordinator stops too)
            logger.error("worker %s: Redis unavailable past the outage limit (%s): stopping", self.worker, exc)
            self._stop("redis_unavailable")
            return
        if not coordinated and not self.done_seen:
            # the coordinator's liveness key expired (CoordinatorParams.liveness_ttl_s): it died, and nobody
            # will call the crawl done, requeue a dead worker's requests or write the output
            logger.error("worker %s: the coordinator of crawl %s is gone (its liveness key expired): stopping; "
                         "what this worker holds goes back to the queue in Redis for `crawl --resume --redis`",
                         self.worker, self.store.keys.crawl_id)
            self._stop("coordinator_lost")

    def _stop(self, reason: str) -> None:
        if self._beat is not None and self._beat.running:
            self._beat.stop()
        self.crawler.stats.set_value(f"{STATS}/{reason}", 1)
        deferred_from_coro(self.crawler.engine.close_spider_async(reason=reason))

    def close(self, reason: str) -> Any:
        for loop in (self._beat, self._poll):
            if loop is not None and loop.running:
                loop.stop()
        held = len(self.queue.held)
        if held:
            # stopped before the end (Ctrl-C, an error, a lost coordinator): what it holds goes back to the queue
            logger.warning("worker %s stops holding %d requests: they go back to the queue", self.worker, held)
        try:
            from boilerstrip.extensions.progress import down_hosts  # the politeness middleware's gauges

            self.store.leave(self.worker, gave_back=self.queue.leave(),
                             hosts_down=down_hosts(self.crawler.stats.get_stats()))
        except redis.RedisError as exc:  # Redis gone: its heartbeat expires there (if Redis comes back)
            logger.error("worker %s: cannot leave the crawl in Redis: %s", self.worker, exc)
        return super().close(reason)  # SCHEDULER_PERSIST: the shared queue and dupefilter stay

    def start_done(self) -> None:
        self.store.mark_started(self.worker)  # remembered: the heartbeat re-marks it if it was taken for dead

    def spider_idle(self) -> None:
        """Nothing here and nothing queued: stay open until the coordinator says the crawl is done."""
        if self.queue.held:
            # nothing runs in this engine any more: what is still held will not be acked by anyone
            leaked = self.queue.ack(*list(self.queue.held))
            self.crawler.stats.inc_value(f"{STATS}/leaked_inflight", leaked)
            logger.warning("worker %s: %d held requests finished without an ack; released", self.worker, leaked)
            self.leases_by_key.clear()
        if self.store.is_done():
            self.done_seen = True  # from now on the coordinator may finish and delete the crawl's keys
            return
        if self._poll is None:
            engine = self.crawler.engine
            self._poll = task.LoopingCall(self._wake, engine)
            self._poll.start(self.params.idle_poll_s, now=False)
        raise DontCloseSpider("waiting for the shared frontier")

    def _wake(self, engine: Any) -> None:
        """Scrapy pulls from its scheduler when a download ends, when a request is crawled, or every 5 s.
        An idle worker looks sooner through the one public door, ``engine.crawl``: a wake-up request that
        :meth:`enqueue_request` refuses at once (nothing is queued, nothing is accounted)."""
        if self.store.is_done() or len(self.queue) > 0:
            engine.crawl(Request(_WAKE_URL, meta={_WAKE_META: True, LEDGER_SKIP: True, KIND_META: "wake"},
                                 dont_filter=True))

    # -- frontier ------------------------------------------------------------------------------------------
    def enqueue_request(self, request: Any) -> bool:
        if request.meta.get(_WAKE_META):
            return False  # see _wake
        first = bool(request.meta.pop(_FIRST_META, False))
        lease = request.meta.get(LEASE_META)  # a hop or retry: it replaces the request holding this lease
        fingerprint = None if request.dont_filter else self.df.request_fingerprint(request)
        if not self.queue.push(request, fingerprint=fingerprint, seen_key=self.df.key):
            if first:
                request.meta[_REFUSED_FIRST_META] = True
            self.df.log(request, self.spider)
            return False
        if lease:
            self._forget(lease)
        if self.stats:
            self.stats.inc_value("scheduler/enqueued/redis")
        return True

    def next_request(self) -> Any:
        while True:
            request = self.queue.pop()
            if request is None:
                return None
            lease = request.meta[LEASE_META]
            key = request.meta.get(LEDGER_KEY) if _is_page(request) else None
            if key and not self.store.admit(self.worker, key, self.params.max_pages):
                # the crawl's page budget (--max-pages), counted across workers: a new URL over it is entered
                # once, not admitted, and never fetched
                self.crawler.stats.inc_value("boilerstrip/filtered/max_pages")
                self.store.settle(self.worker, key, "filtered", "max_pages", admitted=False,
                                  also=lambda pipe, lease=lease: self.queue.ack(lease, pipeline=pipe))
                continue
            if key:
                self.leases_by_key.setdefault(key, set()).add(lease)
            if self.stats:
                self.stats.inc_value("scheduler/dequeued/redis")
            return request

    def _forget(self, lease: str) -> None:
        for leases in self.leases_by_key.values():
            leases.discard(lease)

    def release_key(self, key: str) -> tuple[str, ...]:
        """The leases of ledger key ``key`` held here, forgotten (the caller acks them with its settlement)."""
        return tuple(self.leases_by_key.pop(key, ()))

    def request_done(self, request: Any) -> None:
        lease = request.meta.get(LEASE_META)
        if lease and not _is_page(request):
            self._forget(lease)
            self.queue.ack(lease)


class WorkerLedger:
    """This worker's settlements, written to Redis (``outcomes``, ``records``) with the ack of what it held.

    The rules of :mod:`boilerstrip.ledger.rules` (a worker writes no ledger files): a URL is admitted when
    its first request is popped (within the page budget); its key rides on every hop and retry; a duplicate the
    dupefilter refused was never admitted; a link filtered before scheduling is entered once as
    ``admitted: false``. Redis does what :class:`boilerstrip.ledger.Ledger` does in memory (the store's
    settle script enters each URL once).
    """

    def __init__(self, scheduler: RedisFrontierScheduler, crawler: Any) -> None:
        self.scheduler = scheduler
        self.crawler = crawler
        self.store = scheduler.store
        self.worker = scheduler.worker
        self._buffer = io.BytesIO()
        self._exporter = SafeJsonLinesExporter(self._buffer, fields_to_export=list(EXPORT_FIELDS))
        self._exporter.crawler = crawler
        self._exporter.keep_trail(True)  # the coordinator's finishing pass works from it, and drops it

    def request_scheduled(self, request: Any) -> None:
        if admit(request.meta, request.url) is not None:
            request.meta[_FIRST_META] = True

    def _line(self, item: Any) -> bytes:
        self._buffer.seek(0)
        self._buffer.truncate()
        self._exporter.export_item(item)
        return self._buffer.getvalue()

    def _settle(self, key: str, outcome: str, reason: str = "", detail: str = "", line: bytes = b"") -> None:
        leases = self.scheduler.release_key(key)
        ack = self.scheduler.queue.ack
        # the outcome and the ack of what was held for the URL commit together
        if not self.store.settle(self.worker, key, outcome, reason, detail, admitted=True, line=line,
                                 also=lambda pipe: ack(*leases, pipeline=pipe)):
            self.crawler.stats.inc_value(f"{STATS}/settled_again")

    def item_scraped(self, item: Any, response: Any = None) -> None:
        key = settlement_key(response, item)
        line = self._line(item)
        if line:
            self._settle(key, "item", line=line)
        else:
            self._settle(key, "failed", "export_error")

    def item_dropped(self, item: Any, response: Any = None, exception: Any = None) -> None:
        self._settle(settlement_key(response, item), *dropped_outcome(exception))

    def item_error(self, item: Any, response: Any = None, failure: Any = None) -> None:
        outcome, reason, detail, _ = error_outcome(failure)
        self._settle(settlement_key(response, item), outcome, reason, detail)

    def url_settled(self, url: str, outcome: str, reason: str, detail: str = "", request: Any = None) -> None:
        key = request.meta.get(LEDGER_KEY) if request is not None else None
        if request is not None and request.meta.pop(_REFUSED_FIRST_META, False):
            if reason.startswith("duplicate"):
                return  # another worker (or an earlier link) admitted this URL: nothing to account for here
        if key:
            self._settle(key, outcome, reason, detail)
        else:
            # filtered before it was scheduled (offsite, a trap, the page budget): entered once, not admitted
            self.store.settle(self.worker, url, outcome, reason, detail, admitted=False)

