"""What runs inside the browser for a rendered page: scope, dialogs, popups, the content wait, recycling.

Used only by :mod:`boilerstrip.downloadermiddlewares.render`, through scrapy-playwright's per-request meta
(``playwright_page_init_callback`` names :func:`init_page` by import path; ``playwright_page_methods``
holds a ``PageMethod(settle_page, ...)``). Plain module functions, so a request stays picklable.

- the scope route aborts sub-requests outside the crawl's scope (the address of every connection,
  redirect hops included, is checked again by the browser's proxy, see
  :mod:`boilerstrip.downloadhandlers._browser_proxy`);
- a page sent straight to the browser because its host was learned as script-heavy gets the static look
  first: its served HTML is fetched (through the same proxy), judged by
  :func:`boilerstrip.rendering.needs_rendering`, and when it already holds its content the page is not
  rendered (the served HTML is the response);
- the content wait (:func:`settle_page`) watches the content text and the page's requests in flight;
- lone UTF-16 surrogates written by scripts are replaced by U+FFFD before the DOM is read (Python cannot
  encode them: the whole render would be lost).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from contextlib import suppress
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from scrapy_playwright.headers import use_scrapy_headers

from boilerstrip.rendering import needs_rendering, subrequest_block_reason
from boilerstrip.urls import in_scope
from boilerstrip.meta import PAGE_META

__all__ = ["init_page", "settle_page", "context_name", "INIT_CALLBACK", "STATIC_LOOK_META"]

#: import path given to scrapy-playwright as ``playwright_page_init_callback``
INIT_CALLBACK = "boilerstrip.downloadermiddlewares._browser_page.init_page"
_CONTEXT_PREFIX = "boilerstrip-render-"
_GEN_ATTR = "_boilerstrip_generation"
_RETIRED_ATTR = "_boilerstrip_retired"
_ROUTED_ATTR = "_boilerstrip_routed"
_STATE_ATTR = "_boilerstrip_state"
#: meta key: the decision's RenderParams when the page gets the static look before it is rendered
STATIC_LOOK_META = "boilerstrip_render_look_first"
#: what a page judged static gets instead of its served HTML while the browser is closed on it
_BLANK_HTML = "<!doctype html><html><head></head><body></body></html>"
_HTML_TYPES = ("text/html", "application/xhtml+xml")
#: the header on the browser proxy's refusals (boilerstrip.downloadhandlers._browser_proxy)
_REFUSED_HEADER = "x-boilerstrip-refused"

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
#: [content chars, error page?]: an error page (4xx/5xx) gets no content, so it is not waited for.
_PROBE_JS = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  return [(""" + _CONTENT_CHARS_JS + """)(), !!(nav && nav.responseStatus >= 400)];
}"""
#: Replace lone UTF-16 surrogates (a script's broken string) by U+FFFD in every text, comment and attribute,
#: now and, through a MutationObserver, in whatever scripts write later (its callbacks run before the next
#: task, so before the DOM is read). Returns how many strings were repaired now.
_REPAIR_SURROGATES_JS = r"""() => {
  const bad = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
  let fixed = 0;
  const fix = (s) => { if (!bad.test(s)) return s; bad.lastIndex = 0; fixed++; return s.replace(bad, '\uFFFD'); };
  const repair = (n) => {
    if (n.nodeType === 1) {
      for (const a of Array.from(n.attributes)) { const v = fix(a.value); if (v !== a.value) a.value = v; }
      if (n.tagName === 'TEMPLATE') visit(n.content);
    } else if (n.nodeType === 3 || n.nodeType === 4 || n.nodeType === 7 || n.nodeType === 8) {
      const v = fix(n.data); if (v !== n.data) n.data = v;
    }
  };
  const visit = (root) => {
    if (!root) return;
    repair(root);
    const w = document.createTreeWalker(root, 0xFFFFFFFF);
    let n; while ((n = w.nextNode())) repair(n);
  };
  bad.lastIndex = 0;
  visit(document);
  if (!window.__boilerstripRepair) {
    window.__boilerstripRepair = new MutationObserver((records) => {
      for (const r of records) {
        if (r.type === 'childList') { for (const a of r.addedNodes) visit(a); } else { repair(r.target); }
      }
    });
    window.__boilerstripRepair.observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
  }
  return fixed;
}"""


