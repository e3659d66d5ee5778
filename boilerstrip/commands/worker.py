"""``boilerstrip worker --redis redis://HOST:PORT/DB``: join a distributed crawl as one more worker.

The crawl (its start URLs and options) is read from Redis, where ``boilerstrip crawl ... --redis URL``
published it; without ``--crawl ID`` the worker joins the crawl running now. It runs the ``site`` spider
on the shared frontier until the coordinator says the crawl is done, writes nothing locally (records and
ledger go to Redis) and exits 0. A worker whose coordinator died stops with exit status 1 once the
coordinator's liveness key has expired: within ``CoordinatorParams.liveness_ttl_s`` (90 s) plus one heartbeat
(1 s) and the spider's close. See docs/distributed.md.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from boilerstrip.run import UsageError, apply_settings, build_settings, run_spider
from boilerstrip.urls import without_password

__all__ = ["HELP", "add_arguments", "run", "worker_run_settings"]

HELP = "Join a distributed crawl (boilerstrip crawl --redis) as one more worker."

#: how long a worker waits for a crawl to join when none is running yet
_WAIT_FOR_CRAWL_S = 30.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--redis", required=True, metavar="redis://HOST:PORT/DB", help="the crawl's Redis server")
    parser.add_argument("--crawl", metavar="ID", help="the crawl to join (default: the one running now)")
    parser.add_argument("--worker-id", metavar="NAME", help="this worker's name (default: host-pid-random)")
    parser.add_argument("--wait", type=float, default=_WAIT_FOR_CRAWL_S, metavar="SECONDS",
                        help="wait this long for a crawl to start (default 30)")


def _namespace(config: dict[str, Any]) -> argparse.Namespace:
    return argparse.Namespace(
        urls=config["urls"], profile=config.get("profile"), max_pages=config.get("max_pages"),
        max_depth=config.get("max_depth"), scope=config.get("scope"), no_sitemaps=bool(config.get("no_sitemaps")),
        resume=False, allow_private=list(config.get("allow_private") or []), settings=list(config.get("settings") or []),
        log_level=config.get("log_level") or "WARNING")


def worker_run_settings(config: dict[str, Any], redis_url: str, crawl_id: str, worker_id: str) -> tuple[Any, dict[str, Any]]:
    # Scrapy and redis: for a worker, not the CLI's parser
    from boilerstrip.config import params_from_settings
    from boilerstrip.distributed.connection import crawl_outage
    from boilerstrip.distributed.params import DistributedParams
    from boilerstrip.distributed.worker import worker_settings

    placeholder = Path(tempfile.gettempdir()) / f"boilerstrip-worker-{worker_id}.jsonl"  # FEEDS is cleared below
    settings, spider_kwargs = build_settings(_namespace(config), placeholder)
    outage = crawl_outage(params_from_settings(settings, "distributed", DistributedParams))
    apply_settings(settings, worker_settings(redis_url, crawl_id, worker_id, outage))
    # the page budget is the crawl's, counted by the shared scheduler; the spider's per-process count is off
    budget = spider_kwargs.pop("max_pages", None) or settings.getint("BOILERSTRIP_CRAWL_MAX_PAGES")
    apply_settings(settings, {"BOILERSTRIP_CRAWL_MAX_PAGES": 0, "BOILERSTRIP_DISTRIBUTED_PARAMS": {"max_pages": int(budget or 0)}})
    return settings, spider_kwargs


def _join(client: Any, crawl: str | None, wait_s: float, waiting: Any = None) -> tuple[str, dict[str, Any]] | None:
    """(crawl ID, its configuration) of the crawl to join, waiting up to ``wait_s`` for one; ``waiting()`` is
    called once when the first look finds none (the wait is not silent)."""
    from boilerstrip.distributed.coordinator import CURRENT_KEY, read_config  # redis: as above
    from boilerstrip.distributed.store import CrawlKeys

    deadline = time.monotonic() + wait_s
    first = True
    while True:
        crawl_id = crawl or (client.get(CURRENT_KEY) or b"").decode()
        # a crawl whose coordinator is gone (its liveness key expired: killed, not resumed yet) is not joined
        alive = bool(crawl_id) and bool(client.exists(CrawlKeys(crawl_id).coordinator))
        config = read_config(client, crawl_id) if alive else None
        if config is not None:
            return crawl_id, config
        if time.monotonic() >= deadline:
            return None
        if first and waiting is not None:
            waiting()
        first = False
        time.sleep(0.2)


def run(args: argparse.Namespace) -> int:
    import redis  # as above

    try:
        client = redis.Redis.from_url(args.redis)
        client.ping()
    except (ValueError, redis.RedisError) as exc:
        print(f"boilerstrip worker: cannot reach {args.redis}: {exc}", file=sys.stderr)
        return 2
    which = f"crawl {args.crawl}" if args.crawl else "a crawl"
    joined = _join(client, args.crawl, args.wait, lambda: print(
        f"boilerstrip worker: waiting up to {args.wait:g} s for {which} on {args.redis} "
        "(`boilerstrip crawl URL -o OUT.jsonl --redis ...` starts one)", file=sys.stderr, flush=True))
    if joined is None:
        print(f"boilerstrip worker: no crawl with a live coordinator to join on {args.redis}"
              + (f" (crawl {args.crawl})" if args.crawl else ""), file=sys.stderr)
        return 1
    crawl_id, config = joined
    worker_id = args.worker_id or f"{socket.gethostname().split('.')[0]}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    urls = " ".join(without_password(url) for url in config.get("urls") or [])
    print(f"boilerstrip worker: joined crawl {crawl_id} ({urls}) as {worker_id}",
          file=sys.stderr, flush=True)
    try:
        settings, spider_kwargs = worker_run_settings(config, args.redis, crawl_id, worker_id)
    except UsageError as exc:
        print(f"boilerstrip worker: {exc}", file=sys.stderr)
        return 2
    code, stats = run_spider(settings, spider_kwargs, prog="boilerstrip worker")
    if stats.get("boilerstrip/distributed/coordinator_lost"):
        print(f"boilerstrip worker: the coordinator of crawl {crawl_id} is gone (its liveness key in {args.redis} "
              "expired: it died or lost Redis): stopped; restart the crawl with `boilerstrip crawl ... --resume --redis`",
              file=sys.stderr)
        return 1
    return code
