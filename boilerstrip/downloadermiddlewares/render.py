"""Render a page through Playwright only when its static HTML needs it (issue 5).

Static first: a page's 2xx HTML response is judged by the pure :func:`boilerstrip.rendering.needs_rendering`.
When the verdict says so, the request is re-issued once with ``meta["playwright"] = True`` (scrapy-playwright
renders it) and the reason in ``meta["boilerstrip_render_reason"]``; the re-issued request goes through
every downloader middleware again (scope, robots, politeness). A failed static fetch (timeout, 5xx) is
never a reason to render. Per-host learning sends later pages of a mostly-JS host straight to the browser,
with a periodic static re-check. ``BOILERSTRIP_RENDER_MODE`` auto|never|always, per-URL pattern overrides,
and the ``boilerstrip_render`` / ``boilerstrip_dont_render`` meta keys (meta beats settings).

The browser itself is configured by :class:`boilerstrip.rendering_addon.RenderAddon`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from dataclasses import dataclass
from collections.abc import Coroutine
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Headers, HtmlResponse, Response, TextResponse
from scrapy.responsetypes import responsetypes
from scrapy_playwright.page import PageMethod

from boilerstrip.config import params_from_settings
from boilerstrip.downloadermiddlewares._browser_page import INIT_CALLBACK, STATIC_LOOK_META, context_name, settle_page
from boilerstrip.reading.render_job import judge_and_read, judge_static
from boilerstrip.reading.page import PagePlan, page_plan, stamped
from boilerstrip.rendering import BrowserParams, HostLearnParams, HostRenderLearner, RenderParams, RenderVerdict
from boilerstrip.rendering.scope import origin_key
from boilerstrip.scope import in_scope
from boilerstrip.reading.links import remember_links
from boilerstrip.urls import UrlParams
from boilerstrip.workers.pool import WorkerDied, WorkerPool
from boilerstrip.meta import (
    DONT_RENDER_META,
    KIND_META,
    RENDER_FAILED_META,
    RENDER_PLACEHOLDER_META,
    RENDER_REASON_META,
    RENDER_SETTLE_META,
    RENDER_STATIC_LOOK_META,
    RENDER_TRUNCATED_META,
    READING_META,
)

__all__ = ["RenderWhenNeededMiddleware"]

logger = logging.getLogger(__name__)

_STATS = "boilerstrip/render"
_HTML_TYPES = (b"text/html", b"application/xhtml+xml")
#: Substrings of Playwright errors that mean the browser could not be started at all.
_BROWSER_MISSING = ("executable doesn't exist", "failed to launch", "no such file", "looks like playwright")
#: Substrings of Playwright errors that mean the browser (or its page) died under the request.
_BROWSER_DIED = ("has been closed", "target closed", "crashed", "connection closed", "browser closed")
#: failure reasons after which the page is rendered again on a fresh browser (once)
_RETRIED = ("browser_crashed", "browser_memory_limit", "browser_stalled")
#: meta keys this middleware sets for scrapy-playwright (removed again on a static fallback)
_PLAYWRIGHT_KEYS = (
    "playwright",
    "playwright_context",
    "playwright_context_kwargs",
    "playwright_page_goto_kwargs",
    "playwright_page_methods",
    "playwright_page_init_callback",
    STATIC_LOOK_META,
)


def _is_browser_handler(path: Any) -> bool:
    """The handler (an import path or a class) is scrapy-playwright's or a subclass of it."""
    if not path:
        return False
    try:
        from scrapy.utils.misc import load_object
        from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

        cls = load_object(path) if isinstance(path, str) else path
        return isinstance(cls, type) and issubclass(cls, ScrapyPlaywrightDownloadHandler)
    except (ImportError, ValueError, NameError, AttributeError):
        return False


def _spider_scope(spider: Any) -> tuple[list[str], str]:
    """The crawl's sites and scope mode, as the site spider keeps them (none for another spider)."""
    sites = getattr(spider, "sites", None) or ()
    scope = getattr(getattr(spider, "params", None), "scope", "host")
    return sorted(str(s) for s in sites), str(scope)


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def _is_rendered(request: Request, response: Response | None = None) -> bool:
    return bool(request.meta.get("playwright")) or (response is not None and "playwright" in response.flags)


