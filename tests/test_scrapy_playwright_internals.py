"""Guards on the scrapy-playwright behaviour boilerstrip's browser relies on (docs/scrapy-internals.md, "scrapy-playwright").

boilerstrip overrides no private scrapy-playwright method. It subclasses the download handler through Scrapy's
public download-handler interface (``download_request``, ``close``) and the default browser provider through
the public ``PLAYWRIGHT_BROWSER_PROVIDER`` interface. What those subclasses assume about the upstream code
below them is pinned here: when scrapy-playwright changes one of these methods, a test fails and the
assumption written next to it must be checked again (then the hash updated).
"""

from __future__ import annotations

import hashlib
import inspect

import pytest
from scrapy_playwright.handler import Config, ScrapyPlaywrightDownloadHandler
from scrapy_playwright.provider import PlaywrightBrowserProvider

from boilerstrip.downloadhandlers.browser import BrowserDownloadHandler, LazyBrowserProvider

#: upstream method -> (sha256 of its source, first 16 hex digits; what boilerstrip assumes about it)
PINNED = {
    PlaywrightBrowserProvider.start: (
        "59115cfdbd829e88",
        "start() only starts Playwright and sets self.browser_type: LazyBrowserProvider defers it to the first launch",
    ),
    PlaywrightBrowserProvider.launch_browser: (
        "a33f7e1953b5f1a9",
        "launch_browser() reads self.config.launch_options at each launch: the handler adds the address-checking "
        "proxy to that Config before the first launch",
    ),
    PlaywrightBrowserProvider.launch_persistent_context: (
        "c6d5fec46bb9508b",
        "needs start() first, as launch_browser()",
    ),
    ScrapyPlaywrightDownloadHandler.download_request: (
        "e27247948cc514b5",
        "meta['playwright'] requests are rendered, the rest go to Scrapy's HTTP handler: the subclass wraps it",
    ),
    ScrapyPlaywrightDownloadHandler._launch: (
        "8bea77949f035a3a",
        "at engine start it only calls provider.start() (no browser) unless PLAYWRIGHT_CONTEXTS is set",
    ),
    ScrapyPlaywrightDownloadHandler._browser_disconnected_callback: (
        "91593df2c07eee5d",
        "after a disconnect the next page launches a fresh browser (PLAYWRIGHT_RESTART_DISCONNECTED_BROWSER)",
    ),
    ScrapyPlaywrightDownloadHandler._make_close_page_callback: (
        "d15f73bd0f72a96e",
        "a page closed after its context wrapper was dropped (browser crash) does not release the wrapper's "
        "semaphore, so requests queued on it would wait forever: the handler fails renders under way on a "
        "disconnect instead (remove that when upstream fixes it)",
    ),
}


def _digest(obj: object) -> str:
    return hashlib.sha256(inspect.getsource(obj).encode()).hexdigest()[:16]


@pytest.mark.parametrize("method", list(PINNED), ids=lambda m: m.__qualname__)
def test_upstream_method_is_the_one_we_read(method) -> None:
    pinned, assumption = PINNED[method]
    assert _digest(method) == pinned, (
        f"scrapy-playwright changed {method.__qualname__}: check that {assumption!r} still holds, "
        f"then update the hash in {__file__} and docs/scrapy-internals.md"
    )


def test_no_private_scrapy_playwright_method_is_overridden() -> None:
    for ours, theirs in ((BrowserDownloadHandler, ScrapyPlaywrightDownloadHandler),
                         (LazyBrowserProvider, PlaywrightBrowserProvider)):
        overridden = [name for name in vars(ours) if hasattr(theirs, name) and not name.startswith("__")
                      and callable(getattr(theirs, name))]
        private = [name for name in overridden if name.startswith("_")]
        assert not private, f"{ours.__name__} overrides private {theirs.__name__} methods: {private}"


def test_config_fields_the_handler_reads_exist() -> None:
    fields = set(Config.__dataclass_fields__)
    assert {"launch_options", "cdp_url", "connect_url", "max_contexts", "max_pages_per_context"} <= fields
