"""What a distributed crawl keeps in Redis beside its frontier, and the steps on it that must be atomic.

One crawl = one id; every key starts with ``boilerstrip:crawl:ID:`` (:class:`CrawlKeys`). The frontier is
scrapy-redis's, run through its public extension points: its scheduler, its ``RFPDupeFilter`` (a set of
fingerprints) and a queue class of its kind, :class:`~boilerstrip.distributed.queue.LeasedPriorityQueue`
(its priority queue, with a lease on every pop, a heartbeat per worker, and the requeue of a dead worker's
leases). This module adds what is boilerstrip's own:

- **the ledger** (``admitted``: URL -> the worker that popped its first request, set when it is popped;
  ``outcomes``: URL -> ``{"outcome", "reason", "detail", "admitted", "worker"}``; ``records``: URL -> its
  JSONL line): :meth:`CrawlStore.settle` enters a URL once, in one transaction with the ack of the requests
  the worker held for it (the queue's ``ack`` on the same pipeline), so a URL settled is never also leased;
  a repeat (a requeued request that had been settled) is counted, not kept. :meth:`CrawlStore.admit` enters a URL in ``admitted`` and holds the
  crawl's page budget (``--max-pages``) in one script;
- **done** (:meth:`CrawlStore.snapshot`): the queue's :func:`~boilerstrip.distributed.queue.pending` (nothing
  queued, nothing leased) and every live worker past its start requests;
- the workers' bookkeeping (``started``, ``dead``, ``counters``), the coordinator's liveness key, ``go`` and
  ``done``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from boilerstrip.distributed.queue import consumers_key, heartbeat_key, leases_key, pending, requeue_expired

__all__ = ["CrawlKeys", "CrawlStore", "Snapshot", "KEY_ROOT"]

KEY_ROOT = "boilerstrip:crawl"

# KEYS[1] started, KEYS[2] dead, KEYS[3] coordinator, KEYS[4] done; ARGV[1] "1" when past its start requests,
# ARGV[2] worker. A worker taken for dead (its reactor was blocked longer than the TTL) joins again with its
# next beat; what it held was requeued, and done twice settles once. Returns 1 while the crawl has a
# coordinator (its liveness key) or is done, 0 when not.
_BEAT = """
redis.call('SREM', KEYS[2], ARGV[2])
if ARGV[1] == '1' then redis.call('SADD', KEYS[1], ARGV[2]) end
if redis.call('EXISTS', KEYS[3]) == 1 or redis.call('EXISTS', KEYS[4]) == 1 then return 1 end
return 0
"""

# KEYS[1] admitted; ARGV[1] ledger key, ARGV[2] worker, ARGV[3] the page budget (0 = none).
# Returns 1 (admitted now or before) or 0 (a new URL over the budget: not admitted).
_ADMIT = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 1 end
local budget = tonumber(ARGV[3])
if budget > 0 and redis.call('HLEN', KEYS[1]) >= budget then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""

# KEYS[1] outcomes, KEYS[2] records, KEYS[3] counters; ARGV[1] url, ARGV[2] entry JSON, ARGV[3] "1" when
# admitted, ARGV[4] record line or "". Returns 1 settled, 0 already settled (kept the first).
_SETTLE = """
local old = redis.call('HGET', KEYS[1], ARGV[1])
local replace = not old
if old and ARGV[3] == '1' and not cjson.decode(old)['admitted'] then replace = true end
if not replace then
  redis.call('HINCRBY', KEYS[3], 'settled_again', 1)
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], ARGV[1], ARGV[4]) end
return 1
"""


@dataclass(frozen=True)
class CrawlKeys:
    crawl_id: str

    def _k(self, name: str) -> str:
        return f"{KEY_ROOT}:{self.crawl_id}:{name}"

    @property
    def config(self) -> str:
        return self._k("config")  # the crawl's arguments (JSON), read by every worker

    @property
    def queue(self) -> str:
        return self._k("requests")  # the queue (LeasedPriorityQueue: scrapy-redis's sorted set)

    @property
    def dupefilter(self) -> str:
        return self._k("dupefilter")  # scrapy-redis's fingerprints

    @property
    def workers(self) -> str:
        return consumers_key(self.queue)  # the queue's consumers: the workers

    @property
    def started(self) -> str:
        return self._k("started")  # workers whose start requests are all scheduled

    def heartbeat(self, worker: str) -> str:
        return heartbeat_key(self.queue, worker)  # the queue's heartbeat of a consumer (value: pid, host)

    def inflight(self, worker: str) -> str:
        return leases_key(self.queue, worker)  # the requests a worker holds (the queue's leases)

    @property
    def admitted(self) -> str:
        return self._k("admitted")

    @property
    def outcomes(self) -> str:
        return self._k("outcomes")

    @property
    def records(self) -> str:
        return self._k("records")

    @property
    def counters(self) -> str:
        return self._k("counters")

    @property
    def hosts_down(self) -> str:
        return self._k("hosts_down")  # host -> why, of the hosts a worker gave up (host_down)

    @property
    def dead(self) -> str:
        return self._k("dead")  # workers taken for dead that never came back

    @property
    def done(self) -> str:
        return self._k("done")

    @property
    def coordinator(self) -> str:
        return self._k("coordinator")  # the coordinator's liveness key (a TTL it keeps refreshing)

    @property
    def go(self) -> str:
        return self._k("go")  # set once the local workers are all up: start requests may be scheduled

    def lease(self, host: str) -> str:
        return self._k(f"lease:{host}")  # per host: the leases held (sorted set, score = expiry ms)

    def next_allowed(self, host: str) -> str:
        return self._k(f"next:{host}")  # per host: the earliest next request (Redis time, ms)

    def robots(self, origin: str) -> str:
        return self._k(f"robots:{origin}")

    def traps(self, name: str) -> str:
        return self._k(f"traps:{name}")  # the trap budgets' counters (seen, hosts, patterns)

    @property
    def pattern(self) -> str:
        return self._k("*")


@dataclass(frozen=True)
class Snapshot:
    queued: int
    inflight: int
    live: int
    starting: int
    dead: int

    @property
    def done(self) -> bool:
        """Nothing queued, nothing in flight, and no live worker still scheduling its start requests."""
        return self.queued == 0 and self.inflight == 0 and self.starting == 0


class CrawlStore:
    """The crawl's own keys on a ``redis.Redis`` client (the frontier's are the queue's: :mod:`.queue`)."""

    def __init__(self, client: Any, crawl_id: str) -> None:
        self.r = client
        self.keys = CrawlKeys(crawl_id)
        self._started: set[str] = set()  # workers of this process past their start requests
        self._beat = client.register_script(_BEAT)
        self._admit = client.register_script(_ADMIT)
        self._settle = client.register_script(_SETTLE)

    # -- workers -------------------------------------------------------------------------------------------
    def beat(self, worker: str) -> bool:
        """The crawl's side of a worker's heartbeat (the queue keeps the heartbeat key itself): the worker is
        no longer counted dead, and is past its start requests if it said so. False when the crawl has lost
        its coordinator (its liveness key expired, and the crawl is not done)."""
        return bool(self._beat(keys=[self.keys.started, self.keys.dead, self.keys.coordinator, self.keys.done],
                               args=["1" if worker in self._started else "0", worker]))

    def coordinator_alive(self, ttl_s: float) -> None:
        """The coordinator says it lives, for ``ttl_s`` more (workers stop when this key expires)."""
        self.r.set(self.keys.coordinator, os.getpid(), px=max(1, int(ttl_s * 1000)))

    def mark_started(self, worker: str) -> None:
        self._started.add(worker)
        self.r.sadd(self.keys.started, worker)

    def leave(self, worker: str, gave_back: int = 0, hosts_down: dict[str, str] | None = None) -> None:
        """A worker that stops (after its queue's ``leave``), having given back ``gave_back`` requests and given
        up ``hosts_down`` (host -> why: its politeness middleware's ``host_down``)."""
        pipe = self.r.pipeline(transaction=True)
        pipe.srem(self.keys.started, worker)
        if gave_back:
            pipe.hincrby(self.keys.counters, "requeued", gave_back)
        if hosts_down:
            pipe.hset(self.keys.hosts_down, mapping=hosts_down)
        pipe.execute()

    def hosts_down(self) -> dict[str, str]:
        """Host -> why, of the hosts the workers gave up (``host_down``)."""
        return {k.decode(): v.decode("utf-8", "replace") for k, v in self.r.hgetall(self.keys.hosts_down).items()}

    # -- the ledger ----------------------------------------------------------------------------------------
    def admit(self, worker: str, url: str, budget: int = 0) -> bool:
        """Enter ``url`` as admitted (by ``worker``, if it is new); False when it is new and ``budget`` URLs are
        admitted already (0 = no budget)."""
        return bool(self._admit(keys=[self.keys.admitted], args=[url, worker, int(budget)]))

    def settle(self, worker: str, url: str, outcome: str, reason: str = "", detail: str = "",
               admitted: bool = True, line: bytes = b"", also: Callable[[Any], Any] | None = None) -> bool:
        """Enter ``url``'s outcome (and its JSONL ``line``); False when it was settled already (the first
        stands, unless it was a not-admitted filter entry and this one is admitted). ``also(pipeline)`` queues
        more writes to commit in the same transaction: the ack of the requests held for the URL."""
        entry = json.dumps({"outcome": outcome, "reason": reason, "detail": detail[:300], "admitted": admitted,
                            "worker": worker})
        pipe = self.r.pipeline(transaction=True)
        self._settle(keys=[self.keys.outcomes, self.keys.records, self.keys.counters],
                     args=[url, entry, "1" if admitted else "0", line], client=pipe)
        if also is not None:
            also(pipe)
        return bool(pipe.execute()[0])

    # -- the frontier, as the coordinator sees it ----------------------------------------------------------
    def requeue_dead(self) -> int:
        """Give the leases of every worker whose heartbeat expired back to the queue, and count it."""
        moved = requeue_expired(self.r, self.keys.queue)
        if moved:
            pipe = self.r.pipeline(transaction=True)
            for worker, count in moved.items():
                pipe.hincrby(self.keys.counters, "requeued", count)
                pipe.hincrby(self.keys.counters, "presumed_dead", 1)
                pipe.sadd(self.keys.dead, worker)
                pipe.srem(self.keys.started, worker)
            pipe.execute()
        return sum(moved.values())

    def snapshot(self) -> Snapshot:
        # ``started`` first: a worker enters it only once its start requests are pushed, so a worker read as
        # started has its start requests in the queue's counts read next; one that joins in between is live
        # and not started there, so it counts as starting
        started = {raw.decode() for raw in self.r.smembers(self.keys.started)}
        frontier = pending(self.r, self.keys.queue)
        starting = sum(1 for worker in frontier.live if worker not in started)
        return Snapshot(frontier.queued, frontier.leased, len(frontier.live), starting, len(frontier.dead))

    def set_go(self) -> None:
        self.r.set(self.keys.go, "1")

    def reopen(self) -> None:
        """A crawl resumed (``crawl --resume --redis``): no longer done; its new workers start together."""
        self.r.delete(self.keys.done, self.keys.go)

    def is_go(self) -> bool:
        return bool(self.r.exists(self.keys.go))

    # -- end -----------------------------------------------------------------------------------------------
    def set_done(self) -> None:
        self.r.set(self.keys.done, "1")

    def is_done(self) -> bool:
        return bool(self.r.exists(self.keys.done))

    def counters(self) -> dict[str, int]:
        """requeued, presumed_dead (heartbeats that expired), settled_again; dead_workers (never came back)."""
        counters = {k.decode(): int(v) for k, v in self.r.hgetall(self.keys.counters).items()}
        counters["dead_workers"] = int(self.r.scard(self.keys.dead))
        return counters

    def clear(self) -> None:
        """Delete every key of the crawl (after the coordinator has read what it needs)."""
        for key in self.r.scan_iter(match=self.keys.pattern, count=1000):
            self.r.delete(key)
