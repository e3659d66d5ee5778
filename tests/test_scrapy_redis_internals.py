"""The distributed crawl uses scrapy-redis through its public extension points only (docs/scrapy-internals.md).

A worker's ``SCHEDULER`` subclasses ``scrapy_redis.scheduler.Scheduler``, its ``SCHEDULER_QUEUE_CLASS`` is a
queue of scrapy-redis's kind (``LeasedPriorityQueue``, a ``scrapy_redis.queue.PriorityQueue``), its
``DUPEFILTER_CLASS`` is ``RFPDupeFilter``; requests are serialized with Scrapy's public
``Request.to_dict``/``request_from_dict``. Nothing is copied from scrapy-redis, so no source is pinned: the
guards are that no module reaches a protected scrapy-redis name, that what the queue writes is what
scrapy-redis's own queue reads, and the pinned versions.
"""

from __future__ import annotations

import ast
import pickle
from importlib.metadata import version
from pathlib import Path

import scrapy_redis.dupefilter
import scrapy_redis.queue
import scrapy_redis.scheduler
from scrapy import Request
from scrapy.utils.misc import load_object
from scrapy.utils.request import request_from_dict
from scrapy.utils.test import get_crawler

from boilerstrip.distributed.queue import LEASE_META, LeasedPriorityQueue
from boilerstrip.distributed.scheduler import RedisFrontierScheduler
from boilerstrip.distributed.store import CrawlStore
from boilerstrip.distributed.worker import worker_settings
from boilerstrip.spiders.site import SiteSpider

ROOT = Path(__file__).resolve().parents[1]


def test_the_versions_are_the_pinned_ones() -> None:
    requirements = (ROOT / "requirements.txt").read_text()
    for name in ("scrapy", "scrapy-redis", "redis"):
        assert f"{name}=={version(name)}\n" in requirements, name
    assert version("scrapy") == "2.19.0" and version("scrapy-redis") == "0.9.1"


def test_a_worker_is_scrapy_redis_configured_through_its_settings() -> None:
    settings = worker_settings("redis://127.0.0.1:6379/0", "c1", "w1")
    assert issubclass(load_object(settings["SCHEDULER"]), scrapy_redis.scheduler.Scheduler)
    assert issubclass(load_object(settings["SCHEDULER_QUEUE_CLASS"]), scrapy_redis.queue.PriorityQueue)
    assert load_object(settings["DUPEFILTER_CLASS"]) is scrapy_redis.dupefilter.RFPDupeFilter
    assert settings["SCHEDULER_PERSIST"] is True and settings["SCHEDULER_QUEUE_CONSUMER"] == "w1"


def test_no_module_reaches_a_protected_scrapy_redis_name() -> None:
    """A protected name of scrapy-redis may be overridden (the queue's serialization hooks), never reached
    on a scrapy-redis object from outside, nor imported."""
    own = {"_encode_request", "_decode_request"}  # LeasedPriorityQueue's own overrides
    found = []
    for path in sorted((ROOT / "boilerstrip").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("scrapy_redis"):
                found += [f"{path.name}: import {a.name}" for a in node.names if a.name.startswith("_")]
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                if node.attr in own and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                    found.append(f"{path.name}:{node.lineno}: .{node.attr} on another object")
    assert not found, found
    assert {"_encode_request", "_decode_request"} <= set(vars(LeasedPriorityQueue))


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
        assert isinstance(a.queue, LeasedPriorityQueue) and a.queue.consumer == "a"
        first = Request("http://example.org/x", callback=spider.parse, errback=spider.errback, priority=-1,
                        meta={"boilerstrip_kind": "page"})
        a.ledger.request_scheduled(first)  # what the request_scheduled signal does before enqueue
        assert a.enqueue_request(first)
        again = Request("http://example.org/x", callback=spider.parse, meta={"boilerstrip_kind": "page"})
        b.ledger.request_scheduled(again)
        assert not b.enqueue_request(again)  # the shared dupefilter: another worker's copy is refused
        assert again.meta.get("_boilerstrip_refused_first") is True  # its duplicate settlement is not b's
        assert a.server.sismember(a.df.key, a.df.request_fingerprint(first))  # RFPDupeFilter's own fingerprint
        # scrapy-redis's own queue class reads what we pushed (same key, score and serialization: Scrapy's
        # public Request.to_dict under scrapy-redis's pickle)
        plain = scrapy_redis.queue.PriorityQueue(a.server, spider, a.queue_key)
        assert len(plain) == 1
        (data, score), = a.server.zrange(a.queue_key, 0, 0, withscores=True)
        assert score == 1 and request_from_dict(pickle.loads(data), spider=spider).url == "http://example.org/x"
        popped = plain.pop()
        assert popped.callback == spider.parse and popped.errback == spider.errback
        plain.push(popped)  # ...and the other way round
        popped = b.next_request()
        assert popped.url == "http://example.org/x" and popped.callback.__name__ == "parse"
        assert popped.meta["boilerstrip_ledger_key"] == "http://example.org/x" and popped.priority == -1
        store = CrawlStore(a.server, "fmt")
        assert a.server.zcard(store.keys.inflight("b")) == 1 and len(plain) == 0
        assert a.server.hget(store.keys.admitted, "http://example.org/x") == b"b"  # admitted when popped
        # a retry of the popped request replaces it in the queue and leaves b's leases
        retry = popped.replace(dont_filter=True)
        assert LEASE_META in retry.meta and b.enqueue_request(retry)
        assert a.server.zcard(store.keys.inflight("b")) == 0 and len(plain) == 1
        assert LEASE_META not in plain.pop().meta  # a lease is the consumer's, never serialized
    finally:
        a.close("finished")
        b.close("finished")
