"""The settings of distributed crawls (``BOILERSTRIP_DISTRIBUTED_*``). Pure Python: no Scrapy import."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DistributedParams"]


@dataclass(frozen=True)
class DistributedParams:
    # The Redis server of the crawl (redis://HOST:PORT/DB). Empty: not a distributed crawl.
    redis_url: str = ""
    # The crawl's id: every key of the crawl is under boilerstrip:crawl:<id>: (set by the coordinator).
    crawl_id: str = ""
    # This worker's id (unique in the crawl; `boilerstrip worker` makes one from host, pid and a random part).
    worker_id: str = ""
    # A worker refreshes its heartbeat key this often...
    heartbeat_s: float = 1.0
    # ...and is taken for dead when it has not for this long: its in-flight requests go back to the queue.
    # 10 s rides out a reactor busy with one large page (seconds) and still recovers a killed worker fast.
    heartbeat_ttl_s: float = 10.0
    # An idle worker asks the queue for work this often (Scrapy's engine would wait 5 s between looks).
    idle_poll_s: float = 0.2
    # A request waiting for its host's lease asks again after at most this long.
    lease_poll_s: float = 0.02
    # A lease not given back (its worker died mid-download) expires after DOWNLOAD_TIMEOUT plus this.
    lease_margin_s: float = 30.0
    # The crawl's page budget (--max-pages), counted across all workers by the shared scheduler; the
    # spider's own per-process count is switched off in workers. 0 = no limit.
    max_pages: int = 0
    # Share one per-host lease (delay, Crawl-delay, concurrency) among all workers.
    lease_enabled: bool = True
    # How long every client of the crawl (coordinator and workers) rides out a Redis outage before the
    # crawl stops (OutageParams.limit_s, boilerstrip.distributed.connection, which says why 60 s). The
    # tests of the outage limit set a few seconds.
    redis_outage_limit_s: float = 60.0

    def __post_init__(self) -> None:
        if self.heartbeat_s <= 0 or self.heartbeat_ttl_s <= self.heartbeat_s:
            raise ValueError("heartbeat_s must be > 0 and heartbeat_ttl_s > heartbeat_s")
        if self.idle_poll_s <= 0 or self.lease_poll_s <= 0 or self.lease_margin_s < 0:
            raise ValueError("idle_poll_s and lease_poll_s must be > 0, lease_margin_s >= 0")
        if self.redis_outage_limit_s <= 0:
            raise ValueError("redis_outage_limit_s must be > 0")