def _browser_died(exc: BaseException) -> bool:
    text = f"{type(exc).__name__} {exc}".lower()
    return type(exc).__name__ == "TargetClosedError" or any(s in text for s in _BROWSER_DIED)


def _failure_reason(exc: BaseException) -> str:
    named = getattr(exc, "render_failure", None)  # RenderTimeout, BrowserCrashed (the download handler's)
    if isinstance(named, str) and named:
        return named
    if any(s in str(exc).lower() for s in _BROWSER_MISSING):
        return "browser_unavailable"
    if _browser_died(exc):
        return "browser_crashed"
    name = type(exc).__name__
    if "Timeout" in name:
        return "timeout"
    return "browser_error" if name == "Error" else name.lower()


@dataclass(frozen=True)
class InlineJudgeParams:
    # While the worker processes start (about a second), a page up to this many bytes is judged on the
    # reactor thread; a larger one waits for them. 256 KiB is judged in ~0.1 s on the 2-core machine; a 9 MiB
    # page of 360,000 elements judged there held every other host for 1.4-4.6 s (issue 30, item 10).
    max_bytes: int = 262_144


_INLINE = InlineJudgeParams()


#: meta: this page already waited once for a paused browser (it goes static if the browser is paused again)
_HELD_META = "boilerstrip_render_held"
#: meta: this page's render failed while the browser was down and it was rendered once more after (its last)
_AFTER_RESTART_META = "boilerstrip_render_after_restart"
#: verdicts on a *rendered* page that say it still shows a placeholder (the others, such as little text
#: with scripts, describe many a short page that rendered fine)
_PLACEHOLDER_REASONS = ("loading_shell", "empty_app_root")


def _target_chars(meta: Any) -> int:
    """The content target of a render request's wait (its settle page method's ``target_chars``)."""
    target = 0
    for method in meta.get("playwright_page_methods") or ():
        target = max(target, int(getattr(method, "kwargs", {}).get("target_chars", 0)))
    return target


