"""A scrapy-redis priority queue whose pop is a lease: a consumer killed with -9 loses nothing it popped.

``LeasedPriorityQueue`` is a ``SCHEDULER_QUEUE_CLASS`` of scrapy-redis's kind (a subclass of
``scrapy_redis.queue.PriorityQueue``: same sorted set, same score ``-priority``, same serializer). It is
written to be offered upstream: it imports only Scrapy, scrapy-redis and a redis-py client, reads one
optional setting, and keeps its Lua to the four steps that must be atomic.

scrapy-redis's ``PriorityQueue.pop`` removes the request from Redis: from then on it lives only in the
consumer's memory, and a consumer killed mid-download loses it. Here:

- **pop** moves the best request into the consumer's lease set (``<key>:leases:<consumer>``, same score) in
  one script, and tags the request with its lease (``request.meta["redis_lease"]``);
- **ack** (``ack(lease, ...)``) deletes leases: the consumer calls it once a request is done; a consumer
  that writes its results to Redis queues the ack on its own transaction (``ack(..., pipeline=pipe)``), so
  results and ack commit together;
- **push** of a request Scrapy derived from a leased one (a retry or a redirect hop: both copy ``meta``)
  replaces the lease in the same script, so no kill can fall between "the successor is queued" and "the
  predecessor is let go". Given a ``fingerprint`` and the dupefilter's set (``seen_key``), the request is
  pushed only when the fingerprint is new, in the same script: scrapy-redis's scheduler adds the fingerprint
  and pushes in two round trips, and a kill between them leaves a request seen but never queued;
- **heartbeat**: a consumer is alive while its key ``<key>:consumer:<consumer>`` lives (``beat(ttl_s)``,
  called more often than ``ttl_s``; its value says which process it is). ``requeue_expired(server, key)``,
  run periodically by any process, puts the leases of consumers whose heartbeat expired back in the queue
  with their scores: a visibility timeout tied to the consumer's life, not to a request's duration, so a
  slow download is never handed out twice while its consumer lives;
- **done** (``pending(server, key)``): queued and leased requests, and the live and dead consumers, read in
  one script (a pop between two separate reads would hide a request). When consumers ack a request only
  after its follow-up requests are pushed, "nothing queued and nothing leased" means no work can appear;
- **leave()**: a consumer that stops gives back what it still holds.

Requests are serialized with Scrapy's public ``Request.to_dict(spider=...)`` and
``scrapy.utils.request.request_from_dict`` through the queue's serializer (scrapy-redis's pickle unless
``SCHEDULER_SERIALIZER`` says otherwise). The consumer id is the ``SCHEDULER_QUEUE_CONSUMER`` setting, or
``host-pid-random``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import time
import uuid
from dataclasses import dataclass
from typing import Any

from scrapy.utils.request import request_from_dict
from scrapy_redis.queue import PriorityQueue

__all__ = ["LeasedPriorityQueue", "Pending", "LEASE_META", "pending", "requeue_expired", "leases_key",
           "consumers_key", "heartbeat_key"]

logger = logging.getLogger(__name__)

#: meta: the lease of a popped request (copied by Scrapy onto its retries and redirect hops)
LEASE_META = "redis_lease"


def leases_key(key: str, consumer: str) -> str:
    """The sorted set of the requests ``consumer`` holds (member: the serialized request, score: its queue score)."""
    return f"{key}:leases:{consumer}"


def consumers_key(key: str) -> str:
    """The set of the consumers that hold (or held) leases of queue ``key``."""
    return f"{key}:consumers"


def heartbeat_key(key: str, consumer: str) -> str:
    """The heartbeat of ``consumer`` (a TTL); while it lives, its leases stay with it."""
    return f"{key}:consumer:{consumer}"


# KEYS queue, leases, consumers; ARGV consumer. The best request, moved into the consumer's leases.
_POP = """
local got = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #got == 0 then return false end
redis.call('ZREM', KEYS[1], got[1])
redis.call('ZADD', KEYS[2], got[2], got[1])
redis.call('SADD', KEYS[3], ARGV[1])
return got[1]
"""

# KEYS queue, leases, seen; ARGV score, data, the replaced lease's data or '', fingerprint or ''.
# 1 pushed, 0 the fingerprint was in the seen set (nothing changed).
_PUSH = """
if ARGV[4] ~= '' and redis.call('SADD', KEYS[3], ARGV[4]) == 0 then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('ZREM', KEYS[2], ARGV[3]) end
return 1
"""

# KEYS queue, leases, heartbeat, consumers; ARGV consumer, '1' to give back even if alive (leave).
# The consumer's leases back in the queue: the number moved, or -1 when it is alive (and not leaving).
_GIVE_BACK = """
if ARGV[2] ~= '1' and redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
local held = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = 1, #held, 2 do redis.call('ZADD', KEYS[1], held[i + 1], held[i]) end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('SREM', KEYS[4], ARGV[1])
return #held / 2
"""

# KEYS queue, consumers; ARGV the leases key prefix, the heartbeat key prefix.
# {queued, leased, live consumers, dead consumers}
_PENDING = """
local queued = redis.call('ZCARD', KEYS[1])
local leased, live, dead = 0, {}, {}
for _, c in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  leased = leased + redis.call('ZCARD', ARGV[1] .. c)
  if redis.call('EXISTS', ARGV[2] .. c) == 1 then table.insert(live, c) else table.insert(dead, c) end
