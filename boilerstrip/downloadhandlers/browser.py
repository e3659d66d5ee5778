"""scrapy-playwright's download handler, started on first use and with every render bounded in time.

Two changes to ``ScrapyPlaywrightDownloadHandler``, both about not paying for a browser that is not used:

- Playwright (its driver process) starts when the first page is to be rendered, not when the engine
  starts: a crawl of a static site in ``auto`` mode never starts it;
- a render whose page has been open longer than ``BOILERSTRIP_RENDER_MAX_RENDER_MS`` is abandoned (waiting
  for a free tab does not count, up to five times that budget): its page is closed
  (freeing its slot in the context) and the request fails with :class:`RenderTimeout`, which the render
  middleware turns into a static fallback with the reason on the record. scrapy-playwright applies no
  ``DOWNLOAD_TIMEOUT`` of its own, so without this a wedged page would hold its slot forever.

Non-browser requests go to Scrapy's own HTTP handler, unchanged.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress
from typing import Any

from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from boilerstrip.config import params_from_settings
from boilerstrip.downloadermiddlewares._browser_page import PAGE_META
from boilerstrip.rendering import BrowserParams

__all__ = ["BrowserDownloadHandler", "RenderTimeout"]

logger = logging.getLogger(__name__)


#: how often a running render is checked against its time limit
_POLL_S = 0.25
#: waiting for a free tab may take this many render budgets before the request gives up
_QUEUE_BUDGETS = 5


class RenderTimeout(TimeoutError):
    """A render took longer than ``BOILERSTRIP_RENDER_MAX_RENDER_MS``."""


class BrowserDownloadHandler(ScrapyPlaywrightDownloadHandler):
    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self.browser_params = params_from_settings(crawler.settings, "render", BrowserParams)
        self._start_lock: asyncio.Lock | None = None
        self._started = False

    # scrapy-playwright connects these to engine_started; starting is deferred to the first render.
    async def _maybe_launch_in_thread(self) -> None:
        return None

    def _engine_started(self) -> None:  # type: ignore[override]  # Scrapy < 2.14 path
        return None

    async def _start(self) -> None:
        if self._started:
            return
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if not self._started:
                await self._maybe_future_from_coro(self._launch())
                self._started = True

    async def _download_request(self, request: Any, spider: Any = None) -> Any:
        await self._start()
        limit_s = self.browser_params.max_render_ms / 1000
        # The clock starts when the page exists (the init callback puts it in the meta): waiting for a
        # free tab behind other renders is queueing, not a wedged page. Getting a tab at all is bounded
        # too, by a few render budgets, so nothing waits forever.
        queue_limit_s = limit_s * _QUEUE_BUDGETS
        loop = asyncio.get_running_loop()
        queued_at = loop.time()
        started_at: float | None = None
        task = asyncio.ensure_future(super()._download_request(request, spider))
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=_POLL_S)
                if done:
                    return task.result()
                now = loop.time()
                if started_at is None and request.meta.get(PAGE_META) is not None:
                    started_at = now
                if (started_at is not None and now - started_at > limit_s) or (
                    started_at is None and now - queued_at > queue_limit_s
                ):
                    break
            page = request.meta.get(PAGE_META)
            if page is not None:
                with suppress(Exception):
                    await page.close()  # the page's close event frees its slot in the context
            task.cancel()
            with suppress(BaseException):
                await task
            self.stats.inc_value("boilerstrip/render/timeouts")
            what = "render" if started_at is not None else "wait for a browser tab"
            raise RenderTimeout(f"{what} of {request.url} took more than "
                                f"{limit_s if started_at is not None else queue_limit_s:g} s")
        finally:
            request.meta.pop(PAGE_META, None)
