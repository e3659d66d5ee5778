"""What a distributed crawl keeps in Redis, and every operation on it that must be atomic (Lua scripts).

One crawl = one id; every key starts with ``boilerstrip:crawl:ID:`` (:class:`CrawlKeys`). The frontier is
scrapy-redis's: its priority queue (a sorted set of serialized requests) and its dupefilter (a set of
fingerprints). Around it, what makes "nothing lost when a worker dies" and "done" decidable:

- **in flight** (``inflight:W``, a sorted set per worker, member = the serialized request, score = its
  queue score): a request popped from the queue moves there *in the same script* (:meth:`CrawlStore.pop`),
  and leaves it when it is done (:meth:`ack`): its URL settled, or a successor (redirect hop, retry) pushed
  in its place in the same script (:meth:`push`). A worker whose heartbeat key (``worker:W``, a TTL) has
  expired is dead: :meth:`requeue_dead` moves its in-flight requests back to the queue with their scores.
  This is a visibility timeout tied to the worker's life, not to a request's duration: a slow download is
  never handed out twice while its worker lives, and a killed worker's requests come back one heartbeat
  TTL later.
- **the ledger** (``admitted``: URL -> worker that admitted it, set when the dupefilter let its first request
  in; ``outcomes``: URL -> ``{"outcome", "reason", "detail", "admitted", "worker"}``; ``records``: URL -> its
  JSONL line): settled by :meth:`settle` together with the ack, so a URL settled is never also in flight.
  The first settlement stands; a repeat (a requeued request that had been settled) is counted, not kept.
- **done** (:meth:`snapshot`): queue empty, no request in flight, every live worker past its start
  requests; read in one script so no pop or push falls between the reads.

Pure Python over a ``redis.Redis`` client: no Scrapy import.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["CrawlKeys", "CrawlStore", "Snapshot", "KEY_ROOT"]

KEY_ROOT = "boilerstrip:crawl"

# KEYS[1] queue, KEYS[2] inflight:W, KEYS[3] workers; ARGV[1] worker. Pops the best request into the worker's
# in-flight set, and (re-)registers the worker so the snapshot counts what it holds.
_POP = """
local got = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #got == 0 then return false end
redis.call('ZREM', KEYS[1], got[1])
redis.call('ZADD', KEYS[2], got[2], got[1])
redis.call('SADD', KEYS[3], ARGV[1])
return got[1]
"""

# KEYS[1] worker:W, KEYS[2] workers, KEYS[3] started, KEYS[4] dead, KEYS[5] coordinator, KEYS[6] done; ARGV[1]
# value, ARGV[2] ttl ms, ARGV[3] "1" when past its start requests, ARGV[4] worker. A worker taken for dead (its
# reactor was blocked longer than the TTL) joins again with its next beat; what it held was requeued, and done
# twice settles once. Returns 1 while the crawl has a coordinator (its liveness key) or is done, 0 when not.
_BEAT = """
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[4])
redis.call('SREM', KEYS[4], ARGV[4])
if ARGV[3] == '1' then redis.call('SADD', KEYS[3], ARGV[4]) end
if redis.call('EXISTS', KEYS[5]) == 1 or redis.call('EXISTS', KEYS[6]) == 1 then return 1 end
return 0
"""

# KEYS[1] queue, KEYS[2] inflight:W, KEYS[3] admitted, KEYS[4] dupefilter; ARGV[1] score, ARGV[2] data,
# ARGV[3] acked data or "", ARGV[4] ledger key to mark admitted ("" = none), ARGV[5] worker, ARGV[6] the
# request's fingerprint ("" = dont_filter), ARGV[7] the page budget (0 = none). Returns 1 (queued), 0 (the
# dupefilter has seen the fingerprint) or 2 (a new URL over the budget: not queued, fingerprint kept).
_PUSH = """
if ARGV[6] ~= '' and redis.call('SADD', KEYS[4], ARGV[6]) == 0 then return 0 end
local budget = tonumber(ARGV[7])
if ARGV[4] ~= '' and budget > 0 and redis.call('HEXISTS', KEYS[3], ARGV[4]) == 0
   and redis.call('HLEN', KEYS[3]) >= budget then return 2 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('ZREM', KEYS[2], ARGV[3]) end
