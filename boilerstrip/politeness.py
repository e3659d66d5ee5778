"""The pure core of politeness: robots.txt fetch verdicts (RFC 9309), Crawl-delay, Retry-After, backoff.

No Scrapy or Twisted import: the two downloader middlewares (``downloadermiddlewares/robots.py`` and
``downloadermiddlewares/politeness.py``) are thin adapters around these functions and params.

Settings map onto the params with :func:`boilerstrip.config.params_from_settings`:
``BOILERSTRIP_ROBOTS_PARAMS`` -> :class:`RobotsParams`, ``BOILERSTRIP_POLITENESS_PARAMS`` ->
:class:`PolitenessParams` (each profile sets both; a hook given elsewhere changes only the fields it names).
"""

from __future__ import annotations

import asyncio
import email.utils
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone

from protego import Protego

from boilerstrip.optout import RobotsAiRules

__all__ = [
    "HostRobots",
    "robots_ready",
    "RobotsParams",
    "PolitenessParams",
    "RobotsVerdict",
    "robots_verdict_for_status",
    "parse_retry_after",
    "pause_for_s",
    "transport_backoff_s",
    "FailureStreak",
    "host_down",
    "host_delay_s",
    "crawl_delay_refusal",
]


@dataclass(frozen=True)
class RobotsParams:
    # RFC 9309 §2.5: crawlers MUST parse at least 500 KiB; we parse exactly 512 KiB and ignore the rest.
    max_bytes: int = 512 * 1024
    # RFC 9309 §2.3.1.2: follow at least five consecutive redirects; more means "unavailable" (allow).
    max_redirects: int = 5
    # A robots.txt that takes longer than this counts as unreachable (-> disallow, re-checked later).
    fetch_timeout_s: float = 30.0
    # After a 5xx/429/timeout/connection failure the host is disallowed; its page requests wait and the
    # robots.txt is fetched again after this many seconds (RFC 9309 §2.3.1.4 "unreachable").
    unreachable_retry_s: float = 30.0
    # ...at most this many fetches in total; after the last failure the host's pages are filtered with
    # reason ``robots_unreachable``. 3 fetches over ~1 min is patient without stalling a crawl.
    unreachable_max_fetches: int = 3

    def __post_init__(self) -> None:
        if self.max_bytes < 1024:
            raise ValueError("max_bytes must be >= 1024")
        if self.max_redirects < 0:
            raise ValueError("max_redirects must be >= 0")
        if self.fetch_timeout_s <= 0 or self.unreachable_retry_s < 0:
            raise ValueError("fetch_timeout_s must be > 0 and unreachable_retry_s >= 0")
        if self.unreachable_max_fetches < 1:
            raise ValueError("unreachable_max_fetches must be >= 1")


@dataclass(frozen=True)
class PolitenessParams:
    # A site asking for more than 30 s between requests would take > 8 h per 1000 pages: we skip it with a
    # recorded reason (crawl_delay_too_long) instead of pretending to crawl it.
    max_crawl_delay_s: float = 30.0
    # Retry-After is obeyed up to this many seconds; longer values are capped (a site cannot park the
    # crawl for a day). 5 minutes matches common rate-limit windows.
    max_retry_after_s: float = 300.0
    # Without Retry-After, a 429/503 pauses the host base * 2**(n-1) seconds for the n-th consecutive one,
    retry_backoff_base_s: float = 2.0
    # ...capped at this (the same order as AutoThrottle's max delay, times a few).
    max_backoff_s: float = 120.0
    # How many times one request is retried after 429/503 before the give-up is recorded (http_429/503).
    max_retries: int = 4
    # HTTP statuses that mean "slow down" and pause the whole host.
    throttle_statuses: tuple[int, ...] = (429, 503)
    # A timeout, reset or refused connection pauses the host too before Scrapy's retry (which has no delay
    # of its own): the same base * 2**(n-1) back-off, capped at max_backoff_s, of which this share is random
    # ("equal jitter": retries of many pages that failed together do not come back together). 0 = exact.
    backoff_jitter_share: float = 0.5
    # A host that gives nothing but failures (no answer: refused, reset, timed out; or 429/503 and other
    # 5xx answers) for at least this many seconds, and at least ``host_down_min_failures`` times, is given
    # up for the rest of the crawl: its pages fail at once with reason ``host_down`` (the next crawl fetches
    # them). Before, a site that went down mid-crawl held the crawl for days: each of
    # its ~1,000 pages waited out the capped back-off three times, the line said "0.1 pages/s" (2026-12-07,
    # a loopback server stopped after 60 of 1,147 pages). 5 minutes outlasts a restart or a deploy; under
    # the back-off above (2, 4, 8... s) the ninth failure in a row reaches it. 0 = never give up.
    host_down_after_s: float = 300.0
    # ...and at least this many failures in a row (the requests in flight when a site dies fail together:
    # one moment's failures are not a down host)
    host_down_min_failures: int = 5

    def __post_init__(self) -> None:
        if self.max_crawl_delay_s < 0 or self.max_retry_after_s < 0 or self.max_backoff_s < 0:
            raise ValueError("caps must be >= 0")
        if self.host_down_after_s < 0:
            raise ValueError("host_down_after_s must be >= 0 (0: never give up on a host)")
        if self.host_down_min_failures < 1:
            raise ValueError("host_down_min_failures must be >= 1")
        if self.retry_backoff_base_s < 0:
            raise ValueError("retry_backoff_base_s must be >= 0")
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if not 0.0 <= self.backoff_jitter_share <= 1.0:
            raise ValueError("backoff_jitter_share must be between 0 and 1")