class _PageState:
    """Per page: requests in flight (the network-idle test) and what the static look found."""

    def __init__(self) -> None:
        self.in_flight: set = set()
        self.net_changed_at = time.monotonic()
        self.static_look: dict[str, Any] | None = None  # {"verdict": reason, "needs": bool, "served": {...}}
        self.refused_navigation: str | None = None  # the proxy refused where the page navigated to

    def responded(self, response: Any) -> None:
        with suppress(Exception):
            refused = response.headers.get(_REFUSED_HEADER)
            if refused and response.request.is_navigation_request() and response.frame.parent_frame is None:
                self.refused_navigation = refused

    def failed(self, request: Any) -> None:
        self.ended(request)
        with suppress(Exception):
            if request.is_navigation_request() and request.frame.parent_frame is None and "TUNNEL" in (request.failure or ""):
                self.refused_navigation = "tunnel_refused"  # an https hop the proxy refused

    def started(self, request: Any) -> None:
        self.in_flight.add(request)
        if request.redirected_from is not None:
            self.in_flight.discard(request.redirected_from)
        self.net_changed_at = time.monotonic()

    def ended(self, request: Any) -> None:
        self.in_flight.discard(request)
        self.net_changed_at = time.monotonic()

    def idle_for_s(self) -> float:
        return 0.0 if self.in_flight else time.monotonic() - self.net_changed_at


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


