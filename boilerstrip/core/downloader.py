"""Scrapy's downloader with its per-host concurrency limit held when there is no download delay.

Scrapy 2.19 (asyncio reactor) starts each download of a slot as an asyncio task and the request joins
``slot.transferring`` only when that task first runs. With a zero ``DOWNLOAD_DELAY`` the loop in
``Downloader._process_queue`` therefore sees every transfer slot free and hands out the slot's whole queue
at once: ``CONCURRENT_REQUESTS_PER_DOMAIN = 1`` let three requests reach one host in the same millisecond
(``tests/test_politeness_throttle.py`` caught it under load). Marking the request as transferring before
its task is scheduled keeps the limit; ``Downloader._download`` adds it again (a set) and removes it when
the transfer ends, exactly as before.

``fail_queued`` fails the requests waiting in a slot's queue without sending them: Scrapy has no public
way to take back a request the downloader middlewares passed on. A host given up (the politeness
middleware) and a stop (Ctrl-C, SIGTERM) use it; before, each queued request of a site that never answers
was sent in turn and waited out the whole download timeout (a Ctrl-C of a ``polite`` crawl took 7 minutes).
"""

from __future__ import annotations

from collections.abc import Callable
from time import monotonic

from scrapy import Request
from scrapy.core.downloader import Downloader as ScrapyDownloader
from scrapy.core.downloader import Slot, _schedule_coro
from scrapy.utils.asyncio import call_later
from twisted.python.failure import Failure

__all__ = ["Downloader"]


class Downloader(ScrapyDownloader):
    def _process_queue(self, slot: Slot) -> None:
        if slot.latercall:
            return  # a delay or a host pause holds the queue until slot.latercall fires
        now = monotonic()
        delay = slot.download_delay()
        if delay:
            penalty = delay - now + slot.lastseen
            if penalty > 0:
                slot.latercall = call_later(penalty, self._latercall, slot)
                return
        while slot.queue and slot.free_transfer_slots() > 0:
            slot.lastseen = now
            request, queue_dfd = slot.queue.popleft()
            slot.transferring.add(request)  # the fix: counted before its task runs
            _schedule_coro(self._wait_for_download(slot, request, queue_dfd))
            if delay:  # prevent a burst when an inter-request delay is configured
                self._process_queue(slot)
                break

    def fail_queued(self, error: Callable[[Request], BaseException | None], key: str | None = None) -> int:
        """Fail the requests waiting in download slot ``key``'s queue (every slot's when None) without
        sending them: each one's download raises ``error(request)``, which the downloader middlewares'
        ``process_exception`` and the request's errback then see as for any failed download; a request for
        which ``error`` gives None stays queued. The requests being downloaded are left to end. How many
        were failed."""
        slots = list(self.slots.values()) if key is None else [self.slots[key]] if key in self.slots else []
        failed = []
        for slot in slots:
            kept = []
            while slot.queue:
                request, queue_dfd = slot.queue.popleft()
                exc = error(request)
                if exc is None:
                    kept.append((request, queue_dfd))
                else:
                    failed.append((queue_dfd, exc))
            slot.queue.extend(kept)
        for queue_dfd, exc in failed:  # (the queues settled first: an errback may enqueue a retry)
            queue_dfd.errback(Failure(exc))
        return len(failed)

    def downloads_in_progress(self) -> int:
        """How many requests are being downloaded (sent, not answered yet): what a stop still waits for."""
        return sum(len(slot.transferring) for slot in self.slots.values())