end
return {queued, leased, live, dead}
"""


@dataclass(frozen=True)
class Pending:
    """What a queue still has to do, read at one instant."""

    queued: int
    leased: int
    live: tuple[str, ...]  # consumers whose heartbeat lives
    dead: tuple[str, ...]  # consumers whose heartbeat expired (their leases not yet given back)

    @property
    def empty(self) -> bool:
        return self.queued == 0 and self.leased == 0


def pending(server: Any, key: str) -> Pending:
    """Queued and leased requests of queue ``key``, and its live and dead consumers, in one script."""
    queued, leased, live, dead = server.register_script(_PENDING)(
        keys=[key, consumers_key(key)], args=[leases_key(key, ""), heartbeat_key(key, "")])
    return Pending(int(queued), int(leased), tuple(sorted(c.decode() for c in live)),
                   tuple(sorted(c.decode() for c in dead)))


def requeue_expired(server: Any, key: str) -> dict[str, int]:
    """Put the leases of every consumer whose heartbeat expired back in queue ``key``: consumer -> requests
    moved (consumers still alive are left alone). Safe to run from several processes at once."""
    give_back = server.register_script(_GIVE_BACK)
    moved: dict[str, int] = {}
    for raw in server.smembers(consumers_key(key)):
        consumer = raw.decode()
        count = int(give_back(keys=[key, leases_key(key, consumer), heartbeat_key(key, consumer), consumers_key(key)],
                              args=[consumer, "0"]))
        if count >= 0:
            moved[consumer] = count
    return moved


class LeasedPriorityQueue(PriorityQueue):
    """scrapy-redis's ``PriorityQueue`` with leases (see the module docstring)."""

    def __init__(self, server: Any, spider: Any, key: str, serializer: Any = None, consumer: str | None = None) -> None:
        super().__init__(server, spider, key, serializer)
        settings = getattr(spider, "settings", None)
        self.consumer = (consumer or (settings.get("SCHEDULER_QUEUE_CONSUMER") if settings is not None else None)
                         or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}")
        self.leases_key = leases_key(self.key, self.consumer)
        self.heartbeat_key = heartbeat_key(self.key, self.consumer)
        self.consumers_key = consumers_key(self.key)
        #: lease -> the serialized request as it sits in the lease set
        self.held: dict[str, bytes] = {}
        self._pop = server.register_script(_POP)
        self._push = server.register_script(_PUSH)
        self._give_back = server.register_script(_GIVE_BACK)

    # -- serialization: Scrapy's public request <-> dict ---------------------------------------------------
    def _encode_request(self, request: Any) -> bytes:
        return self.serializer.dumps(request.to_dict(spider=self.spider))

    def _decode_request(self, encoded_request: bytes) -> Any:
        return request_from_dict(self.serializer.loads(encoded_request), spider=self.spider)

    # -- the queue -----------------------------------------------------------------------------------------
    def push(self, request: Any, fingerprint: str | None = None, seen_key: str | None = None) -> bool:
        """Queue ``request`` (releasing the lease it carries, if this consumer holds it); with ``fingerprint``,
        only if it is not in the set ``seen_key`` yet (and add it). False when it was seen."""
        lease = request.meta.pop(LEASE_META, None)  # a lease is this consumer's, not the request's
        replaced = self.held.get(lease) if lease else None
        try:
            data = self._encode_request(request)
            pushed = self._push(keys=[self.key, self.leases_key, seen_key or self.key],
                                args=[-request.priority, data, replaced or b"", fingerprint or ""])
        except BaseException:
            if lease:
                request.meta[LEASE_META] = lease
            raise
        if not pushed:
            if lease:
                request.meta[LEASE_META] = lease  # still held: the caller acks it when it is done
            return False
        if replaced is not None:
            del self.held[lease]
        return True

    def pop(self, timeout: int = 0) -> Any:
        """The best request, leased to this consumer (``timeout`` is not supported, as in ``PriorityQueue``)."""
        data = self._pop(keys=[self.key, self.leases_key, self.consumers_key], args=[self.consumer])
        if data is None:
            return None
        try:
            request = self._decode_request(data)
        except Exception:  # noqa: BLE001 - a request no consumer can rebuild must not come back forever
            logger.exception("dropped a queued request that cannot be decoded (%d bytes)", len(data))
            stats = getattr(getattr(self.spider, "crawler", None), "stats", None)
            if stats is not None:
                stats.inc_value("scheduler/redis/undecodable")
            self.server.zrem(self.leases_key, data)
            return None
        lease = hashlib.sha1(data).hexdigest()[:20]
        self.held[lease] = data
        request.meta[LEASE_META] = lease
        return request

    def ack(self, *leases: str, pipeline: Any = None) -> int:
        """These requests are done: their leases go. The number this consumer held. With ``pipeline`` (a
        redis-py transaction), the ack is queued on it, to commit with the consumer's own writes of the
        results in one ``MULTI``/``EXEC``: no kill can fall between "written" and "acked"."""
        data = [d for d in (self.held.pop(lease, None) for lease in leases) if d is not None]
        if data:
            (self.server if pipeline is None else pipeline).zrem(self.leases_key, *data)
        return len(data)

    def clear(self) -> None:
        """Delete the queue and this consumer's leases."""
        self.held.clear()
        self.server.delete(self.key, self.leases_key)

    # -- the consumer's life -------------------------------------------------------------------------------
    def beat(self, ttl_s: float) -> None:
        """This consumer lives for ``ttl_s`` more (call it more often than that)."""
        value = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "at": time.time()})
        pipe = self.server.pipeline(transaction=True)
        pipe.set(self.heartbeat_key, value, px=max(1, int(ttl_s * 1000)))
        pipe.sadd(self.consumers_key, self.consumer)
        pipe.execute()

    def leave(self) -> int:
        """This consumer stops: what it holds goes back to the queue (the number of requests)."""
        self.held.clear()
        return int(self._give_back(keys=[self.key, self.leases_key, self.heartbeat_key, self.consumers_key],
                                   args=[self.consumer, "1"]))
