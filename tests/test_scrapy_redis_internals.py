"""Guards for what the distributed crawl takes from scrapy-redis beyond its public settings
(docs/scrapy-internals.md), and the glue checked against the installed Scrapy.

``boilerstrip/distributed/scheduler.py`` subclasses scrapy-redis's ``Scheduler`` and overrides
``enqueue_request``/``next_request`` with scripts that keep scrapy-redis's formats (the priority queue: a
sorted set of serialized requests scored ``-priority``; the dupefilter: a set of ``request_fingerprint``
values) and uses the queue's protected ``_encode_request``/``_decode_request``. The pins below fail the
day scrapy-redis changes any of these; re-read the upstream code, carry the change over, update the pin.
"""

from __future__ import annotations

import hashlib
import inspect
from importlib.metadata import version
from pathlib import Path

import pytest
import scrapy_redis.dupefilter
import scrapy_redis.queue
import scrapy_redis.scheduler
from scrapy import Request
from scrapy.utils.test import get_crawler

from boilerstrip.distributed.scheduler import INFLIGHT_META, RedisFrontierScheduler
from boilerstrip.distributed.store import CrawlStore
from boilerstrip.distributed.worker import worker_settings
from boilerstrip.spiders.site import SiteSpider

ROOT = Path(__file__).resolve().parents[1]

#: sha256 of inspect.getsource(...) in scrapy-redis 0.9.1
PINS = {
    "Base._encode_request": (scrapy_redis.queue.Base._encode_request,
                             "6678716815a7f7b27241838996bec888dda43105204b53a48ec5cd577da1be4c"),
    "Base._decode_request": (scrapy_redis.queue.Base._decode_request,
                             "216f9ecbcda306fae4956a2e98882b81a1b89356b291783eeafce32087542582"),
    "PriorityQueue": (scrapy_redis.queue.PriorityQueue,
                      "aff1b5e6f6c2f072f32ef1e0c726d0f492b6514407f8fe33ee99380d748c014a"),
    "Scheduler.enqueue_request": (scrapy_redis.scheduler.Scheduler.enqueue_request,
                                  "7802c29d2e4df3ffcc77964bfd7c5ffb1780514b579815cb7b2f88a9bbea54a0"),
    "Scheduler.next_request": (scrapy_redis.scheduler.Scheduler.next_request,
                               "ebb043f7cc1b3ed7e5d5441cd1b915acf0dbe406f993ea1aefc895333ae051fe"),
    "RFPDupeFilter.request_seen": (scrapy_redis.dupefilter.RFPDupeFilter.request_seen,
                                   "61368d6be1777988ad69f6c38ba4c97c0452ed2f04959b9fabf5d1ab42260a7a"),
    "RFPDupeFilter.request_fingerprint": (scrapy_redis.dupefilter.RFPDupeFilter.request_fingerprint,
                                          "9adda27d5520461d450fb37b08faa9543a101123bfe1d2f0e5d1204b0823d574"),
}


@pytest.mark.parametrize("name", sorted(PINS))
def test_the_scrapy_redis_code_we_build_on_is_unchanged(name) -> None:
    obj, pinned = PINS[name]
    assert hashlib.sha256(inspect.getsource(obj).encode("utf-8")).hexdigest() == pinned, (
        f"scrapy_redis {name} changed: re-check boilerstrip/distributed/scheduler.py and store.py")


def test_the_versions_are_the_pinned_ones() -> None:
    requirements = (ROOT / "requirements.txt").read_text()
    for name in ("scrapy", "scrapy-redis", "redis"):
        assert f"{name}=={version(name)}\n" in requirements, name
    assert version("scrapy") == "2.19.0" and version("scrapy-redis") == "0.9.1"


def _scheduler(redis_url: str, crawl_id: str, worker: str):
    settings = {**worker_settings(redis_url, crawl_id, worker), "DOWNLOADER_MIDDLEWARES": {}, "SPIDER_MIDDLEWARES": {}}
    crawler = get_crawler(SiteSpider, settings_dict=settings)
    spider = SiteSpider.from_crawler(crawler, url="http://example.org/")
    crawler.spider = spider
    scheduler = RedisFrontierScheduler.from_crawler(crawler)
    scheduler.open(spider)
    return scheduler, spider


def test_our_scheduler_speaks_scrapy_redis_formats_on_scrapy_2_19(redis_url) -> None:
    a, spider = _scheduler(redis_url, "fmt", "a")
    b, _ = _scheduler(redis_url, "fmt", "b")
    try:
        first = Request("http://example.org/x", callback=spider.parse, errback=spider.errback, priority=-1,
                        meta={"boilerstrip_kind": "page"})
        a.ledger.request_scheduled(first)  # what the request_scheduled signal does before enqueue
        assert a.enqueue_request(first)
        again = Request("http://example.org/x", callback=spider.parse, meta={"boilerstrip_kind": "page"})
        b.ledger.request_scheduled(again)
        assert not b.enqueue_request(again)  # the shared dupefilter: another worker's copy is refused
        assert id(again) in b.dropped_first
        # scrapy-redis's own queue class reads what we pushed (same key, score and serialization)
        plain = scrapy_redis.queue.PriorityQueue(a.server, spider, a.queue_key)
        assert len(plain) == 1
        popped = b.next_request()
        assert popped.url == "http://example.org/x" and popped.callback.__name__ == "parse"
        assert popped.meta["boilerstrip_ledger_key"] == "http://example.org/x" and popped.priority == -1
        store = CrawlStore(a.server, "fmt")
        assert a.server.zcard(store.keys.inflight("b")) == 1 and len(plain) == 0
        assert a.server.hget(store.keys.admitted, "http://example.org/x") == b"a"
        # a retry of the popped request replaces it in the queue and leaves b's in-flight set
        retry = popped.replace(dont_filter=True)
        assert INFLIGHT_META in retry.meta and b.enqueue_request(retry)
        assert a.server.zcard(store.keys.inflight("b")) == 0 and len(plain) == 1
    finally:
        a.close("finished")
        b.close("finished")
