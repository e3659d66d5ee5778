"""Per-host politeness Scrapy does not give: Crawl-delay as a floor, Retry-After, per-host back-off.

- **Crawl-delay** (from :mod:`boilerstrip.downloadermiddlewares.robots`' ``robots_ready`` signal): the
  host's download slot gets ``delay = max(configured, Crawl-delay)`` with no jitter, and the floor is
  re-applied after every AutoThrottle adjustment (AutoThrottle would otherwise lower it to
  ``DOWNLOAD_DELAY``). A Crawl-delay above ``max_crawl_delay_s`` (``BOILERSTRIP_POLITENESS_PARAMS``) refuses the host's
  pages with reason ``crawl_delay_too_long``.
- **429/503**: the whole host (download slot) is paused for ``Retry-After`` (seconds or HTTP date,
  capped) or, without it, an exponential back-off per host; the request is retried. After
  ``MAX_RETRIES`` the response goes on with ``dont_retry`` set, so the spider's errback records the
  give-up as ``failed:http_429`` / ``failed:http_503``.
- **Timeouts, resets, refused connections**: Scrapy's RetryMiddleware retries them at once; here
  ``process_exception`` (which runs before RetryMiddleware's) first pauses the host for an exponential
  back-off with jitter (``transport_backoff_s``), so the retry waits for it. A response resets the count.
- **A host that is down**: one that gives nothing but failures (no answer, 429/503 or another 5xx) for
  ``host_down_after_s`` (``host_down``) is given up for the rest of the crawl: its pages fail at once with
  reason ``host_down`` (:class:`~boilerstrip.outcomes.HostDown`), the requests its pause held included,
  and those already queued in its download slot are failed the same way without being sent
  (:meth:`boilerstrip.core.downloader.Downloader.fail_queued`): each waited out the whole download timeout
  before, one after another, on a site that accepts connections and never answers.

The arithmetic lives in :mod:`boilerstrip.politeness`. Registered at 560 so its ``process_response``
sees 429/503 before Scrapy's RetryMiddleware (550) and its ``process_request`` runs after robots (100).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from boilerstrip.config import component_enabled, params_from_settings
from boilerstrip.politeness import HostRobots, robots_ready
from boilerstrip.outcomes import CrawlStopping, Filtered, HostDown, crawl_stopping, failure_reason
from boilerstrip.meta import KIND_META
from boilerstrip.politeness import (
    FailureStreak,
    PolitenessParams,
    host_down,
    crawl_delay_refusal,
    host_delay_s,
    parse_retry_after,
    pause_for_s,
    transport_backoff_s,
)

__all__ = ["PolitenessMiddleware", "RETRIES_META", "PAUSED_UNTIL_STAT", "BACKOFF_UNTIL_STAT", "HOST_DOWN_STAT"]

#: stat prefixes: the wall-clock time (epoch seconds) until which each paused host (download slot) is held,
#: after a 429/503 (it asked) and after failures without an answer (a back-off)
PAUSED_UNTIL_STAT = "boilerstrip/politeness/paused_until"
BACKOFF_UNTIL_STAT = "boilerstrip/politeness/backoff_until"
#: stat prefix: each host given up for the rest of the crawl (``host_down``), with why
HOST_DOWN_STAT = "boilerstrip/politeness/host_down"
#: a request held by its host's pause looks again this often whether the host was given up or the crawl stops
_HELD_CHECK_S = 1.0
logger = logging.getLogger(__name__)

#: meta key counting how often a request was retried after 429/503
RETRIES_META = "boilerstrip_throttle_retries"
#: internal: the pause a 429/503 response of this request already caused (set once per response)
_PAUSED_META = "_boilerstrip_throttle_paused_s"
#: failure reasons (boilerstrip.outcomes.failure_reason) of the transport errors Scrapy retries at once
TRANSPORT_FAILURES = frozenset({"timeout", "connection_refused", "connection_lost", "no_response", "response_failed", "data_loss"})


class PolitenessMiddleware:
    def __init__(self, params: PolitenessParams, configured_delay_s: float = 0.0, crawler: Any = None) -> None:
        self.params = params
        self.configured_delay_s = configured_delay_s
        self.crawler = crawler
        self.crawl_delays: dict[str, float] = {}  # slot key (host) -> Crawl-delay in seconds
        self.refused: dict[str, str] = {}  # slot key -> reason its pages are refused
        self.paused_until: dict[str, float] = {}  # slot key -> time.monotonic() when the pause ends
        self.consecutive: dict[str, int] = {}  # slot key -> consecutive 429/503 answers
        self._saved_delays: dict[str, tuple[float, float]] = {}  # slot key -> (delay, jitter) before a pause
        self.transport_failures: dict[str, int] = {}  # slot key -> consecutive timeouts/resets/refusals
        self.streaks: dict[str, FailureStreak] = {}  # slot key -> failures of any kind since its last good answer
        self.down: dict[str, str] = {}  # slot key -> why it was given up (``host_down``)
        self.random = random.Random()
        self.clock = time.monotonic  # how long a host's failures have lasted (a test gives its own)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "PolitenessMiddleware":
        if not component_enabled(crawler.settings, "politeness"):
            raise NotConfigured("BOILERSTRIP_POLITENESS_ENABLED is false")
        params = params_from_settings(crawler.settings, "politeness", PolitenessParams)
        mw = cls(params, configured_delay_s=crawler.settings.getfloat("DOWNLOAD_DELAY"), crawler=crawler)
        crawler.signals.connect(mw._robots_ready, signal=robots_ready)
        # response_downloaded fires before the slot hands out its next request (process_response comes
        # later, too late to stop it). Connected after AutoThrottle's handler (extensions are built before
        # the downloader), so the Crawl-delay floor is restored after each of its adjustments.
        crawler.signals.connect(mw._response_downloaded, signal=signals.response_downloaded)
        return mw

    # -- Crawl-delay -----------------------------------------------------------------------------------
    def _downloader(self) -> Any:
        """The engine's downloader; None before the crawl starts (a component built by a test)."""
        try:
            engine = self.crawler.engine
        except (AttributeError, RuntimeError):
            return None
        return getattr(engine, "downloader", None)

    def _slot_key(self, request: Request) -> str:
        downloader = self._downloader()
        if downloader is not None:
            return downloader.get_slot_key(request)
        return request.meta.get("download_slot") or urlsplit(request.url).hostname or ""

    def _robots_ready(self, origin: str, robots: HostRobots) -> None:
        if robots.crawl_delay_s is None:
            return
        key = self._slot_key(Request(origin + "/"))
        delay = max(robots.crawl_delay_s, self.crawl_delays.get(key, 0.0))
        self.crawl_delays[key] = delay
        refusal = crawl_delay_refusal(delay, self.params)
        if refusal:
            self.refused[key] = refusal
            return
        self.crawler.stats.set_value(f"boilerstrip/politeness/crawl_delay_s/{key}", delay)
        downloader = self._downloader()
        if downloader is None:
            return
        floor = host_delay_s(self.configured_delay_s, delay)
        # new slots for this key are created with the floor (DOWNLOAD_SLOTS semantics) ...
        downloader.per_slot_settings.setdefault(key, {}).update({"delay": floor, "jitter": 0.0})
        slot = downloader.slots.get(key)
        if slot is not None:  # ... and an existing one is raised now
            slot.delay = max(slot.delay, floor)
            slot.jitter = 0.0

    def _response_downloaded(self, response: Response, request: Request) -> None:
        self._restore_after_pause(request.meta.get("download_slot"))
        self._restore_floor(request)
        if response.status in self.params.throttle_statuses and request.meta.get(KIND_META) != "robots":
            self._throttled(request, response)  # pause now, before the slot sends its next request

    def _restore_floor(self, request: Request) -> None:
        key = request.meta.get("download_slot")
        floor = self.crawl_delays.get(key) if key is not None else None
        if floor is None:
            return
        downloader = self._downloader()
        slot = downloader.slots.get(key) if downloader is not None else None
        if slot is not None and slot.delay < floor:
            slot.delay = floor

    # -- hooks -----------------------------------------------------------------------------------------
    async def process_request(self, request: Request) -> None:
        if request.meta.get(KIND_META) == "robots":
            return None
        key = self._slot_key(request)
        reason = self.refused.get(key)
        if reason:
            raise Filtered(reason, f"crawl-delay {self.crawl_delays.get(key)} s")
        # held while the host is paused, looking now and then whether it was given up or the crawl is stopping
        # (a Ctrl-C waited out the pause: up to max_retry_after_s)
        while key not in self.down and (wait := self.paused_until.get(key, 0.0) - time.monotonic()) > 0:
            if crawl_stopping(self.crawler):
                raise CrawlStopping(f"stopping: {key} paused")
            await asyncio.sleep(min(wait, _HELD_CHECK_S))
        if key in self.down:
            raise HostDown(f"{key} given up for this crawl ({self.down[key]})")
        return None

    def process_response(self, request: Request, response: Response) -> Request | Response:
        if request.meta.get(KIND_META) == "robots":
            return response
        if response.status not in self.params.throttle_statuses:
            key = request.meta.get("download_slot") or self._slot_key(request)
            self.consecutive.pop(key, None)
            self.transport_failures.pop(key, None)
            if response.status >= 500:
                self._failed(key, f"http_{response.status}")  # an answer, but a host in trouble
            else:
                self.streaks.pop(key, None)
            return response
        stats = self.crawler.stats
        pause = self._throttled(request, response)  # a no-op when response_downloaded already did it
        retries = int(request.meta.get(RETRIES_META, 0))
        key = request.meta.get("download_slot") or self._slot_key(request)
        if retries >= self.params.max_retries or request.meta.get("dont_retry") or key in self.down:
            stats.inc_value(f"boilerstrip/politeness/gave_up/http_{response.status}")
            logger.info("Giving up %s after %d retries (HTTP %d)", request.url, retries, response.status)
            request.meta["dont_retry"] = True  # Scrapy's RetryMiddleware must not retry it once more
            return response  # HttpError -> the spider's errback records failed:http_<status>
        logger.debug("HTTP %d from %s: host paused for %.1f s, retrying", response.status, request.url, pause)
        retry = request.copy()
        retry.meta.pop(_PAUSED_META, None)
        retry.meta[RETRIES_META] = retries + 1
        retry.dont_filter = True
        return retry

    def process_exception(self, request: Request, exception: BaseException) -> None:
        """A timeout, reset or refused connection: pause the host before RetryMiddleware's retry."""
        reason = failure_reason(exception)
        if request.meta.get(KIND_META) == "robots" or reason not in TRANSPORT_FAILURES or request.meta.get("dont_retry"):
            return None
        key = request.meta.get("download_slot") or self._slot_key(request)
        if self._failed(key, reason):
            return None  # given up: RetryMiddleware's retry fails in process_request, at once
        consecutive = self.transport_failures.get(key, 0) + 1
        self.transport_failures[key] = consecutive
        pause = transport_backoff_s(consecutive, self.params, self.random.random())
        self.pause_host(key, pause, BACKOFF_UNTIL_STAT)
        self.crawler.stats.inc_value(f"boilerstrip/politeness/backoff/{reason}")
        self.crawler.stats.inc_value("boilerstrip/politeness/backoff_s", pause)
        logger.debug("%s from %s: host paused %.2f s before the retry", reason, request.url, pause)
        return None

    def _throttled(self, request: Request, response: Response) -> float:
        """Count a 429/503 for the request's host and pause the host; once per response. The pause (s)."""
        if _PAUSED_META in request.meta:
            return request.meta[_PAUSED_META]
        key = request.meta.get("download_slot") or self._slot_key(request)
        if self._failed(key, f"http_{response.status}"):
            request.meta[_PAUSED_META] = 0.0
            return 0.0
        consecutive = self.consecutive.get(key, 0) + 1
        self.consecutive[key] = consecutive
        retry_after = parse_retry_after(response.headers.get(b"Retry-After"))
        pause = pause_for_s(retry_after, consecutive, self.params)
        self.pause_host(key, pause)
        request.meta[_PAUSED_META] = pause
        self.crawler.stats.inc_value(f"boilerstrip/politeness/paused/http_{response.status}")
        self.crawler.stats.inc_value("boilerstrip/politeness/paused_s", pause)
        return pause

    def _failed(self, key: str, reason: str) -> bool:
        """Count a failure of host ``key`` (``reason``: a failure reason or ``http_<status>``); give the host
        up when its streak says it is down. Whether it is given up (now or before)."""
        if key in self.down:
            return True
        now = self.clock()
        streak = self.streaks.setdefault(key, FailureStreak(since=now))
        streak.add(reason)
        if not host_down(streak, now, self.params):
            return False
        why = streak.describe(now)
        self.down[key] = why
        stats = self.crawler.stats
        stats.set_value(f"{HOST_DOWN_STAT}/{key}", why)
        for prefix in (PAUSED_UNTIL_STAT, BACKOFF_UNTIL_STAT):
            if stats.get_value(f"{prefix}/{key}") is not None:
                stats.set_value(f"{prefix}/{key}", 0.0)
        logger.warning("%s gave %s: given up for the rest of this crawl, its pages fail as host_down "
                       "(the next crawl fetches them)", key, why)
        # its pause ends now: the requests it held fail at once instead of waiting it out, and those queued in
        # its slot are not sent (the ones being downloaded keep their timeout)
        self.paused_until.pop(key, None)
        downloader = self._downloader()
        fail_queued = getattr(downloader, "fail_queued", None)  # boilerstrip's DOWNLOADER
        if fail_queued is not None:
            fail_queued(lambda request: HostDown(f"{key} given up for this crawl ({why})"), key)
        saved = self._saved_delays.pop(key, None)
        slot = downloader.slots.get(key) if downloader is not None else None
        if slot is not None and saved is not None:
            slot.delay, slot.jitter = saved
        return True

    def pause_host(self, key: str, seconds: float, stat: str = PAUSED_UNTIL_STAT) -> None:
        """Hold every queued request of download slot ``key`` for ``seconds`` (extends, never shortens).

        The way AutoThrottle adjusts slots, through the slot's public ``delay``/``jitter``/``lastseen``: the
        slot's delay becomes the pause (no jitter) counted from now, so the downloader sends its next
        request no sooner; the slot's own delay comes back with the first response after the pause ends
        (:meth:`_restore_after_pause`). Requests not yet queued wait in :meth:`process_request`.
        """
        now = time.monotonic()
        until = now + seconds
        if until <= self.paused_until.get(key, 0.0):
            return
        self.paused_until[key] = until
        # the host's pause as a gauge, in wall-clock seconds, for the progress line and a stop's warning
        # (boilerstrip.extensions.progress.paused_hosts): a host asking for minutes looks like a stalled crawl
        self.crawler.stats.set_value(f"{stat}/{key}", round(time.time() + seconds, 1))
        downloader = self._downloader()
        slot = downloader.slots.get(key) if downloader is not None else None
        if slot is None or seconds <= 0:
            return
        self._saved_delays.setdefault(key, (slot.delay, slot.jitter))
        slot.delay = max(slot.delay, seconds)
        slot.jitter = 0.0
        slot.lastseen = now

    def _restore_after_pause(self, key: str | None) -> None:
        if key is None or key not in self._saved_delays or time.monotonic() < self.paused_until.get(key, 0.0):
            return
        delay, jitter = self._saved_delays.pop(key)
        downloader = self._downloader()
        slot = downloader.slots.get(key) if downloader is not None else None
        if slot is not None:
            slot.delay, slot.jitter = delay, jitter
