"""The Redis client of a distributed crawl: it rides out a Redis outage up to a limit (pure: no Scrapy).

Two kinds of outage, two answers:

- **Redis does not answer** (paused, swapping, a long ``SAVE``): a command waits for its answer up to
  ``OutageParams.limit_s`` (the socket timeout) and is *not* sent again: a command sent to a paused
  server runs when the server resumes, and a second copy would run twice (a request popped twice, one
  copy held by nobody).
- **Redis refuses or drops the connection** (restarting, unreachable): the client connects again with
  exponential back-off (``backoff_base_s`` doubling to ``backoff_cap_s``) until ``limit_s`` has passed
  since the first failure.

Past the limit the command raises (``redis.ConnectionError`` / ``redis.TimeoutError``): the coordinator
then stops every worker, writes a manifest saying so and exits 1 (:mod:`boilerstrip.distributed.coordinator`);
a worker closes its spider (``redis_unavailable``). The limit is documented in docs/distributed.md; a crawl sets
its own with ``redis_outage_limit_s`` of ``BOILERSTRIP_DISTRIBUTED_PARAMS`` (:func:`crawl_client`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from boilerstrip.distributed.params import DistributedParams

__all__ = ["OutageParams", "redis_client", "redis_options", "crawl_client", "crawl_outage", "OUTAGE"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class OutageParams:
    # How long a Redis outage is ridden out before the crawl stops: 60 s covers a restart (a few seconds),
    # a paused or swapping server and a failover, and is short enough that a crawl whose Redis is gone
    # for good says so within a minute. (The issue 30 audit paused Redis for 10 s.)
    limit_s: float = 60.0
    # The first pause before connecting again, doubled at each failure up to the cap.
    backoff_base_s: float = 0.1
    backoff_cap_s: float = 2.0
    # How long connecting may take (a refused connection fails at once; a black-holed host waits this).
    connect_timeout_s: float = 5.0

    def __post_init__(self) -> None:
        if self.limit_s <= 0 or self.backoff_base_s <= 0 or self.backoff_cap_s < self.backoff_base_s:
            raise ValueError("limit_s and backoff_base_s must be > 0, backoff_cap_s >= backoff_base_s")


#: the limits every distributed client uses
OUTAGE = OutageParams()


class _DeadlineRetry(Retry):
    """redis-py's ``Retry`` with a time limit instead of a count: connection errors only (see above)."""

    def __init__(self, params: OutageParams) -> None:
        super().__init__(ExponentialBackoff(cap=params.backoff_cap_s, base=params.backoff_base_s), retries=-1,
                         supported_errors=(redis.ConnectionError,))
        self.limit_s = params.limit_s

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _DeadlineRetry) and other.limit_s == self.limit_s

    __hash__ = Retry.__hash__

    def call_with_retry(self, do: Callable[[], _T], fail: Callable[..., Any], is_retryable: Any = None,
                        with_failure_count: bool = False) -> _T:
        self._backoff.reset()
        failures = 0
        deadline: float | None = None
        while True:
            try:
                return do()
            except self._supported_errors as error:
                if is_retryable and not is_retryable(error):
                    raise
                failures += 1
                if with_failure_count:
                    fail(error, failures)
                else:
                    fail(error)
                now = time.monotonic()
                deadline = deadline if deadline is not None else now + self.limit_s
                if now >= deadline:
                    raise error
                time.sleep(min(self._backoff.compute(failures), max(0.0, deadline - now)))


def redis_options(params: OutageParams = OUTAGE) -> dict[str, Any]:
    """The client options (``redis.Redis.from_url`` keyword arguments; scrapy-redis's ``REDIS_PARAMS``)."""
    return {"socket_timeout": params.limit_s, "socket_connect_timeout": params.connect_timeout_s,
            "retry_on_timeout": False, "retry": _DeadlineRetry(params), "health_check_interval": 0}


def redis_client(url: str, params: OutageParams = OUTAGE) -> redis.Redis:
    """A client of ``url`` that rides out an outage of up to ``params.limit_s``."""
    return redis.Redis.from_url(url, **redis_options(params))


def crawl_outage(params: DistributedParams) -> OutageParams:
    """The outage limits of a crawl whose settings are ``params`` (its ``redis_outage_limit_s``)."""
    return OutageParams(limit_s=params.redis_outage_limit_s)


def crawl_client(params: DistributedParams) -> redis.Redis:
    """A client of the crawl's Redis (``params.redis_url``) with the crawl's outage limit."""
    return redis_client(params.redis_url, crawl_outage(params))
