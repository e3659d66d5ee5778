"""RenderWhenNeededMiddleware and RenderAddon glue, built with get_crawler and hand-made requests/responses
(no browser: what goes to scrapy-playwright is asserted on the request it would receive)."""

from __future__ import annotations

import os

import pytest
from playwright._impl._errors import TargetClosedError
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response, TextResponse
from scrapy.utils.test import get_crawler
from twisted.internet.error import TimeoutError as TxTimeoutError

from scrapy.utils.reactor import install_reactor, is_reactor_installed

from boilerstrip.downloadermiddlewares.render import RenderWhenNeededMiddleware

# scrapy-playwright needs the asyncio reactor (the project's TWISTED_REACTOR); without an installed reactor
# get_crawler would build a reactorless crawler whose http handlers are pinned to aiohttp.
if not is_reactor_installed():
    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")

ADDON = {"boilerstrip.rendering_addon.RenderAddon": 10}
HANDLER = "boilerstrip.downloadhandlers.browser.BrowserDownloadHandler"
SHELL = (b'<html><head><script src="/static/js/main.js"></script></head><body><noscript>You need to enable '
         b'JavaScript to run this app.</noscript><div id="root"></div></body></html>')
ARTICLE = (b"<html><head><script src='/js/site.js'></script></head><body><main><h1>Notes</h1><p>"
           + b"The harbour authority measured the flood marks on the church wall after the storms. " * 12
           + b"</p></main></body></html>")


def crawler_for(settings: dict | None = None):
    return get_crawler(settings_dict={"ADDONS": ADDON, **(settings or {})})


def make(settings: dict | None = None) -> tuple:
    crawler = crawler_for(settings)
    return crawler, RenderWhenNeededMiddleware.from_crawler(crawler)


def html(request: Request, body: bytes, status: int = 200, ctype: bytes = b"text/html; charset=utf-8") -> Response:
    return HtmlResponse(request.url, status=status, body=body, headers={"Content-Type": ctype}, request=request)


def stat(crawler, key: str):
    return crawler.stats.get_value(f"boilerstrip/render/{key}")


# -- the add-on --------------------------------------------------------------------------------------


def test_addon_configures_the_browser_when_rendering_is_possible() -> None:
    crawler = crawler_for({"PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": 2})
    s = crawler.settings
    assert s.getwithbase("DOWNLOAD_HANDLERS")["http"] == HANDLER
    assert s.getwithbase("DOWNLOAD_HANDLERS")["https"] == HANDLER
    launch = s.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")
    assert launch["headless"] is True and "--disable-background-networking" in launch["args"]
    if os.path.exists("/usr/bin/chromium"):
        assert launch["executable_path"] == "/usr/bin/chromium"
    assert s.getint("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT") == 2  # the project's value beats the add-on's
    assert s.getint("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT") == 15_000


def test_configured_browser_path_is_used(tmp_path) -> None:
    browser = tmp_path / "chrome"
    browser.write_text("#!/bin/sh\n")
    browser.chmod(0o755)
    crawler = crawler_for({"BOILERSTRIP_RENDER_BROWSER_PATH": str(browser)})
    assert crawler.settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")["executable_path"] == str(browser)


def test_a_browser_path_that_is_no_executable_is_a_bad_setting(tmp_path) -> None:
    # it crawled the whole site statically and said so only at the end (exit 5)
    from conftest import run_crawl

    proc, _ = run_crawl("http://127.0.0.1:9/", out=tmp_path / "o.jsonl",
                        settings={"BOILERSTRIP_RENDER_BROWSER_PATH": "/nonexistent/chromium"})
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "browser_path '/nonexistent/chromium' is not an executable file" in proc.stderr
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("settings", [{"BOILERSTRIP_RENDER_MODE": "never"},
                                      {"BOILERSTRIP_RENDER_MODE": "never", "BOILERSTRIP_RENDER_PATTERNS": "[]"}])
