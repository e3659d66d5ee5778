"""scrapy-playwright's download handler, started on first use and with every render bounded in time.

Two changes to ``ScrapyPlaywrightDownloadHandler``, both about not paying for a browser that is not used:

- Playwright (its driver process) starts when the first page is to be rendered, not when the engine
  starts: a crawl of a static site in ``auto`` mode never starts it;
- a render that takes longer than ``BOILERSTRIP_RENDER_MAX_RENDER_MS`` is abandoned: its page is closed
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
        task = asyncio.ensure_future(super()._download_request(request, spider))
        try:
            return await asyncio.wait_for(asyncio.shield(task), timeout=limit_s)
        except asyncio.TimeoutError:
            page = request.meta.get(PAGE_META)
            if page is not None:
                with suppress(Exception):
                    await page.close()  # the page's close event frees its slot in the context
            task.cancel()
            with suppress(BaseException):
                await task
            self.stats.inc_value("boilerstrip/render/timeouts")
            raise RenderTimeout(f"render of {request.url} took more than {limit_s:g} s") from None
        finally:
            request.meta.pop(PAGE_META, None)
