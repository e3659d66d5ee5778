"""scrapy-playwright's download handler, started on first use, confined by address, bounded in time and memory.

Built on scrapy-playwright's public surface only: its download handler's ``download_request`` (Scrapy's
download handler interface) and a ``PLAYWRIGHT_BROWSER_PROVIDER`` (:class:`LazyBrowserProvider`).

- **Lazy start.** The provider starts Playwright (its node driver) when the first browser is wanted, not
  when the engine starts: a crawl of a static site in ``auto`` mode never starts it.
- **Addresses.** Before the first browser is launched, a loopback proxy
  (:class:`boilerstrip.downloadhandlers._browser_proxy.AddressCheckingProxy`) is started and the browser is
  launched through it: every connection the browser makes, redirect hops included, is checked on the address
  it is made to, with the HTTP path's rule (:func:`boilerstrip.rendering.scope.connect_refusal`).
- **Time.** A render whose page has been open longer than ``max_render_ms`` (``BrowserParams``) is abandoned
  (waiting for a free tab does not count, up to five times that budget): its page is closed and the request
  fails with :class:`RenderTimeout`, which the render middleware turns into a static fallback.
- **Crashes.** When the browser disconnects (crashed, killed, or closed for memory), every render under way
  fails at once with :class:`BrowserCrashed` (``render_failed:browser_crashed`` once its retry is spent), logged
  at ERROR; scrapy-playwright launches a fresh browser for the next page. Nothing waits on a dead browser.
- **Memory.** Every ``memory_check_ms`` (``BrowserParams``) the memory of the crawler's child processes
  (Playwright's driver and the browser: PSS, which counts pages shared between Chromium's processes once) is
  read from ``/proc``; above ``max_browser_memory_mib`` the browser is closed (renders under
  way fail with ``browser_memory_limit`` and are retried on a fresh one).

Non-browser requests go to Scrapy's own HTTP handler, unchanged.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler
from scrapy_playwright.provider import PlaywrightBrowserProvider

from boilerstrip.meta import PAGE_META
from boilerstrip.config import component_enabled, params_from_settings

from boilerstrip.scope import ScopeParams
from boilerstrip.downloadhandlers._browser_proxy import AddressCheckingProxy
from boilerstrip.rendering import BrowserParams
from boilerstrip.rendering.scope import PrivateAllowlist, connect_refusal

__all__ = ["BrowserDownloadHandler", "LazyBrowserProvider", "RenderTimeout", "BrowserCrashed", "StallParams"]

logger = logging.getLogger(__name__)


#: how often a running render is checked against its time limit and the browser's health
_POLL_S = 0.25
#: waiting for a free tab may take this many render budgets before the request gives up
_QUEUE_BUDGETS = 5
#: attribute of scrapy-playwright's Config through which the provider reports a launched browser
_WATCH_ATTR = "_boilerstrip_watch_browser"
_WATCHED_ATTR = "_boilerstrip_watched"


@dataclass(frozen=True)
class StallParams:
    # A render that timed out asks the browser a trivial question (CDP Browser.getVersion); a browser that
    # does not answer within this long is stalled (frozen, wedged, its process stopped) and is killed, so
    # scrapy-playwright launches a fresh one and the renders it held are retried there. 5 s: a healthy
    # Chromium answers in milliseconds even with 8 busy tabs on the loaded 2-core machine.
    probe_timeout_s: float = 5.0


_STALL = StallParams()
#: what a browser's processes are called (Chromium, Chrome, the headless shell), among the crawl's children
_BROWSER_NAMES = ("chrom", "headless_shell")


class RenderTimeout(TimeoutError):
    """A render took longer than ``max_render_ms`` (``BOILERSTRIP_RENDER_PARAMS``)."""

    render_failure = "render_timeout"


class BrowserCrashed(RuntimeError):
    """The browser disconnected while this page was being rendered (or waited for a tab)."""

    def __init__(self, message: str, reason: str = "browser_crashed") -> None:
        super().__init__(message)
        self.render_failure = reason


class LazyBrowserProvider(PlaywrightBrowserProvider):
    """scrapy-playwright's default provider, started when the first browser is wanted instead of at
    engine start (``PLAYWRIGHT_BROWSER_PROVIDER``: a public scrapy-playwright interface)."""

    async def start(self) -> None:
        return None  # deferred to the first launch

    async def _ensure_started(self) -> None:
        if self.browser_type is None:
            await super().start()

    async def launch_browser(self) -> Any:
        await self._ensure_started()
        browser = await super().launch_browser()
        # The handler watches every browser it gets (crash detection); it leaves its callback on the
        # Config it shares with this provider, the one object scrapy-playwright hands over.
        watch = getattr(self.config, _WATCH_ATTR, None)
        if watch is not None:
            watch(browser)
        return browser

    async def launch_persistent_context(self, context_kwargs: dict) -> Any:
        await self._ensure_started()
        return await super().launch_persistent_context(context_kwargs)


def _descendants(pid: int) -> list[int]:
    tree: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode("latin-1")
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in tree.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def child_processes_memory_kib(pid: int | None = None) -> int:
    """PSS (RSS where PSS is not readable) summed over the descendants of ``pid`` (default: this process)."""
    total = 0
    for child in _descendants(os.getpid() if pid is None else pid):
        rss = pss = None
        try:
            with open(f"/proc/{child}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Pss:"):
                        pss = int(line.split()[1])
                    elif line.startswith("Rss:"):
                        rss = int(line.split()[1])
        except (OSError, ValueError):
            continue
        total += pss if pss is not None else (rss or 0)
    return total


def _kill_browser_processes() -> int:
    """SIGKILL the browser processes among this process's descendants (not Playwright's driver); returns
    how many. A stopped or wedged browser answers nothing, not even a request to close."""
    killed = 0
    for pid in _descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                program = fh.read().split(b"\0", 1)[0].decode("latin-1").rsplit("/", 1)[-1].lower()
        except OSError:
            continue
        if any(name in program for name in _BROWSER_NAMES):
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    return killed


def _drop_result(task: asyncio.Future) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: no "exception was never retrieved" warning


def _connected(page: Any) -> bool:
    if page is None:
        return True
    try:
        browser = page.context.browser
        return browser is None or browser.is_connected()
    except Exception:  # noqa: BLE001 - a half-torn-down page object
        return False


class BrowserDownloadHandler(ScrapyPlaywrightDownloadHandler):
    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        settings = crawler.settings
        self.browser_params = params_from_settings(settings, "render", BrowserParams)
        self._crawler_ref = crawler
        self._check_addresses = component_enabled(settings, "scope")
        self._allow_private = params_from_settings(settings, "scope", ScopeParams).allow_private
        self.proxy: AddressCheckingProxy | None = None
        self._proxy_lock = asyncio.Lock()
        self._browsers: dict[int, Any] = {}
        self._crash_epoch = 0
        self._close_reason: str | None = None  # why we closed the browser ourselves (memory), else a crash
        self._closing = False
        self._in_flight = 0
        self._watchdog: asyncio.Task | None = None
        self._last_reason = "browser_crashed"
        self._stall_lock = asyncio.Lock()
        #: the crash epoch when a stalled browser was killed, until its disconnect is seen (None: no kill
        #: under way): a render asked for meanwhile waits (``_after_kill``)
        self._killed_at: int | None = None
        setattr(self.config, _WATCH_ATTR, self._watch)

    # -- the browser's way out ---------------------------------------------------------------------------
    async def _ensure_proxy(self) -> None:
        if self.proxy is not None or not self._check_addresses:
            return
        async with self._proxy_lock:
            if self.proxy is not None:
                return
            launch = dict(self.config.launch_options or {})
            if launch.get("proxy") or self.config.cdp_url or self.config.connect_url:
                logger.warning("the browser uses a proxy or a remote browser of your own: boilerstrip cannot check "
                               "the addresses it connects to (private addresses may be reached)")
                self._check_addresses = False
                return
            spider = getattr(self._crawler_ref, "spider", None)
            starts = list(getattr(spider, "start_urls", None) or ()) + list(getattr(spider, "allowed_origins", None) or ())
            allowed = PrivateAllowlist(entries=self._allow_private, start_urls=starts)
            proxy = AddressCheckingProxy(
                lambda host, port, addresses: connect_refusal(host, port, addresses, allowed),
                connect_timeout_s=self.browser_params.navigation_timeout_ms / 1000,
                on_refused=self._refused,
            )
            await proxy.start()
            # Playwright proxies loopback too when a proxy is given (it adds Chromium's "<-loopback>" rule).
            launch["proxy"] = {"server": proxy.url}
            self.config.launch_options = launch  # the provider reads this Config (a public scrapy-playwright class)
            self.proxy = proxy

    def _refused(self, reason: str, where: str) -> None:
        self.stats.inc_value(f"boilerstrip/render/connections_refused/{reason}")
        logger.debug("browser: refused a connection to %s (%s)", where, reason)

    # -- the browser's health ------------------------------------------------------------------------------
    def _watch(self, browser: Any) -> None:
        if browser is None or getattr(browser, _WATCHED_ATTR, False):
            return  # each browser is watched once (a dead one is not watched again through its old pages)
        setattr(browser, _WATCHED_ATTR, True)
        self._browsers[id(browser)] = browser
        browser.on("disconnected", self._disconnected)
        if not browser.is_connected():
            self._disconnected(browser)

    def _watch_page(self, page: Any) -> None:
        with suppress(Exception):
            self._watch(page.context.browser)

    def _disconnected(self, browser: Any) -> None:
        if self._browsers.pop(id(browser), None) is None:
            return
        if self._closing:
            self._crash_epoch += 1
            return
        reason, self._close_reason = self._close_reason, None
        self._last_reason = reason or "browser_crashed"
        self._crash_epoch += 1
        self.stats.inc_value("boilerstrip/render/browser_crashes" if reason is None else f"boilerstrip/render/browser_closed/{reason}")
        if reason is None:
            logger.error("the browser disconnected (crashed or killed): %d render(s) under way fail with "
                         "render_failed:browser_crashed (each retried once on a fresh browser)", self._in_flight)
        else:
            logger.warning("the browser was closed (%s): %d render(s) under way are retried on a fresh browser",
                           reason, self._in_flight)

    async def _watch_memory(self) -> None:
        limit_kib = self.browser_params.max_browser_memory_mib * 1024
        every_s = self.browser_params.memory_check_ms / 1000
        loop = asyncio.get_running_loop()
        while not self._closing:
            await asyncio.sleep(every_s)
            if not self._browsers:
                continue
            used = await loop.run_in_executor(None, child_processes_memory_kib)
            self.stats.max_value("boilerstrip/render/browser_memory_mib/max", used // 1024)
            if used <= limit_kib or self._closing:
                continue
            logger.warning("the browser uses %d MiB, more than max_browser_memory_mib=%d "
                           "(BOILERSTRIP_RENDER_PARAMS): "
                           "closing it (a fresh one is started for the next page)", used // 1024, limit_kib // 1024)
            for browser in list(self._browsers.values()):
                self._close_reason = "browser_memory_limit"
                with suppress(Exception):
                    await browser.close()

    async def _responsive(self, browser: Any) -> bool:
        """Whether ``browser`` answers a trivial CDP call within the stall probe's time (a browser other
        than Chromium, which speaks no CDP, is taken as answering)."""
        with suppress(Exception):
            if browser.browser_type.name != "chromium":
                return True
        try:
            session = await asyncio.wait_for(browser.new_browser_cdp_session(), _STALL.probe_timeout_s)
            await asyncio.wait_for(session.send("Browser.getVersion"), _STALL.probe_timeout_s)
        except Exception:  # noqa: BLE001 - a timeout, or a browser gone mid-question: not responsive
            return False
        with suppress(Exception):
            await asyncio.wait_for(session.detach(), _STALL.probe_timeout_s)
        return True

    async def _restart_if_stalled(self) -> bool:
        """After a render timed out: is a browser stalled? Then kill it (its renders fail with
        ``browser_stalled`` and are retried on the fresh one scrapy-playwright launches next)."""
        async with self._stall_lock:
            epoch = self._crash_epoch
            stalled = [b for b in list(self._browsers.values()) if not await self._responsive(b)]
            if not stalled or self._crash_epoch != epoch:
                return bool(stalled)  # (another render's check restarted it meanwhile)
            self.stats.inc_value("boilerstrip/render/browser_stalled")
            logger.error("the browser did not answer within %g s after a render timed out: it is stalled; "
                         "killing it (a fresh one is started, the %d render(s) under way are retried there)",
                         _STALL.probe_timeout_s, self._in_flight)
            self._close_reason = "browser_stalled"
            self._killed_at = self._crash_epoch
            killed = _kill_browser_processes()
            if not killed:  # not a child of ours (a remote browser): ask it to close
                for browser in stalled:
                    with suppress(Exception):
                        await asyncio.wait_for(browser.close(), _STALL.probe_timeout_s)
            return True

    # -- the download ----------------------------------------------------------------------------------------
    async def download_request(self, request: Any) -> Any:  # Scrapy 2.19's signature
        if not request.meta.get("playwright"):
            return await super().download_request(request)
        await self._ensure_proxy()
        await self._after_kill()
        if self._watchdog is None and self.browser_params.max_browser_memory_mib:
            self._watchdog = asyncio.ensure_future(self._watch_memory())
        self._in_flight += 1
        try:
            return await self._bounded(request)
        finally:
            self._in_flight -= 1
            request.meta.pop(PAGE_META, None)

    async def _after_kill(self) -> None:
        """A render asked for while a stalled browser is being killed (its renders have failed, a page of
        theirs may be sent again at once) waits until that browser's disconnect is seen, so that it starts
        on the fresh browser, not on the killed one, whose new tab would hang until the disconnect fails it
        too. At most two stall probes' time: a disconnect that never comes does not hold renders."""
        killed_at = self._killed_at
        if killed_at is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 2 * _STALL.probe_timeout_s
        while self._crash_epoch == killed_at and loop.time() < deadline:
            await asyncio.sleep(_POLL_S)
        if self._killed_at == killed_at:
            self._killed_at = None

    async def _bounded(self, request: Any) -> Any:
        limit_s = self.browser_params.max_render_ms / 1000
        # The clock starts when the page exists (the init callback puts it in the meta): waiting for a
        # free tab behind other renders is queueing, not a wedged page. Getting a tab at all is bounded
        # too, by a few render budgets, so nothing waits forever.
        queue_limit_s = limit_s * _QUEUE_BUDGETS
        loop = asyncio.get_running_loop()
        queued_at = loop.time()
        started_at: float | None = None
        epoch = self._crash_epoch
        task = asyncio.ensure_future(ScrapyPlaywrightDownloadHandler.download_request(self, request))
        failure: BaseException
        while True:
            done, _ = await asyncio.wait({task}, timeout=_POLL_S)
            page = request.meta.get(PAGE_META)
            if page is not None:
                self._watch_page(page)
            if self._crash_epoch != epoch:  # the browser under this render is gone (its result is worthless)
                failure = BrowserCrashed(f"the browser disconnected while rendering {request.url}", self._last_reason)
                break
            if done:
                if task.cancelled() or task.exception() is None or (_connected(page) and self._close_reason is None):
                    return task.result()
                # failed because its browser went away (the disconnect event may not have arrived yet)
                reason = self._last_reason if self._crash_epoch != epoch else (self._close_reason or "browser_crashed")
                failure = BrowserCrashed(f"the browser disconnected while rendering {request.url}", reason)
                break
            now = loop.time()
            if started_at is None and page is not None:
                started_at = now
            if (started_at is not None and now - started_at > limit_s) or (
                started_at is None and now - queued_at > queue_limit_s
            ):
                self.stats.inc_value("boilerstrip/render/timeouts")
                what = "render" if started_at is not None else "wait for a browser tab"
                failure = RenderTimeout(f"{what} of {request.url} took more than "
                                        f"{limit_s if started_at is not None else queue_limit_s:g} s")
                if await self._restart_if_stalled():  # not this page's fault: retried on the fresh browser
                    failure = BrowserCrashed(f"the browser stalled while rendering {request.url}", "browser_stalled")
                break
        page = request.meta.get(PAGE_META)
        if page is not None:
            with suppress(Exception):  # (bounded: a stalled browser never answers)
                await asyncio.wait_for(page.close(), _STALL.probe_timeout_s)  # frees its slot in the context
        if isinstance(failure, BrowserCrashed):
            # Not cancelled: after a disconnect scrapy-playwright may be launching the next browser inside
            # this task, and a launch cancelled half-way leaves Playwright unable to launch another. The
            # task finishes on its own (its result is dropped); this request fails now.
            task.add_done_callback(_drop_result)
        else:
            task.cancel()
            with suppress(BaseException):
                await task
        raise failure

    async def close(self) -> None:  # Scrapy >= 2.14 signature
        self._closing = True
        if self._watchdog is not None:
            self._watchdog.cancel()
            with suppress(BaseException):
                await self._watchdog
        try:
            await super().close()
        finally:
            if self.proxy is not None:
                await self.proxy.close()