def test_no_browser_at_all_when_rendering_is_off(settings: dict) -> None:
    crawler = crawler_for(settings)
    assert crawler.settings.getwithbase("DOWNLOAD_HANDLERS").get("http") != HANDLER
    assert crawler.settings.get("PLAYWRIGHT_LAUNCH_OPTIONS") is None
    with pytest.raises(NotConfigured):
        RenderWhenNeededMiddleware.from_crawler(crawler)


def test_never_mode_with_a_rendering_pattern_still_configures_the_browser() -> None:
    crawler, mw = make({"BOILERSTRIP_RENDER_MODE": "never", "BOILERSTRIP_RENDER_PATTERNS": '[["/app/", "always"]]'})
    assert crawler.settings.getwithbase("DOWNLOAD_HANDLERS")["http"] == HANDLER
    req = Request("http://s.test/app/home")
    mw.process_request(req)
    assert req.meta["playwright"] and req.meta["boilerstrip_render_reason"] == "pattern_always"
    other = Request("http://s.test/blog/")
    mw.process_request(other)
    assert "playwright" not in other.meta
    assert mw.process_response(other, html(other, SHELL)).__class__ is HtmlResponse  # never: not rendered


def test_a_users_own_http_handler_wins_and_rendering_steps_aside() -> None:
    crawler = get_crawler(settings_dict={"ADDONS": ADDON, "DOWNLOAD_HANDLERS": {"http": "my.Handler"}})
    assert crawler.settings.getwithbase("DOWNLOAD_HANDLERS")["http"] == "my.Handler"
    assert crawler.settings.getwithbase("DOWNLOAD_HANDLERS")["https"] == HANDLER


def test_middleware_refuses_to_run_without_the_browser_handler() -> None:
    crawler = get_crawler(settings_dict={})  # no add-on: scrapy's own handlers
    with pytest.raises(NotConfigured, match="download handler"):
        RenderWhenNeededMiddleware.from_crawler(crawler)


# -- static first, the browser when needed -------------------------------------------------------------


def test_shell_is_reissued_once_through_the_browser_with_its_reason() -> None:
    crawler, mw = make()
    req = Request("http://s.test/p1", meta={"depth": 2})
    assert mw.process_request(req) is None and "playwright" not in req.meta
    out = mw.process_response(req, html(req, SHELL))
    assert isinstance(out, Request) and out.url == req.url and out.dont_filter
    m = out.meta
    assert m["playwright"] is True and m["boilerstrip_render_reason"] == "empty_app_root"
    assert m["depth"] == 2 and m["boilerstrip_render_reissued"] is True
    assert m["playwright_page_goto_kwargs"] == {"wait_until": "domcontentloaded", "timeout": 15_000}
    assert m["playwright_context_kwargs"]["accept_downloads"] is False
    assert m["playwright_page_init_callback"] == "boilerstrip.downloadermiddlewares._browser_page.init_page"
    (settle,) = m["playwright_page_methods"]
    assert settle.kwargs["max_wait_ms"] == 15_000 and settle.kwargs["idle_ms"] == 3_000 and settle.kwargs["target_chars"] >= 100
    assert stat(crawler, "reason/empty_app_root") == 1 and stat(crawler, "checked") == 1
    # the rendered response comes back: it is kept, never re-issued a second time
    assert mw.process_request(out) is None
    rendered = HtmlResponse(out.url, body=ARTICLE, headers={"Content-Type": "text/html"}, request=out, flags=["playwright"])
    assert mw.process_response(out, rendered) is rendered
    assert stat(crawler, "rendered") == 1 and stat(crawler, "checked") == 1


def test_server_rendered_page_stays_static_with_its_verdict() -> None:
    crawler, mw = make()
    req = Request("http://s.test/a1")
    resp = html(req, ARTICLE)
    assert mw.process_response(req, resp) is resp
    assert req.meta["boilerstrip_render_verdict"] == "static_ok"
    assert stat(crawler, "static/static_ok") == 1 and stat(crawler, "reason/empty_app_root") is None


@pytest.mark.parametrize("status", [500, 503, 404, 429, 204])
def test_failed_static_fetch_is_never_a_reason_to_render(status: int) -> None:
    crawler, mw = make()
    req = Request("http://s.test/p1")
    resp = html(req, SHELL, status=status)
    assert mw.process_response(req, resp) is resp
    assert stat(crawler, "skipped/status") == 1


