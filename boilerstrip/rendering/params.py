"""The render decision's thresholds, the per-host learner's and the browser's, as frozen dataclasses.

Every field is reached through ``BOILERSTRIP_RENDER_PARAMS``, a few user-level ones (mode, patterns, browser
path, wait selector, sub-request hosts) also as ``BOILERSTRIP_RENDER_<NAME>`` (``boilerstrip.config``).
Values were set on the mixed test site (``benchmarks/render_benchmark.py``: 100 server-rendered articles,
100 JS-only shells) and on the false-positive table of ``tests/test_render_decision.py``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

__all__ = ["RenderParams", "HostLearnParams", "BrowserParams", "RENDER_MODES", "default_browser_path"]

#: auto: static first, browser when the verdict says so; never: static only; always: browser only.
RENDER_MODES = ("auto", "never", "always")


@dataclass(frozen=True)
class RenderParams:
    """Thresholds of :func:`boilerstrip.rendering.needs_rendering`."""

    #: Only the first this-many characters of a document are parsed (size limit: a 50 MB page must not
    #: stall the crawl; a page that large has its text in the HTML anyway).
    max_input_chars: int = 3_000_000
    #: Shell signals (empty app root, "enable JavaScript", "Loading...", hydration markers) count only
    #: when the page's content text (outside nav/header/footer/aside/cookie banners) is below this. Real
    #: shells carry < 200 chars outside their chrome; the shortest real article on the benchmark site has
    #: ~900. A blog post with a Disqus "enable JavaScript" notice stays static because of this guard.
    max_shell_text_chars: int = 400
    #: A page with shell evidence but at least ``max_shell_text_chars`` of its own content measure, and
    #: less than this, gets a second opinion from the extractor (when the caller passes one): chrome in
    #: plain divs can pass for content. 3000: above it the content is real whatever the markup.
    max_extractor_check_text_chars: int = 3_000
    #: An app root with less visible text than this counts as empty ("Loading..." fits, a paragraph not).
    max_empty_root_text_chars: int = 40
    #: ``little_text_with_scripts``: content text below this, with at least one non-tracker script.
    max_little_text_chars: int = 150
    #: An inline script must be at least this long to count as app code (one-line snippets that set a
    #: class on <html> do not build a page).
    min_app_inline_script_chars: int = 200
    #: ``json_only_content``: prose found in script string literals / JSON blobs totals at least this...
    min_script_prose_chars: int = 300
    #: ...and at least this multiple of the visible content text. A server-rendered Next.js page repeats
    #: its text once in ``__NEXT_DATA__`` (ratio ~1) and must stay static; a shell holds it only there.
    min_script_prose_ratio: float = 2.0
    #: A string literal is prose when it has at least this many words (ids, URLs, CSS are not).
    min_prose_words: int = 6
    #: ...and at least this share of letters among its non-space characters.
    min_prose_letter_share: float = 0.6
    #: At most this many script characters are scanned for prose (a 5 MB bundle inlined in the page).
    max_script_scan_chars: int = 2_000_000

    def __post_init__(self) -> None:
        for name in ("max_input_chars", "max_shell_text_chars", "max_little_text_chars", "min_prose_words"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0")
        if self.min_script_prose_ratio < 0:
            raise ValueError("min_script_prose_ratio must be >= 0")
        if not 0 <= self.min_prose_letter_share <= 1:
            raise ValueError("min_prose_letter_share must be within 0..1")


@dataclass(frozen=True)
class HostLearnParams:
    """Per-host learning: once most of a host's pages needed a browser, later pages go straight to it."""

    #: Learning on or off (off: every page is fetched static first).
    learn_enabled: bool = True
    #: A host is learned only after this many static verdicts (one early JS page must not flip a host).
    learn_min_pages: int = 10
    #: ...and when at least this share of its last ``learn_window_pages`` verdicts needed the browser.
    #: 0.8: a host that is half JS-only (the benchmark site) must never be learned, or its static pages
    #: would all be rendered; a host that is all shells saves one static fetch per page.
    learn_min_share: float = 0.8
    #: Verdicts remembered per host (a sliding window, so a site that changes is unlearned).
    learn_window_pages: int = 20
    #: A learned host still has every this-many-th page fetched static and re-checked.
    learn_recheck_every: int = 10
    #: Hosts remembered at most (least recently seen forgotten first): bounded memory on wide crawls.
    learn_max_hosts: int = 10_000

    def __post_init__(self) -> None:
        if self.learn_min_pages < 1 or self.learn_window_pages < 1 or self.learn_recheck_every < 1:
            raise ValueError("learn_min_pages, learn_window_pages and learn_recheck_every must be >= 1")
        if self.learn_window_pages < self.learn_min_pages:
            raise ValueError("learn_window_pages must be >= learn_min_pages")
        if not 0 < self.learn_min_share <= 1:
            raise ValueError("learn_min_share must be within (0, 1]")
        if self.learn_max_hosts < 1:
            raise ValueError("learn_max_hosts must be >= 1")


