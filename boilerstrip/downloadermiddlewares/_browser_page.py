"""What runs inside the browser for a rendered page: scope, dialogs, popups, the settle wait, recycling.

Used only by :mod:`boilerstrip.downloadermiddlewares.render`, through scrapy-playwright's per-request meta
(``playwright_page_init_callback`` names :func:`init_page` by import path; ``playwright_page_methods``
holds a ``PageMethod(settle_page, ...)``). Plain module functions, so a request stays picklable.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from contextlib import suppress
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from boilerstrip.rendering import subrequest_block_reason
from boilerstrip.urls import in_scope

__all__ = ["init_page", "settle_page", "context_name", "INIT_CALLBACK", "PAGE_META"]

#: import path given to scrapy-playwright as ``playwright_page_init_callback``
INIT_CALLBACK = "boilerstrip.downloadermiddlewares._browser_page.init_page"
_CONTEXT_PREFIX = "boilerstrip-render-"
_GEN_ATTR = "_boilerstrip_generation"
_RETIRED_ATTR = "_boilerstrip_retired"
_ROUTED_ATTR = "_boilerstrip_routed"
#: transient meta key: the page being rendered (read and removed by the download handler)
PAGE_META = "_boilerstrip_page"

#: The page's content text length: body text minus page chrome outside <article>/<main> (nav, header,
#: footer, aside, cookie/consent banners), the same measure as the static decision's ``content_chars``,
#: so a shell's server-rendered chrome does not count as its content having arrived.
_CONTENT_CHARS_JS = """() => {
  const b = document.body;
  if (!b) return 0;
  const chrome = 'nav, header, footer, aside, [id*="cookie" i], [class*="cookie" i], [id*="consent" i], [class*="consent" i]';
  let n = b.innerText.length;
  for (const el of b.querySelectorAll(chrome)) {
    if (el.parentElement && (el.parentElement.closest(chrome) || el.parentElement.closest('article, main'))) continue;
    n -= el.innerText.length;
  }
  return Math.max(0, n);
}"""
#: True once the content text has reached ``target`` characters and stayed unchanged for ``quiet`` ms,
#: or at once on an error page (4xx/5xx: no content is coming).
_SETTLE_JS = """([target, quiet]) => {
  const nav = performance.getEntriesByType('navigation')[0];
  if (nav && nav.responseStatus >= 400) return true;
  const n = (""" + _CONTENT_CHARS_JS + """)();
  const s = window.__boilerstripSettle || (window.__boilerstripSettle = {n: -1, at: 0});
  const now = performance.now();
  if (n !== s.n) { s.n = n; s.at = now; return false; }
  return n >= target && now - s.at >= quiet;
}"""


def context_name(generation: int) -> str:
    return f"{_CONTEXT_PREFIX}{generation}"


def _generation(name: str | None) -> int | None:
    if not name or not name.startswith(_CONTEXT_PREFIX):
        return None
    try:
        return int(name[len(_CONTEXT_PREFIX):])
    except ValueError:
        return None


async def _dismiss(dialog: Any) -> None:
    with suppress(PlaywrightError):
        await dialog.dismiss()


async def _close_popup(popup: Any) -> None:
    with suppress(PlaywrightError):
        await popup.close()


async def _abort_stray(route: Any, pw_request: Any) -> None:
    with suppress(PlaywrightError):
        await route.abort("blockedbyclient")


async def _close_if_drained(context: Any) -> None:
    if getattr(context, _RETIRED_ATTR, False) and not [p for p in context.pages if not p.is_closed()]:
        with suppress(PlaywrightError):
            await context.close()


async def _retire_old_contexts(page: Any, own: Any) -> None:
    """Contexts of an older generation than the newest one get no new pages: close them once drained."""
    browser = own.browser
    contexts = list(browser.contexts) if browser is not None else [own]
    gens = [getattr(c, _GEN_ATTR, None) for c in contexts]
    newest = max((g for g in gens if g is not None), default=None)
    if newest is None:
        return
    for ctx, gen in zip(contexts, gens):
        if gen is not None and gen < newest:
            setattr(ctx, _RETIRED_ATTR, True)
            if ctx is not own:  # in the background: this page's render must not wait on another context
                asyncio.ensure_future(_close_if_drained(ctx))


async def init_page(page: Any, request: Any) -> None:
    """scrapy-playwright's page init callback: runs before the page navigates."""
    meta = request.meta
    scope = meta.get("boilerstrip_render_scope") or {}
    blocked_types = frozenset(scope.get("blocked_resource_types", ("image", "media", "font")))
    extra_hosts = frozenset(scope.get("extra_hosts", ()))
    sites = frozenset(scope.get("sites", ()))
    site_scope = scope.get("scope", "host")

    def in_crawl_scope(url: str) -> bool:
        try:
            return bool(sites) and in_scope(url, sites, site_scope)
        except ValueError:
            return False

    page_url = request.url
    blocked: Counter = Counter()
    meta[PAGE_META] = page  # lets the download handler close the page of a render that overran

    async def _route(route: Any, pw_request: Any) -> None:
        reason = subrequest_block_reason(
            pw_request.url,
            resource_type=pw_request.resource_type,
            page_url=page_url,
            blocked_resource_types=blocked_types,
            extra_hosts=extra_hosts,
            in_crawl_scope=in_crawl_scope,
        )
        try:
            if reason is None:
                await route.fallback()  # on to scrapy-playwright's own handler (headers, method)
            else:
                blocked[reason] += 1
                await route.abort("blockedbyclient")
        except PlaywrightError:
            pass  # the page is closing

    # Routes run newest first: this one sees every request before scrapy-playwright's.
    await page.route("**", _route)
    meta["boilerstrip_render_blocked"] = blocked  # present = the scope route is in place
    page.on("dialog", _dismiss)
    page.on("popup", _close_popup)

    context = page.context
    if not getattr(context, _ROUTED_ATTR, False):
        # Page routes win over context routes, so this one only sees requests of pages nobody routed:
        # popups and window.open() tabs, which are closed at once and must fetch nothing meanwhile.
        setattr(context, _ROUTED_ATTR, True)
        await context.route("**", _abort_stray)
    gen = _generation(meta.get("playwright_context"))
    if gen is not None and getattr(context, _GEN_ATTR, None) is None:
        setattr(context, _GEN_ATTR, gen)
    page.on("close", lambda _page: asyncio.ensure_future(_close_if_drained(context)))
    await _retire_old_contexts(page, context)