def test_static_timeout_is_not_rendered() -> None:
    crawler, mw = make()
    req = Request("http://s.test/p1")
    assert mw.process_exception(req, TxTimeoutError()) is None
    assert stat(crawler, "reason/empty_app_root") is None


@pytest.mark.parametrize("ctype", [b"application/pdf", b"application/json", b"text/plain"])
def test_non_html_is_not_judged(ctype: bytes) -> None:
    crawler, mw = make()
    req = Request("http://s.test/f")
    resp = TextResponse(req.url, body=SHELL, headers={"Content-Type": ctype}, request=req)
    assert mw.process_response(req, resp) is resp
    assert stat(crawler, "skipped/not_html") == 1


def test_robots_and_sitemap_requests_are_left_alone() -> None:
    crawler, mw = make({"BOILERSTRIP_RENDER_MODE": "always"})
    req = Request("http://s.test/robots.txt", meta={"boilerstrip_kind": "robots"})
    mw.process_request(req)
    assert "playwright" not in req.meta
    assert mw.process_response(req, html(req, SHELL)).__class__ is HtmlResponse


def test_meta_beats_settings() -> None:
    crawler, mw = make()
    dont = Request("http://s.test/p1", meta={"boilerstrip_dont_render": True})
    resp = html(dont, SHELL)
    assert mw.process_response(dont, resp) is resp
    forced = Request("http://s.test/a1", meta={"boilerstrip_render": True})
    mw.process_request(forced)
    assert forced.meta["playwright"] and forced.meta["boilerstrip_render_reason"] == "forced"
    crawler2, always = make({"BOILERSTRIP_RENDER_MODE": "always"})
    opt_out = Request("http://s.test/p2", meta={"boilerstrip_render": False})
    always.process_request(opt_out)
    assert "playwright" not in opt_out.meta


def test_always_mode_goes_straight_to_the_browser() -> None:
    crawler, mw = make({"BOILERSTRIP_RENDER_MODE": "always"})
    req = Request("http://s.test/a1")
    assert mw.process_request(req) is None  # set in place: not re-scheduled
    assert req.meta["playwright"] and req.meta["boilerstrip_render_reason"] == "mode_always"
    assert stat(crawler, "reason/mode_always") == 1


def test_learned_host_goes_straight_to_the_browser_with_periodic_rechecks() -> None:
    crawler, mw = make({"BOILERSTRIP_RENDER_PARAMS": {"learn_min_pages": 3, "learn_recheck_every": 3}})
    for i in range(3):
        req = Request(f"http://spa.test/p{i}")
        assert mw.process_request(req) is None and "playwright" not in req.meta
        assert isinstance(mw.process_response(req, html(req, SHELL)), Request)
    routes = []
    for i in range(3, 9):
        req = Request(f"http://spa.test/p{i}")
        mw.process_request(req)
        routes.append(req.meta.get("boilerstrip_render_reason", "static"))
        if "playwright" not in req.meta:  # the re-check: judged static like any page
            mw.process_response(req, html(req, SHELL))
    assert routes == ["host_learned", "host_learned", "static", "host_learned", "host_learned", "static"]
    assert stat(crawler, "reason/host_learned") == 4 and stat(crawler, "learn/rechecks") == 2
    other = Request("http://static.test/a")
    mw.process_request(other)
    assert "playwright" not in other.meta


def test_rendered_page_over_the_size_cap_is_cut_and_flagged() -> None:
    crawler, mw = make({"BOILERSTRIP_RENDER_PARAMS": {"max_rendered_bytes": 100}})
    req = Request("http://s.test/p1", meta={"playwright": True, "boilerstrip_render_reason": "empty_app_root",
                                             "boilerstrip_render_blocked": {"resource_type": 3}})
    out = mw.process_response(req, HtmlResponse(req.url, body=ARTICLE, request=req, flags=["playwright"]))
    assert len(out.body) == 100 and req.meta["boilerstrip_render_truncated"] is True
    assert stat(crawler, "truncated") == 1 and stat(crawler, "subrequests_blocked/resource_type") == 3