def default_browser_path() -> str:
    """Debian's chromium when installed, else "" (a Playwright-managed browser)."""
    for path in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if os.path.exists(path):
            return path
    return ""


@dataclass(frozen=True)
class BrowserParams:
    """When to render, and how the browser behaves."""

    #: auto | never | always (see RENDER_MODES).
    mode: str = "auto"
    #: Per-URL overrides, first match wins: a list of [regex, mode] pairs (regex searched in the URL).
    patterns: tuple = ()
    #: Chromium executable; "" = Debian's /usr/bin/chromium when present, else Playwright's own browser.
    browser_path: str = ""
    #: Navigation timeout (to DOM ready). 15 s: a loopback page renders in < 1 s; a slow real site's DOM
    #: is ready in a few seconds; more than this is a page not worth a browser slot.
    navigation_timeout_ms: int = 15_000
    #: CSS selector of the content to wait for ("" = wait for the body text to grow and settle instead).
    wait_selector: str = ""
    #: Upper bound of the wait for content after DOM ready. The wait ends as soon as the content is in and
    #: quiet (or nothing is coming, ``settle_idle_ms``), so this bound only matters for pages that keep
    #: changing; 15 s leaves the benchmark site's 1.5 s delayed injections room on a loaded machine (at
    #: 5 s, one delayed page of a run came back as its 135-char shell) and stays well inside
    #: ``max_render_ms``.
    max_wait_ms: int = 15_000
    #: The content text (body text minus nav/header/footer/aside/cookie banners) must exceed the static
    #: page's by at least this many characters before the content counts as arrived (a "Loading..." swap
    #: is smaller than a paragraph); a page sent straight to the browser waits for this many in all.
    min_text_growth_chars: int = 100
    #: ...and then stay unchanged, with no request of the page in flight, this long (content that streams
    #: in pieces is taken whole).
    settle_quiet_ms: int = 300
    #: A page whose content text has not reached its target is taken as it is once nothing was in flight
    #: and its text did not change for this long (outcome ``idle``); a page that reached it but keeps a
    #: request open (a long poll) is taken once its text was unchanged this long (``quiet``). 3 s: twice
    #: the longest script delay (after its data arrived) on the benchmark site.
    settle_idle_ms: int = 3_000
    #: A whole render (navigation, content wait, load state, reading the DOM) is abandoned after this
    #: long and the page falls back to its static HTML. 40 s = navigation timeout (15 s) + content wait
    #: (5 s) + scrapy-playwright's load-state wait (up to the navigation timeout) + margin.
    max_render_ms: int = 40_000
    #: Rendered HTML larger than this is cut (and flagged): a runaway page must not exhaust memory.
    max_rendered_bytes: int = 5_000_000
    #: Pages open at once per browser context (each is a tab: ~50-100 MB of Chromium memory).
    max_pages_per_context: int = 4
    #: Browser contexts open at once (``PLAYWRIGHT_MAX_CONTEXTS``): at most ``max_contexts *
    #: max_pages_per_context`` tabs in all. 2 is the least that works: a context is retired only once
    #: the next one exists.
    max_contexts: int = 2
    #: Memory bound of the browser: when the crawler's child processes (Playwright's driver and Chromium,
    #: PSS from /proc) use more than this, the browser is closed and a fresh one started (renders under
    #: way are retried). 0 = no check. 1536: the benchmark's peak is ~720 MiB with 8 tabs.
    max_browser_memory_mib: int = 1536
    #: How often that memory is read.
    memory_check_ms: int = 2_000
    #: V8 heap limit of each page (Chromium ``--js-flags=--max-old-space-size``): a runaway script dies
    #: with its tab (``render_failed``) instead of growing the browser. 512 MiB: far above any real page.
    max_js_heap_mib: int = 512
    #: A context is retired (closed once its pages are done) after this many pages: bounded memory and
    #: no state (cookies, caches, service workers) carried across the whole crawl.
    context_max_pages: int = 50
    #: Times a page is re-rendered after the browser crashed (or was closed for memory) under it.
    max_browser_retries: int = 1
    #: After this many renders in a row fail because the browser cannot start (not installed, dies at
    #: launch), the crawl stops using it: later pages that need one keep their static HTML and the flag
    #: ``render_failed:browser_disabled``; after as many failures of a browser that did run, it is paused
    #: for one ``max_render_ms`` (``render_failed:browser_paused``) and tried again. 5: one bad page does
    #: not switch it off; a missing browser costs five quick attempts, not one per JS page.
    max_consecutive_failures: int = 5
    #: Resource types the browser never downloads (Playwright's resource_type names).
    blocked_resource_types: frozenset = frozenset(("image", "media", "font"))
    #: Extra hosts the browser's sub-requests may reach besides the page's own host (e.g. a CDN).
    subrequest_hosts: frozenset = frozenset()

    def __post_init__(self) -> None:
        if self.mode not in RENDER_MODES:
            raise ValueError(f"mode must be one of {', '.join(RENDER_MODES)}, got {self.mode!r}")
        if self.browser_path and not (os.path.isfile(self.browser_path) and os.access(self.browser_path, os.X_OK)):
            # a mistyped path crawled the whole site statically and said so only at the end (exit 5)
            raise ValueError(f"browser_path {self.browser_path!r} is not an executable file (leave it empty for "
                             f"{default_browser_path() or 'Playwright’s own browser'})")
        compiled = []
        for entry in self.patterns:
            if not isinstance(entry, (list, tuple)) or len(entry) != 2:
                raise ValueError(f"patterns: each entry must be [regex, mode], got {entry!r}")
            regex, mode = entry
            if mode not in RENDER_MODES:
                raise ValueError(f"patterns: mode must be one of {', '.join(RENDER_MODES)}, got {mode!r}")
            try:
                compiled.append((re.compile(str(regex)), str(mode)))
            except re.error as exc:
                raise ValueError(f"patterns: bad regex {regex!r}: {exc}") from None
        object.__setattr__(self, "patterns", tuple((r, m) for (r, m) in (tuple(e) for e in self.patterns)))
        object.__setattr__(self, "_compiled", tuple(compiled))
        for name in ("navigation_timeout_ms", "max_wait_ms", "max_render_ms", "max_rendered_bytes",
                     "max_consecutive_failures", "max_pages_per_context",
                     "context_max_pages", "memory_check_ms", "max_js_heap_mib", "settle_idle_ms"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0")
        if self.settle_quiet_ms < 0 or self.min_text_growth_chars < 0 or self.max_browser_retries < 0:
            raise ValueError("settle_quiet_ms, min_text_growth_chars and max_browser_retries must be >= 0")
        if self.max_contexts < 2:
            raise ValueError("max_contexts must be >= 2 (a context is retired once the next one exists)")
        if self.max_browser_memory_mib < 0:
            raise ValueError("max_browser_memory_mib must be >= 0 (0 = no check)")

    @property
    def executable_path(self) -> str:
        return self.browser_path or default_browser_path()

    def mode_for(self, url: str) -> str:
        """The mode for ``url``: the first matching pattern's, else ``mode``."""
        for regex, mode in self._compiled:  # type: ignore[attr-defined]
            if regex.search(url):
                return mode
        return self.mode

    @property
    def may_render(self) -> bool:
        """Whether any URL can go to a browser (False: the browser is never configured)."""
        return self.mode != "never" or any(mode != "never" for _, mode in self.patterns)