async def settle_page(
    page: Any,
    *,
    selector: str = "",
    target_chars: int = 100,
    max_wait_ms: int = 5000,
    quiet_ms: int = 300,
) -> dict[str, Any]:
    """Wait (bounded) for the content: ``selector`` when given, else the content text (body text minus
    chrome) reaching ``target_chars`` and then staying unchanged for ``quiet_ms``. Returns what happened; never raises
    on a timeout (the page is taken as it is, and the record says so)."""
    started = time.monotonic()
    outcome = "settled"
    try:
        if selector:
            await page.wait_for_selector(selector, state="attached", timeout=max_wait_ms)
            if quiet_ms:
                await page.wait_for_timeout(quiet_ms)
        else:
            await page.wait_for_function(
                _SETTLE_JS, arg=[int(target_chars), int(quiet_ms)], polling=100, timeout=max_wait_ms
            )
    except PlaywrightTimeoutError:
        outcome = "timeout"
    except PlaywrightError:
        outcome = "error"  # the page navigated away or closed mid-wait; take what is there
    text_chars = -1
    with suppress(PlaywrightError):
        text_chars = await page.evaluate(_CONTENT_CHARS_JS)
    return {"outcome": outcome, "waited_ms": round((time.monotonic() - started) * 1000), "text_chars": text_chars}