def test_browser_death_is_retried_once_then_once_more_after_the_restart_then_the_page_falls_back_to_static() -> None:
    import asyncio

    crawler, mw = make()
    req = Request("http://s.test/p1")
    rendered_req = mw.process_response(req, html(req, SHELL))
    retry = mw.process_exception(rendered_req, TargetClosedError())
    assert isinstance(retry, Request) and retry.meta["playwright"] and retry.meta["boilerstrip_render_retries"] == 1
    assert retry.meta["boilerstrip_render_reason"] == "empty_app_root"
    # the browser died again under the retry: the page fell back while it was down, and gets one more render
    # once it is back (issue 30 item 12)
    again = asyncio.run(mw.process_exception(retry, TargetClosedError()))
    assert isinstance(again, Request) and again.meta["playwright"] and again.meta["boilerstrip_render_after_restart"]
    fallback = mw.process_exception(again, TargetClosedError())
    assert isinstance(fallback, Request) and "playwright" not in fallback.meta
    assert fallback.meta["boilerstrip_render_failed"] == "browser_crashed"
    assert not any(k.startswith("playwright") for k in fallback.meta)
    # the static fallback is not judged again (no render loop)
    assert mw.process_request(fallback) is None and "playwright" not in fallback.meta
    resp = html(fallback, SHELL)
    assert mw.process_response(fallback, resp) is resp
    assert stat(crawler, "retried/browser_crashed") == 1 and stat(crawler, "failed/browser_crashed") == 1


def test_users_own_playwright_request_gets_the_same_browser_rules() -> None:
    crawler, mw = make()
    req = Request("http://s.test/x", meta={"playwright": True})
    mw.process_request(req)
    assert req.meta["playwright_page_init_callback"].endswith("init_page")
    assert req.meta["boilerstrip_render_reason"] == "requested"


def test_browser_that_keeps_failing_is_switched_off_with_the_reason_on_each_page() -> None:
    crawler, mw = make({"BOILERSTRIP_RENDER_PARAMS": {"max_consecutive_failures": 3}})
    missing = Exception("BrowserType.launch: Executable doesn't exist at /opt/chrome/chrome")

    def fail_one(i: int) -> Request:
        req = Request(f"http://s.test/p{i}")
        rendered = mw.process_response(req, html(req, SHELL))
        assert isinstance(rendered, Request) and rendered.meta["playwright"]
        fallback = mw.process_exception(rendered, missing)
        assert fallback.meta["boilerstrip_render_failed"] == "browser_unavailable"
        return fallback

    fail_one(0)
    fail_one(1)
    ok = Request("http://s.test/ok", meta={"playwright": True, "boilerstrip_render_reason": "empty_app_root"})
    mw.process_response(ok, HtmlResponse(ok.url, body=ARTICLE, request=ok, flags=["playwright"]))  # a success resets
    for i in range(2, 5):
        fail_one(i)
    assert mw.disabled and stat(crawler, "disabled") == 1
    later = Request("http://s.test/p9")
    resp = html(later, SHELL)
    assert mw.process_response(later, resp) is resp  # not sent to the browser any more
    assert later.meta["boilerstrip_render_failed"] == "browser_disabled"
    assert stat(crawler, "failed/browser_unavailable") == 5 and stat(crawler, "failed/browser_disabled") == 1


def test_a_render_that_navigated_off_the_crawl_or_was_refused_falls_back_to_static() -> None:
    from scrapy_playwright.page import PageMethod

    crawler, mw = make()
    mw.crawl_scope = lambda: (["s.test"], "host")
    for final, settle, reason in (
        ("http://127.0.0.1:9/secret", {"outcome": "error"}, "navigated_offsite"),
        ("http://s.test/p1", {"outcome": "error", "navigation_refused": "loopback"}, "navigation_refused"),
    ):
        method = PageMethod("settle")
        method.result = settle
        req = Request("http://s.test/p1", meta={"playwright": True, "boilerstrip_render_reason": "empty_app_root",
                                                 "playwright_page_methods": [method]})
        out = mw.process_response(req, HtmlResponse(final, body=ARTICLE, request=req, flags=["playwright"]))
        assert isinstance(out, Request) and out.url == req.url and "playwright" not in out.meta
        assert out.meta["boilerstrip_render_failed"] == reason
        assert stat(crawler, f"failed/{reason}") == 1
    # a same-site navigation is the page's own business
    method = PageMethod("settle")
    method.result = {"outcome": "settled"}
    req = Request("http://s.test/p1", meta={"playwright": True, "playwright_page_methods": [method]})
    out = mw.process_response(req, HtmlResponse("http://s.test/p2", body=ARTICLE, request=req, flags=["playwright"]))
    assert isinstance(out, Response) and req.meta["boilerstrip_render_settle"]["outcome"] == "settled"