class RenderWhenNeededMiddleware:
    """Static first; the browser exactly where the served HTML lacks the content."""

    def __init__(
        self,
        *,
        decision: RenderParams | None = None,
        learn: HostLearnParams | None = None,
        browser: BrowserParams | None = None,
        stats: Any = None,
        crawl_scope: Any = None,
        url_params: UrlParams | None = None,
        plan: PagePlan = PagePlan(),
    ) -> None:
        """``crawl_scope``: a function returning the crawl's (sites, scope) pair (site keys of
        :func:`boilerstrip.urls.site_key`), the other hosts a page's browser sub-requests may reach.
        ``plan``: what the pipelines read of a page (``boilerstrip.reading.page.page_plan``): the decision's
        job reads it for a static page, and the reading travels on to them (``READING_META``)."""
        self.decision = decision or RenderParams()
        #: the crawl's URL normal form: the decision's job normalises a static page's links for the spider
        self.url_params = url_params
        self.plan = plan
        self.crawl_scope = crawl_scope
        self.browser = browser or BrowserParams()
        self.learner = HostRenderLearner(learn or HostLearnParams())
        self.stats = stats
        self.pool: Any = None  # the crawl's WorkerPool (boilerstrip.workers), set when the engine starts
        self.renders_started = 0
        self.consecutive_failures = 0
        self.disabled = False  # the browser could not start max_consecutive_failures times in a row
        #: time.monotonic() until which pages go static after max_consecutive_failures failed renders
        self.paused_until = 0.0

    @classmethod
    def from_crawler(cls, crawler: Any) -> "RenderWhenNeededMiddleware":
        settings = crawler.settings
        browser = params_from_settings(settings, "render", BrowserParams)
        if not browser.may_render:
            raise NotConfigured("BOILERSTRIP_RENDER_MODE is never (and no pattern renders)")
        handlers = settings.getwithbase("DOWNLOAD_HANDLERS")
        if not any(_is_browser_handler(handlers.get(scheme)) for scheme in ("http", "https")):
            raise NotConfigured(
                "scrapy-playwright is not the http(s) download handler (is boilerstrip.rendering_addon.RenderAddon in ADDONS?)"
            )
        mw = cls(
            decision=params_from_settings(settings, "render", RenderParams),
            learn=params_from_settings(settings, "render", HostLearnParams),
            browser=browser,
            stats=crawler.stats,
            crawl_scope=lambda: _spider_scope(crawler.spider),
            url_params=params_from_settings(settings, "urls", UrlParams),
            plan=page_plan(settings),
        )
        crawler.signals.connect(mw._spider_closed, signal=signals.spider_closed)

        def engine_started() -> None:
            mw.pool = WorkerPool.of(crawler)

        crawler.signals.connect(engine_started, signal=signals.engine_started, weak=False)
        return mw

    # -- stats -------------------------------------------------------------------------------------
    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"{_STATS}/{key}", count)

    def _update_restarts(self) -> None:
        if self.stats is not None:
            launched = self.stats.get_value("playwright/browser_count", 0) or 0
            self.stats.set_value(f"{_STATS}/browser_restarts", max(0, launched - 1))

    def _spider_closed(self) -> None:
        self._update_restarts()
        if self.stats is not None:
            learned = sorted(h for h, s in self.learner.snapshot().items() if s["learned"])
            self.stats.set_value(f"{_STATS}/learned_hosts", len(learned))

    def _off(self) -> str | None:
        """Why pages go static now: ``browser_disabled`` (it cannot start), ``browser_paused`` (it failed
        several renders in a row, a short while ago); None when the browser is used."""
        if self.disabled:
            return "browser_disabled"
        if self.paused_until and time.monotonic() < self.paused_until:
            return "browser_paused"
        return None

    # -- the render request --------------------------------------------------------------------------
    def _mode(self, request: Request) -> str:
        """auto | never | always for this request; meta beats settings."""
        meta = request.meta
        if meta.get(DONT_RENDER_META) or meta.get("boilerstrip_render") is False:
            return "never"
        if meta.get("boilerstrip_render") is True:
            return "always"
        return self.browser.mode_for(request.url)

    def _render_meta(self, request: Request, reason: str, target_chars: int) -> dict[str, Any]:
        b = self.browser
        sites, scope = self.crawl_scope() if self.crawl_scope is not None else ([], "host")
        self.renders_started += 1
        generation = (self.renders_started - 1) // b.context_max_pages
        return {
            "playwright": True,
            "playwright_context": context_name(generation),
            "playwright_context_kwargs": {
                "accept_downloads": False,
                "service_workers": "block",  # a service worker's fetches would bypass the scope route
                "java_script_enabled": True,
            },
            "playwright_page_goto_kwargs": {"wait_until": "domcontentloaded", "timeout": b.navigation_timeout_ms},
            "playwright_page_methods": [
                PageMethod(
                    settle_page,
                    selector=b.wait_selector,
                    target_chars=target_chars,
                    max_wait_ms=b.max_wait_ms,
                    quiet_ms=b.settle_quiet_ms,
                    idle_ms=b.settle_idle_ms,
                )
            ],
            "playwright_page_init_callback": INIT_CALLBACK,
            "boilerstrip_render_scope": {
                "blocked_resource_types": sorted(b.blocked_resource_types),
                "extra_hosts": sorted(b.subrequest_hosts),
                "sites": sites,
                "scope": scope,
            },
            RENDER_REASON_META: reason,
        }

    def _to_browser(self, request: Request, reason: str, target_chars: int | None = None, **extra: Any) -> Request:
        target = self.browser.min_text_growth_chars if target_chars is None else target_chars
        meta = {**request.meta, **self._render_meta(request, reason, target), **extra}
        self._inc(f"reason/{reason}")
        logger.debug("render %s: %s", request.url, reason)
        return request.replace(meta=meta, dont_filter=True)

    # -- hooks ---------------------------------------------------------------------------------------
    def process_request(self, request: Request) -> Request | None:
        meta = request.meta
        if meta.get(KIND_META, "page") != "page" or request.method != "GET":
            return None
        if meta.get("playwright"):
            if not meta.get("playwright_page_init_callback"):  # a user's own browser request: same rules
                meta["playwright_page_init_callback"] = INIT_CALLBACK
                meta.setdefault(RENDER_REASON_META, "requested")
            return None
        if RENDER_REASON_META in meta or meta.get(RENDER_FAILED_META):
            return None  # a static fallback after a failed render: stays static
        # Straight to the browser: the meta is set in place and the request goes on down the chain (it
        # is not re-scheduled, so nothing counts it twice).
        mode = self._mode(request)
        reason = None
        if mode == "always":
            reason = "forced" if meta.get("boilerstrip_render") is True else (
                "mode_always" if self.browser.mode == "always" else "pattern_always")
        elif mode == "auto":
            route = self.learner.route(_host(request.url))
            if route == "browser":
                reason = "host_learned"
            elif route == "recheck":
                self._inc("learn/rechecks")
        if reason is not None and self._off() is not None:
            meta[RENDER_FAILED_META] = self._off()
            self._inc(f"failed/{self._off()}")
        elif reason is not None:
            meta.update(self._render_meta(request, reason, self.browser.min_text_growth_chars))
            if reason == "host_learned":  # the served HTML is judged first, in the browser's navigation
                meta[STATIC_LOOK_META] = self.decision
            self._inc(f"reason/{reason}")
            logger.debug("render %s: %s", request.url, reason)
        return None

    def process_response(self, request: Request, response: Response) -> Request | Response:
        if _is_rendered(request, response):
            return self._rendered(request, response)
        meta = request.meta
        if meta.get(KIND_META, "page") != "page" or request.method != "GET":
            return response
        if self._mode(request) != "auto" or meta.get(RENDER_FAILED_META):
            self._inc("skipped/not_auto")
            return response
        if not 200 <= response.status < 300 or response.status == 204:
            self._inc("skipped/status")  # a failed static fetch is never a reason to render
            return response
        ctype = (response.headers.get(b"Content-Type") or b"").split(b";", 1)[0].strip().lower()
        if not isinstance(response, TextResponse) or (ctype and ctype not in _HTML_TYPES):
            self._inc("skipped/not_html")
            return response
        try:
            html = response.text
        except (UnicodeDecodeError, LookupError, ValueError):
            self._inc("skipped/undecodable")
            return response
        if self.pool is not None and not self.pool.starting:
            # judged in the crawl's worker pool: a coroutine, which Scrapy awaits like a returned response
            return self._judged_in_pool(request, response, html)
        if self.pool is not None:
            if len(response.body) > _INLINE.max_bytes:
                # too large to judge here without holding every other host: it waits for the workers
                return self._judged_in_pool(request, response, html)
            # the workers are still starting: the crawl's first pages are judged here rather than wait for
            # them (their links decide what the crawl fetches next; the pipelines read them in the pool)
            self._inc("judged_while_workers_start")
        return self._after_verdict(request, response, judge_static(html, response.url, self.decision))

    async def _judged_in_pool(self, request: Request, response: Response, html: str) -> Request | Response:
        try:
            verdict, reading, links = await self.pool.run(judge_and_read, html, response.url, self.decision,
                                                           self.plan, response.encoding, self.url_params)
        except WorkerDied:
            self._inc("skipped/worker_died")  # extraction meets the same page and records why it failed
            return response
        if reading is not None:  # the pipelines' reading of this very text: the spider puts it on the item
            request.meta[READING_META] = stamped(reading, html, response.url, self.plan)
        if links is not None and isinstance(response, HtmlResponse):
            remember_links(response, links, request)  # the spider and the middlewares take it: no parse here
        result = self._after_verdict(request, response, verdict)
        # a page held for a paused browser waits in a coroutine of its own: awaited here (Scrapy awaits the
        # coroutine process_response returned, not one that coroutine returns: each such page was
        # failed:_invalidoutput while a crashing browser was paused)
        return await result if inspect.isawaitable(result) else result

    def _after_verdict(self, request: Request, response: Response, verdict: RenderVerdict
                       ) -> Request | Response | Coroutine[Any, Any, Request | Response]:
        """What becomes of the page: kept, sent to the browser, or (a coroutine) held for a paused browser."""
        meta = request.meta
        if verdict.signals.content_source == "extractor":
            self._inc("extractor_checks")
        self._inc("checked")
        self.learner.record(_host(request.url), verdict.needs)
        meta["boilerstrip_render_verdict"] = verdict.reason
        if not verdict.needs:
            self._inc(f"static/{verdict.reason}")
            return response
        off = self._off()
        if off == "browser_paused" and not meta.get(_HELD_META):
            # the browser is being given its pause: the page waits for it (once) instead of going static
            return self._held_for_browser(request, response, verdict)
        if off is not None:
            return self._kept_static(request, response, verdict, off)
        target = verdict.signals.content_chars + self.browser.min_text_growth_chars
        return self._to_browser(request, verdict.reason, target, boilerstrip_render_reissued=True)

    def _kept_static(self, request: Request, response: Response, verdict: RenderVerdict, off: str) -> Response:
        self._inc(f"reason/{verdict.reason}")
        self._inc(f"failed/{off}")
        request.meta[RENDER_FAILED_META] = off
        return response

    async def _held_for_browser(self, request: Request, response: Response, verdict: RenderVerdict) -> Request | Response:
        """A page that needs the browser while it is paused: waits for the pause to end (at most one render
        budget) and is rendered then, by the browser tried again (a stalled one restarted meanwhile)."""
        request.meta[_HELD_META] = True
        self._inc("held_for_browser")
        await asyncio.sleep(max(0.0, self.paused_until - time.monotonic()))
        off = self._off()
        if off is not None:  # paused again (the browser still fails), or switched off
            return self._kept_static(request, response, verdict, off)
        target = verdict.signals.content_chars + self.browser.min_text_growth_chars
        return self._to_browser(request, verdict.reason, target, boilerstrip_render_reissued=True)

    def _static_look(self, request: Request, settle: dict[str, Any]) -> Response | None:
        """A learned host's page whose served HTML was judged before rendering: the learner gets the verdict;
        a page judged static is answered with its served HTML (it was not rendered)."""
        if "verdict" not in settle:
            return None
        meta = request.meta
        self.learner.record(_host(request.url), bool(settle.get("needs")))
        self._inc(f"learn/static_look/{'rendered' if settle.get('needs') else 'static'}")
        served = settle.get("served")
        if settle.get("needs") or not isinstance(served, dict):
            return None
        self._inc(f"static/{settle['verdict']}")
        meta["boilerstrip_render_verdict"] = settle["verdict"]
        meta[RENDER_STATIC_LOOK_META] = True
        meta["playwright"] = False  # the record says fetch "http": its text is the served HTML, not a render
        meta.pop(RENDER_REASON_META, None)
        meta.pop(RENDER_SETTLE_META, None)
        headers = Headers(served.get("headers") or {})
        headers.pop("Content-Encoding", None)  # the body was decoded by the browser's fetch
        body = served.get("body") or b""
        cls = responsetypes.from_args(headers=headers, url=served["url"], body=body)
        return cls(url=served["url"], status=int(served.get("status") or 200), headers=headers, body=body,
                   request=request)

    def _left_scope(self, request: Request, response: Response, settle: dict[str, Any]) -> str | None:
        """Why the rendered page is not the page asked for: its script navigated somewhere the browser's
        proxy refused (``navigation_refused``), or off the crawl's sites (``navigated_offsite``)."""
        if settle.get("navigation_refused"):
            return "navigation_refused"
        if origin_key(response.url) == origin_key(request.url):
            return None
        sites, scope = self.crawl_scope() if self.crawl_scope is not None else ([], "host")
        try:
            if sites and in_scope(response.url, frozenset(sites), scope):
                return None
        except ValueError:
            pass
        return "navigated_offsite"

    def _rendered(self, request: Request, response: Response) -> Response | Request:
        meta = request.meta
        for method in meta.get("playwright_page_methods") or ():
            result = getattr(method, "result", None)
            if isinstance(result, dict) and result.get("outcome"):
                static = self._static_look(request, result)
                if static is not None:
                    self.consecutive_failures = 0
                    return static
                left = self._left_scope(request, response, result)
                if left is not None:
                    logger.warning("render of %s ended on %s (%s): falling back to the static page",
                                   request.url, response.url, left)
                    return self._static_fallback(request, left)
        self._inc("rendered")
        self.consecutive_failures = 0
        latency = meta.get("download_latency")
        if isinstance(latency, (int, float)):
            ms = int(latency * 1000)
            self._inc("time_ms/total", ms)
            if self.stats is not None:
                self.stats.max_value(f"{_STATS}/time_ms/max", ms)
        for reason, count in (meta.get("boilerstrip_render_blocked") or {}).items():
            self._inc(f"subrequests_blocked/{reason}", count)
        if "boilerstrip_render_blocked" not in meta:
            self._inc("init_failed")  # scrapy-playwright logged why; the page rendered without our route
        for method in meta.get("playwright_page_methods") or ():
            result = getattr(method, "result", None)
            if isinstance(result, dict) and result.get("outcome"):
                meta[RENDER_SETTLE_META] = {k: v for k, v in result.items() if k != "served"}
                self._inc(f"settle/{result['outcome']}")
                if isinstance(result.get("waited_ms"), int):
                    self._inc("settle/waited_ms", result["waited_ms"])
                if result.get("surrogates_repaired"):
                    self._inc("surrogates_repaired", int(result["surrogates_repaired"]))
        self._update_restarts()
        if self.pool is not None and not self.pool.starting and isinstance(response, TextResponse):
            return self._placeholder_judged_in_pool(request, response)  # off the reactor, as the static verdict
        return self._kept_render(request, response, self._still_a_shell(response))

    async def _placeholder_judged_in_pool(self, request: Request, response: Response) -> Response | Request:
        try:
            verdict = await self.pool.run(judge_static, response.text, response.url, self.decision)
        except (WorkerDied, UnicodeDecodeError, LookupError, ValueError):
            verdict = None
        shell = verdict.reason if verdict is not None and verdict.needs and verdict.reason in _PLACEHOLDER_REASONS else None
        return self._kept_render(request, response, shell)

    def _kept_render(self, request: Request, response: Response, shell: str | None) -> Response | Request:
        """The rendered ``response`` as the record's page; rendered once more while it still shows the
        placeholder ``shell`` (then flagged)."""
        meta = request.meta
        if shell is not None:
            if not meta.get("boilerstrip_render_rewait"):
                # the wait ended on a placeholder ("Loading...", an empty app root): rendered once more
                self._inc(f"rerendered/{shell}")
                logger.warning("render of %s still shows a placeholder (%s): rendering it once more", request.url, shell)
                fresh = {**meta, **self._render_meta(request, meta.get(RENDER_REASON_META, "retry"),
                                                     _target_chars(meta))}
                fresh["boilerstrip_render_rewait"] = True
                return request.replace(meta=fresh, dont_filter=True)
            self._inc(f"placeholder/{shell}")
            logger.warning("render of %s still shows a placeholder (%s) after a second render: kept, flagged "
                           "render_placeholder:%s", request.url, shell, shell)
            meta[RENDER_PLACEHOLDER_META] = shell
        if len(response.body) > self.browser.max_rendered_bytes:
            self._inc("truncated")
            meta[RENDER_TRUNCATED_META] = True
            return response.replace(body=response.body[: self.browser.max_rendered_bytes])
        return response

    def _still_a_shell(self, response: Response) -> str | None:
        """The placeholder verdict (``loading_shell``, ``empty_app_root``) on the rendered HTML, if the page
        still shows one after the wait; None otherwise (and for a page too large to judge on the reactor:
        this runs there only while the workers start)."""
        if not isinstance(response, TextResponse) or len(response.body) > _INLINE.max_bytes:
            return None
        try:
            verdict = judge_static(response.text, response.url, self.decision)
        except (UnicodeDecodeError, LookupError, ValueError):
            return None
        return verdict.reason if verdict.needs and verdict.reason in _PLACEHOLDER_REASONS else None

    def process_exception(self, request: Request, exception: BaseException) -> Request | None:
        if not _is_rendered(request):
            return None
        reason = _failure_reason(exception)
        self._update_restarts()
        meta = request.meta
        retries = int(meta.get("boilerstrip_render_retries", 0))
        if reason in _RETRIED and retries < self.browser.max_browser_retries:
            self._inc(f"retried/{reason}")
            logger.warning("the browser was lost rendering %s (%s): rendering it again on a fresh browser",
                           request.url, reason)
            fresh = {**meta, **self._render_meta(request, meta.get(RENDER_REASON_META, "retry"),
                                                 _target_chars(meta))}
            fresh["boilerstrip_render_retries"] = retries + 1
            return request.replace(meta=fresh, dont_filter=True)
        # Give up on the browser for this page: fetch it static again, with the reason on the record
        # (failed/<reason> counts the pages that end static: the crawl's exit status reads it).
        self.consecutive_failures += 1
        if not self.disabled and self.consecutive_failures >= self.browser.max_consecutive_failures:
            if reason == "browser_unavailable":  # it cannot start (not installed): no use trying again
                self.disabled = True
                if self.stats is not None:
                    self.stats.set_value(f"{_STATS}/disabled", 1)
                logger.error(
                    "the browser failed %d renders in a row (last: %s): rendering is off for the rest of this crawl; "
                    "pages that need it keep their static HTML (flag render_failed:browser_disabled)",
                    self.consecutive_failures, reason,
                )
            else:
                # a browser that ran and then failed (timeouts, crashes: a stalled one is restarted by the
                # download handler): pages go static for one render budget, then the browser is tried again
                self.paused_until = time.monotonic() + self.browser.max_render_ms / 1000
                self.consecutive_failures = 0
                self._inc("paused")
                logger.error(
                    "the browser failed %d renders in a row (last: %s): it is paused for %g s; pages that need it "
                    "wait for it once, then go static (flag render_failed:browser_paused)",
                    self.browser.max_consecutive_failures, reason, self.browser.max_render_ms / 1000,
                )
        if (reason in _RETRIED or self._off() == "browser_paused") and not meta.get(_AFTER_RESTART_META):
            # the browser was down (lost, stalled or paused), not this page at fault: one more render once
            # it is back, rather than the static shell for good
            return self._render_after_restart(request, reason)
        logger.warning("render failed for %s (%s): falling back to the static page", request.url, reason)
        self._inc(f"failed/{reason}")
        return self._static_fallback(request, reason)

    async def _render_after_restart(self, request: Request, reason: str) -> Request:
        """A page whose render failed while the browser was down: it waits for the browser's pause to end
        (at most one render budget; a lost or stalled browser is relaunched by the next render) and is
        rendered once more; static (with the reason) if the browser is still off then."""
        self._inc(f"after_restart/{reason}")
        await asyncio.sleep(max(0.0, min(self.paused_until - time.monotonic(), self.browser.max_render_ms / 1000)))
        off = self._off()
        if off is not None:
            logger.warning("render failed for %s (%s), and the browser is still %s: falling back to the static page",
                           request.url, reason, off.removeprefix("browser_"))
            self._inc(f"failed/{reason}")
            return self._static_fallback(request, reason)
        logger.warning("render of %s failed while the browser was down (%s): rendering it once more after the "
                       "browser's restart", request.url, reason)
        meta = request.meta
        fresh = {**meta, **self._render_meta(request, meta.get("boilerstrip_render_reason", "retry"), _target_chars(meta))}
        fresh[_AFTER_RESTART_META] = True
        return request.replace(meta=fresh, dont_filter=True)

    def _static_fallback(self, request: Request, reason: str) -> Request:
        meta = request.meta
        if reason in ("navigation_refused", "navigated_offsite"):
            self._inc(f"failed/{reason}")
        static_meta = {k: v for k, v in meta.items() if k not in _PLAYWRIGHT_KEYS}
        static_meta[RENDER_FAILED_META] = reason
        static_meta.pop(RENDER_REASON_META, None)
        return request.replace(meta=static_meta, dont_filter=True)