@dataclass(frozen=True)
class RobotsVerdict:
    """What a robots.txt fetch result means for a host."""

    #: "parse" (2xx: obey the rules), "allow_all" (4xx, too many redirects), "disallow_all" (unreachable)
    action: str
    #: short machine-readable reason: robots_ok, robots_4xx_allow, robots_unreachable, ...
    reason: str
    #: follow this redirect (3xx with a Location)
    redirect: bool = False
    detail: str = field(default="", compare=False)


def robots_verdict_for_status(status: int, redirects_so_far: int, params: RobotsParams) -> RobotsVerdict:
    """RFC 9309 §2.3.1: what a robots.txt response status means."""
    if 200 <= status < 300:
        return RobotsVerdict("parse", "robots_ok")
    if 300 <= status < 400:
        if redirects_so_far >= params.max_redirects:
            # §2.3.1.2: after five redirects a crawler MAY treat robots.txt as unavailable (4xx -> allow).
            return RobotsVerdict("allow_all", "robots_too_many_redirects")
        return RobotsVerdict("follow", "robots_redirect", redirect=True)
    if status == 429 or status >= 500:
        # §2.3.1.4: unreachable -> assume complete disallow.
        return RobotsVerdict("disallow_all", "robots_unreachable", detail=f"http_{status}")
    if 400 <= status < 500:
        # §2.3.1.3: unavailable -> the crawler MAY access any resource.
        return RobotsVerdict("allow_all", "robots_4xx_allow", detail=f"http_{status}")
    # 1xx or nonsense: treat as unreachable, the safe side.
    return RobotsVerdict("disallow_all", "robots_unreachable", detail=f"http_{status}")


def parse_retry_after(value: str | bytes | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date); None when absent/invalid."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("latin-1", errors="replace")
    text = value.strip()
    if not text:
        return None
    if text.isdigit():
        return float(int(text))
    try:
        seconds = float(text)
    except ValueError:
        seconds = None
    if seconds is not None:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    now = now or datetime.now(timezone.utc)
    return max(0.0, (when - now).total_seconds())


def pause_for_s(retry_after_s: float | None, consecutive: int, params: PolitenessParams) -> float:
    """How long to pause a host after its ``consecutive``-th 429/503 in a row (1 = first)."""
    if retry_after_s is not None:
        return min(retry_after_s, params.max_retry_after_s)
    exponent = max(0, consecutive - 1)
    backoff = params.retry_backoff_base_s * (2 ** min(exponent, 30))
    return min(backoff, params.max_backoff_s)


def transport_backoff_s(consecutive: int, params: PolitenessParams, random_fraction: float) -> float:
    """How long to pause a host after its ``consecutive``-th transport failure in a row (timeout, reset,
    refused; 1 = first). ``random_fraction`` in [0, 1) supplies the jitter."""
    exponent = max(0, consecutive - 1)
    backoff = min(params.retry_backoff_base_s * (2 ** min(exponent, 30)), params.max_backoff_s)
    share = params.backoff_jitter_share
    return backoff * (1.0 - share) + backoff * share * random_fraction


@dataclass
class FailureStreak:
    """A host's failures in a row since its last good answer: when the first was (``time.monotonic()``),
    how many, and the last one's reason (``connection_refused``, ``timeout``, ``http_503``...)."""

    since: float
    count: int = 0
    last: str = ""

    def add(self, reason: str) -> None:
        self.count += 1
        self.last = reason

    def describe(self, now: float) -> str:
        return f"no good answer for {now - self.since:.0f} s: {self.count} failures in a row, the last {self.last}"


def host_down(streak: FailureStreak, now: float, params: PolitenessParams) -> bool:
    """Is a host with this ``streak`` of failures down for the rest of the crawl (``host_down_after_s``)?"""
    return (params.host_down_after_s > 0 and streak.count >= params.host_down_min_failures
            and now - streak.since >= params.host_down_after_s)


def host_delay_s(configured_delay_s: float, crawl_delay_s: float | None) -> float:
    """The delay between two requests to a host: the larger of the configured delay and Crawl-delay."""
    if crawl_delay_s is None or not math.isfinite(crawl_delay_s) or crawl_delay_s < 0:
        return configured_delay_s
    return max(configured_delay_s, crawl_delay_s)


def crawl_delay_refusal(crawl_delay_s: float | None, params: PolitenessParams) -> str | None:
    """``"crawl_delay_too_long"`` when the host's Crawl-delay exceeds the cap, else None."""
    if crawl_delay_s is not None and crawl_delay_s > params.max_crawl_delay_s:
        return "crawl_delay_too_long"
    return None


#: signal: robots_ready(origin: str, robots: HostRobots) -- sent every time an origin's robots.txt resolves
robots_ready = object()


@dataclass
class HostRobots:
    """What we know about one origin's robots.txt."""

    origin: str
    #: "pending", "parse" (rules apply), "allow_all" or "disallow_all"
    action: str = "pending"
    reason: str = ""
    detail: str = ""
    parser: Protego | None = None
    crawl_delay_s: float | None = None
    sitemaps: tuple[str, ...] = ()
    ai_rules: RobotsAiRules | None = None  # Content-Signal / Content-Usage lines for our token (optout.py)
    fetches: int = 0
    next_fetch_at: float = 0.0  # time.monotonic() when an unreachable robots.txt may be fetched again
    task: asyncio.Future | None = field(default=None, repr=False)

    def allows(self, url: str, token: str) -> bool:
        if self.action == "allow_all":
            return True
        if self.action == "parse" and self.parser is not None:
            return bool(self.parser.can_fetch(url, token))
        return False