def test_addon_bounds_contexts_and_the_js_heap_and_starts_the_browser_lazily() -> None:
    s = crawler_for({"BOILERSTRIP_RENDER_PARAMS": {"max_js_heap_mib": 256}}).settings
    assert s.getint("PLAYWRIGHT_MAX_CONTEXTS") == 2 and s.getint("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT") == 4
    assert "--js-flags=--max-old-space-size=256" in s.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")["args"]
    assert s.get("PLAYWRIGHT_BROWSER_PROVIDER") == "boilerstrip.downloadhandlers.browser.LazyBrowserProvider"
    with pytest.raises(Exception, match="BOILERSTRIP_RENDER_PARAMS field max_contexts"):
        crawler_for({"BOILERSTRIP_RENDER_PARAMS": {"max_contexts": 1}})


def test_a_render_asked_for_while_a_stalled_browser_is_killed_waits_for_its_disconnect() -> None:
    """The render whose timeout found the browser stalled fails at once, and its page is sent again at once
    (rendered once more after the restart): it must not start on the killed browser, whose disconnect comes
    a moment later (its new tab would hang until then, and fail it a second time: the page went static,
    a flaky end of test_hostile_round3's stalled-browser crawl). It waits for that disconnect, bounded."""
    import asyncio

    import boilerstrip.downloadhandlers.browser as browser_module
    from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

    crawler = crawler_for()
    handler = browser_module.BrowserDownloadHandler.from_crawler(crawler)
    started: list[float] = []

    class Stalled:  # a browser that answers no CDP question (its processes are stopped)
        class browser_type:
            name = "chromium"

        async def new_browser_cdp_session(self):  # noqa: ANN201
            await asyncio.sleep(3600)

    async def render(self, request):  # noqa: ANN001, ANN202 - scrapy-playwright's download, recorded
        started.append(asyncio.get_running_loop().time())
        return "rendered"

    async def scenario() -> tuple[float, float]:
        stalled = Stalled()
        handler._browsers[id(stalled)] = stalled
        original = (browser_module._kill_browser_processes, browser_module._STALL,
                    ScrapyPlaywrightDownloadHandler.download_request)
        browser_module._kill_browser_processes = lambda: 1
        browser_module._STALL = browser_module.StallParams(probe_timeout_s=0.2)
        ScrapyPlaywrightDownloadHandler.download_request = render
        try:
            assert await handler._restart_if_stalled() is True  # killed: its disconnect is still to come
            loop = asyncio.get_running_loop()
            killed = loop.time()
            loop.call_later(0.3, handler._disconnected, stalled)  # the disconnect arrives a moment later
            request = Request("http://s.test/p", meta={"playwright": True})
            assert await handler.download_request(request) == "rendered"
            # with no kill under way, a render starts at once
            again = loop.time()
            assert await handler.download_request(Request("http://s.test/q", meta={"playwright": True})) == "rendered"
            return started[0] - killed, started[1] - again
        finally:
            (browser_module._kill_browser_processes, browser_module._STALL,
             ScrapyPlaywrightDownloadHandler.download_request) = original

    waited, at_once = asyncio.run(scenario())
    assert 0.3 <= waited < 0.4 + 20 * browser_module._POLL_S, waited  # after the disconnect, not before
    assert at_once < 10 * browser_module._POLL_S, at_once
    assert crawler.stats.get_value("boilerstrip/render/browser_closed/browser_stalled") == 1
