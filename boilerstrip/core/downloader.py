"""Scrapy's downloader with its per-host concurrency limit held when there is no download delay.

Scrapy 2.19 (asyncio reactor) starts each download of a slot as an asyncio task and the request joins
``slot.transferring`` only when that task first runs. With a zero ``DOWNLOAD_DELAY`` the loop in
``Downloader._process_queue`` therefore sees every transfer slot free and hands out the slot's whole queue
at once: ``CONCURRENT_REQUESTS_PER_DOMAIN = 1`` let three requests reach one host in the same millisecond
(``tests/test_politeness_throttle.py`` caught it under load). Marking the request as transferring before
its task is scheduled keeps the limit; ``Downloader._download`` adds it again (a set) and removes it when
the transfer ends, exactly as before.
"""

from __future__ import annotations

from time import monotonic

from scrapy.core.downloader import Downloader as ScrapyDownloader
from scrapy.core.downloader import Slot, _schedule_coro
from scrapy.utils.asyncio import call_later

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