if ARGV[4] ~= '' then redis.call('HSETNX', KEYS[3], ARGV[4], ARGV[5]) end
return 1
"""

# KEYS[1] outcomes, KEYS[2] records, KEYS[3] inflight:W, KEYS[4] counters; ARGV[1] url, ARGV[2] entry JSON,
# ARGV[3] "1" when admitted, ARGV[4] record line or "", ARGV[5..] acked data.
# Returns 1 settled, 0 already settled (kept the first).
_SETTLE = """
local settled = 0
local old = redis.call('HGET', KEYS[1], ARGV[1])
local replace = not old
if old and ARGV[3] == '1' and not cjson.decode(old)['admitted'] then replace = true end
if replace then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], ARGV[1], ARGV[4]) end
  settled = 1
else
  redis.call('HINCRBY', KEYS[4], 'settled_again', 1)
end
for i = 5, #ARGV do redis.call('ZREM', KEYS[3], ARGV[i]) end
return settled
"""

# KEYS[1] queue, KEYS[2] inflight:W, KEYS[3] worker:W (heartbeat), KEYS[4] workers, KEYS[5] counters,
# KEYS[6] started, KEYS[7] dead; ARGV[1] worker. Requeues a dead worker's requests; -1 when it is alive.
_REQUEUE = """
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
local held = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = 1, #held, 2 do redis.call('ZADD', KEYS[1], held[i + 1], held[i]) end
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[4], ARGV[1])
redis.call('SREM', KEYS[6], ARGV[1])
redis.call('HINCRBY', KEYS[5], 'requeued', #held / 2)
redis.call('HINCRBY', KEYS[5], 'presumed_dead', 1)
redis.call('SADD', KEYS[7], ARGV[1])
return #held / 2
"""

# KEYS[1] queue, KEYS[2] workers, KEYS[3] started; ARGV[1] the in-flight key prefix, ARGV[2] heartbeat prefix
# -> {queued, in flight, live workers, live workers not past their start requests, dead workers}
_SNAPSHOT = """
local queued = redis.call('ZCARD', KEYS[1])
local inflight, live, starting, dead = 0, 0, 0, 0
for _, w in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  inflight = inflight + redis.call('ZCARD', ARGV[1] .. w)
  if redis.call('EXISTS', ARGV[2] .. w) == 1 then
    live = live + 1
    if redis.call('SISMEMBER', KEYS[3], w) == 0 then starting = starting + 1 end
  else
    dead = dead + 1
  end
end
return {queued, inflight, live, starting, dead}
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
        return self._k("requests")  # scrapy-redis's priority queue

    @property
    def dupefilter(self) -> str:
        return self._k("dupefilter")  # scrapy-redis's fingerprints

    @property
    def workers(self) -> str:
        return self._k("workers")

    @property
    def started(self) -> str:
        return self._k("started")  # workers whose start requests are all scheduled

    def heartbeat(self, worker: str) -> str:
        return self._k(f"worker:{worker}")

    def inflight(self, worker: str) -> str:
        return self._k(f"inflight:{worker}")

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

    @property
    def budget(self) -> str:
        return self._k("budget")  # page requests admitted so far (the shared --max-pages budget)

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
    """The atomic operations of one crawl on a ``redis.Redis`` client."""

    def __init__(self, client: Any, crawl_id: str) -> None:
        self.r = client
        self.keys = CrawlKeys(crawl_id)
        self._started: set[str] = set()  # workers of this process past their start requests
        self._pop = client.register_script(_POP)
        self._beat = client.register_script(_BEAT)
        self._push = client.register_script(_PUSH)
        self._settle = client.register_script(_SETTLE)
        self._requeue = client.register_script(_REQUEUE)
        self._snapshot = client.register_script(_SNAPSHOT)

    # -- workers -------------------------------------------------------------------------------------------
    def register(self, worker: str, ttl_s: float) -> None:
        self.beat(worker, ttl_s)

    def beat(self, worker: str, ttl_s: float) -> bool:
        """Refresh this worker's heartbeat; False when the crawl has lost its coordinator (its liveness key
        expired, and the crawl is not done)."""
        # the value says which process it is (a test or an operator can find the pid of a worker)
        value = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "at": time.time()})
        return bool(self._beat(keys=[self.keys.heartbeat(worker), self.keys.workers, self.keys.started, self.keys.dead,
                                     self.keys.coordinator, self.keys.done],
                               args=[value, max(1, int(ttl_s * 1000)), "1" if worker in self._started else "0", worker]))

    def coordinator_alive(self, ttl_s: float) -> None:
        """The coordinator says it lives, for ``ttl_s`` more (workers stop when this key expires)."""
        self.r.set(self.keys.coordinator, os.getpid(), px=max(1, int(ttl_s * 1000)))

    def mark_started(self, worker: str) -> None:
        self._started.add(worker)
        self.r.sadd(self.keys.started, worker)

    def leave(self, worker: str) -> None:
        """A worker that stops with nothing in flight."""
        pipe = self.r.pipeline(transaction=True)
        pipe.delete(self.keys.heartbeat(worker))
        pipe.srem(self.keys.workers, worker)
        pipe.srem(self.keys.started, worker)
        pipe.execute()

    # -- frontier ------------------------------------------------------------------------------------------
    def pop(self, worker: str) -> bytes | None:
        return self._pop(keys=[self.keys.queue, self.keys.inflight(worker), self.keys.workers], args=[worker])

    def push(self, worker: str, score: float, data: bytes, acked: bytes | None = None, admit: str = "",
             dupefilter: str = "", fingerprint: str = "", budget: int = 0) -> int:
        """Push ``data`` unless ``fingerprint`` is in ``dupefilter`` (0) or ``admit`` is a new URL and
        ``budget`` URLs are admitted already (2); ack ``acked``; mark ``admit`` admitted. 1 when queued."""
        return int(self._push(keys=[self.keys.queue, self.keys.inflight(worker), self.keys.admitted,
                                    dupefilter or self.keys.dupefilter],
                              args=[score, data, acked or b"", admit, worker, fingerprint, int(budget)]))

    def ack(self, worker: str, *data: bytes) -> None:
        if data:
            self.r.zrem(self.keys.inflight(worker), *data)

    def settle(self, worker: str, url: str, outcome: str, reason: str = "", detail: str = "",
               admitted: bool = True, line: bytes = b"", acked: tuple[bytes, ...] = ()) -> bool:
        entry = json.dumps({"outcome": outcome, "reason": reason, "detail": detail[:300], "admitted": admitted,
                            "worker": worker})
        return bool(self._settle(keys=[self.keys.outcomes, self.keys.records, self.keys.inflight(worker),
                                       self.keys.counters],
                                 args=[url, entry, "1" if admitted else "0", line, *acked]))

    def requeue_dead(self) -> int:
        """Requeue the in-flight requests of every registered worker whose heartbeat expired."""
        total = 0
        for raw in self.r.smembers(self.keys.workers):
            worker = raw.decode()
            moved = int(self._requeue(keys=[self.keys.queue, self.keys.inflight(worker), self.keys.heartbeat(worker),
                                            self.keys.workers, self.keys.counters, self.keys.started,
                                            self.keys.dead],
                                      args=[worker]))
            total += max(0, moved)
        return total

    def snapshot(self) -> Snapshot:
        values = self._snapshot(keys=[self.keys.queue, self.keys.workers, self.keys.started],
                                args=[self.keys.inflight(""), self.keys.heartbeat("")])
        return Snapshot(*(int(v) for v in values))

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
