"""Configure scrapy-playwright, only when some page may be rendered.

Registered in ``ADDONS``. When ``BOILERSTRIP_RENDER_MODE`` (or a ``BOILERSTRIP_RENDER_PATTERNS`` entry) is
not ``never``, it makes scrapy-playwright (wrapped by
:class:`boilerstrip.downloadhandlers.browser.BrowserDownloadHandler`: started on first use, every connection
address-checked, renders bounded in time and memory) the http(s) download handler (non-browser requests still go through Scrapy's own HTTP client) and sets the browser's
``PLAYWRIGHT_*`` settings at ``addon`` priority, so a project, spider or ``-s`` value wins. A crawl with
``BOILERSTRIP_RENDER_MODE=never`` never starts Playwright at all.
"""

from __future__ import annotations

from typing import Any

from boilerstrip.config import params_from_settings
from boilerstrip.rendering import BrowserParams

__all__ = ["RenderAddon", "LAUNCH_ARGS"]

#: Chromium flags: we may run as root (no sandbox), headless without a GPU, and with none of Chromium's
#: own background traffic (updates, sync, QUIC probes): the only connections are the pages'.
LAUNCH_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--mute-audio",
)


class RenderAddon:
    PRIORITY = "addon"

    def update_settings(self, settings: Any) -> None:
        browser = params_from_settings(settings, "render", BrowserParams)
        if not browser.may_render:
            return
        handler = "boilerstrip.downloadhandlers.browser.BrowserDownloadHandler"
        handlers = settings["DOWNLOAD_HANDLERS"]
        if hasattr(handlers, "set"):  # a BaseSettings: set per scheme, so a user's own http handler wins
            for scheme in ("http", "https"):
                handlers.set(scheme, handler, priority=self.PRIORITY)
        else:
            settings.set("DOWNLOAD_HANDLERS", {**dict(handlers or {}), "http": handler, "https": handler},
                         priority=self.PRIORITY)
        args = [*LAUNCH_ARGS, f"--js-flags=--max-old-space-size={browser.max_js_heap_mib}"]
        launch: dict[str, Any] = {"headless": True, "args": args}
        if browser.executable_path:
            launch["executable_path"] = browser.executable_path
        values = {
            "PLAYWRIGHT_BROWSER_TYPE": "chromium",
            "PLAYWRIGHT_LAUNCH_OPTIONS": launch,
            "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": browser.navigation_timeout_ms,
            "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": browser.max_pages_per_context,
            "PLAYWRIGHT_MAX_CONTEXTS": browser.max_contexts,
            # started on the first render, not at engine start (a public scrapy-playwright interface)
            "PLAYWRIGHT_BROWSER_PROVIDER": "boilerstrip.downloadhandlers.browser.LazyBrowserProvider",
            "PLAYWRIGHT_RESTART_DISCONNECTED_BROWSER": True,
        }
        for name, value in values.items():
            settings.set(name, value, priority=self.PRIORITY)