async def _static_look(route: Any, pw_request: Any, request: Any, params: Any, state: _PageState) -> bool:
    """Fetch the page's served HTML (through the browser's proxy, no redirect followed) and judge it.
    True when the page was answered here: static (a blank page instead, nothing to run) or not HTML."""
    from boilerstrip.extraction import main_text_chars

    headers = await use_scrapy_headers(
        browser_type_name="chromium",
        playwright_request=pw_request,
        scrapy_request_data={"method": request.method, "url": request.url, "headers": request.headers,
                             "body": request.body, "encoding": request.encoding},
    )
    served = await route.fetch(headers=headers, max_redirects=0)
    ctype = (served.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    if not 200 <= served.status < 300 or (ctype and ctype not in _HTML_TYPES):
        await route.fulfill(response=served)  # a redirect, an error, not HTML: the browser takes it as usual
        return False
    body = await served.body()
    text = body.decode(_charset(served.headers.get("content-type") or ""), errors="replace")
    verdict = needs_rendering(
        text, url=served.url, main_text_chars=lambda doc: main_text_chars(doc, served.url), params=params
    )
    state.static_look = {"verdict": verdict.reason, "needs": verdict.needs}
    if verdict.needs:
        await route.fulfill(response=served, body=body)
        return False
    state.static_look["served"] = {"url": served.url, "status": served.status, "headers": dict(served.headers),
                                   "body": body}
    await route.fulfill(status=200, content_type="text/html", body=_BLANK_HTML)
    return True


def _charset(content_type: str) -> str:
    import codecs

    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset" and value:
            try:
                return codecs.lookup(value.strip().strip('"')).name
            except LookupError:
                break
    return "utf-8"


async def init_page(page: Any, request: Any) -> None:
    """scrapy-playwright's page init callback: runs before the page navigates."""
    meta = request.meta
    scope = meta.get("boilerstrip_render_scope") or {}
    blocked_types = frozenset(scope.get("blocked_resource_types", ("image", "media", "font")))
    extra_hosts = frozenset(scope.get("extra_hosts", ()))
    sites = frozenset(scope.get("sites", ()))
    site_scope = scope.get("scope", "host")
    look_params = meta.get(STATIC_LOOK_META)

    def in_crawl_scope(url: str) -> bool:
        try:
            return bool(sites) and in_scope(url, sites, site_scope)
        except ValueError:
            return False

    page_url = request.url
    blocked: Counter = Counter()
    state = _PageState()
    setattr(page, _STATE_ATTR, state)
    meta[PAGE_META] = page  # lets the download handler close the page of a render that overran
    looked = look_params is None

    async def _route(route: Any, pw_request: Any) -> None:
        nonlocal looked
        reason = subrequest_block_reason(
            pw_request.url,
            resource_type=pw_request.resource_type,
            page_url=page_url,
            blocked_resource_types=blocked_types,
            extra_hosts=extra_hosts,
            in_crawl_scope=in_crawl_scope,
        )
        try:
            if reason is not None:
                blocked[reason] += 1
                await route.abort("blockedbyclient")
            elif not looked and pw_request.is_navigation_request() and pw_request.frame == page.main_frame:
                looked = True
                await _static_look(route, pw_request, request, look_params, state)
            else:
                await route.fallback()  # on to scrapy-playwright's own handler (headers, method)
        except PlaywrightError:
            pass  # the page is closing

    # Routes run newest first: this one sees every request before scrapy-playwright's.
    await page.route("**", _route)
    meta["boilerstrip_render_blocked"] = blocked  # present = the scope route is in place
    page.on("dialog", _dismiss)
    page.on("popup", _close_popup)
    page.on("request", state.started)
    page.on("requestfinished", state.ended)
    page.on("requestfailed", state.failed)
    page.on("response", state.responded)

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


async def _probe(page: Any) -> tuple[int, bool]:
    chars, error_page = await page.evaluate(_PROBE_JS)
    return int(chars), bool(error_page)


async def settle_page(
    page: Any,
    *,
    selector: str = "",
    target_chars: int = 100,
    max_wait_ms: int = 15000,
    quiet_ms: int = 300,
    idle_ms: int = 3000,
    poll_ms: int = 100,
) -> dict[str, Any]:
    """Wait (bounded by ``max_wait_ms``) for the content, and say how the wait ended (``outcome``):

    - ``settled``: ``selector`` is in the DOM, or the content text (body text minus chrome) reached
      ``target_chars``, then stayed unchanged and the page had no request in flight for ``quiet_ms``;
      an error page (4xx/5xx) settles at once;
    - ``quiet``: the content text reached its target and stayed unchanged for ``idle_ms``, while some
      request never finished (a long poll, a stuck beacon);
    - ``idle``: the target was never reached, but nothing was in flight and the text did not change for
      ``idle_ms`` (nothing more is coming: the page is taken as it is);
    - ``timeout``: ``max_wait_ms`` ran out; ``error``: the page navigated away or closed mid-wait;
    - ``static_look``: the page was not rendered (its served HTML holds its content).

    Never raises; lone surrogates are repaired before returning (``surrogates_repaired``)."""
    started = time.monotonic()
    state: _PageState | None = getattr(page, _STATE_ATTR, None)
    if state is not None and state.static_look is not None and "served" in state.static_look:
        return {"outcome": "static_look", "waited_ms": 0, "text_chars": -1, **state.static_look}
    outcome = "timeout"
    text_chars = -1
    deadline = started + max_wait_ms / 1000
    quiet_s, idle_s = quiet_ms / 1000, idle_ms / 1000
    try:
        if selector:
            try:
                await page.wait_for_selector(selector, state="attached", timeout=max_wait_ms)
                outcome = "settled"
                if quiet_ms:
                    await page.wait_for_timeout(quiet_ms)
            except PlaywrightTimeoutError:
                outcome = "timeout"
        else:
            last_chars, changed_at = -1, time.monotonic()
            while True:
                chars, error_page = await _probe(page)
                now = time.monotonic()
                if chars != last_chars:
                    last_chars, changed_at = chars, now
                if error_page:
                    outcome = "settled"
                    break
                still = now - changed_at
                net_idle = state.idle_for_s() if state is not None else still
                if chars >= target_chars and still >= quiet_s and net_idle >= quiet_s:
                    outcome = "settled"
                    break
                if chars >= target_chars and still >= idle_s:
                    outcome = "quiet"
                    break
                if chars < target_chars and still >= idle_s and net_idle >= idle_s:
                    outcome = "idle"
                    break
                if now >= deadline:
                    outcome = "timeout"
                    break
                await asyncio.sleep(poll_ms / 1000)
    except PlaywrightError:
        outcome = "error"  # the page navigated away or closed mid-wait; take what is there
    repaired = 0
    with suppress(PlaywrightError):
        repaired = int(await page.evaluate(_REPAIR_SURROGATES_JS))
    with suppress(PlaywrightError, TypeError, ValueError):
        text_chars = (await _probe(page))[0]
    result: dict[str, Any] = {"outcome": outcome, "waited_ms": round((time.monotonic() - started) * 1000),
                              "text_chars": text_chars, "surrogates_repaired": repaired}
    if state is not None and state.static_look is not None:
        result.update(state.static_look)
    if state is not None and state.refused_navigation:
        result["navigation_refused"] = state.refused_navigation
    return result
