"""Pure parts of rendering besides the decision: per-host learning, sub-request scope, modes and patterns."""

from __future__ import annotations

import pytest

from boilerstrip.config import ConfigError, params_from_settings
from boilerstrip.rendering import BrowserParams, HostLearnParams, HostRenderLearner, render_flags, subrequest_block_reason

# -- per-host learning ---------------------------------------------------------------------------------


def test_host_is_learned_after_enough_pages_mostly_needing_the_browser() -> None:
    learner = HostRenderLearner(HostLearnParams(learn_min_pages=5, learn_min_share=0.8, learn_recheck_every=4))
    for _ in range(4):
        assert learner.route("spa.test") == "static"
        learner.record("spa.test", True)
    assert learner.route("spa.test") == "static"  # 4 verdicts < learn_min_pages
    learner.record("spa.test", True)
    routes = [learner.route("spa.test") for _ in range(8)]
    assert routes == ["browser", "browser", "browser", "recheck"] * 2
    assert learner.route("other.test") == "static"  # learning is per host


def test_half_js_host_is_never_learned() -> None:
    learner = HostRenderLearner(HostLearnParams(learn_min_pages=4))
    for i in range(40):
        learner.record("mixed.test", i % 2 == 0)
        assert learner.route("mixed.test") == "static"


def test_rechecks_unlearn_a_host_whose_pages_became_static() -> None:
    params = HostLearnParams(learn_min_pages=5, learn_window_pages=5, learn_min_share=0.8, learn_recheck_every=2)
    learner = HostRenderLearner(params)
    for _ in range(5):
        learner.record("h.test", True)
    assert learner.is_learned("h.test")
    for _ in range(10):
        if learner.route("h.test") == "recheck":
            learner.record("h.test", False)  # the static re-check found the page fine
    assert not learner.is_learned("h.test")


def test_learning_can_be_switched_off_and_memory_is_bounded() -> None:
    off = HostRenderLearner(HostLearnParams(learn_enabled=False, learn_min_pages=1))
    off.record("a.test", True)
    assert off.route("a.test") == "static"
    small = HostRenderLearner(HostLearnParams(learn_max_hosts=3))
    for i in range(10):
        small.record(f"h{i}.test", True)
    assert len(small.snapshot()) == 3


def test_learn_params_are_validated() -> None:
    with pytest.raises(ConfigError, match="BOILERSTRIP_RENDER_"):
        params_from_settings({"BOILERSTRIP_RENDER_PARAMS": '{"learn_min_share": 1.5}'}, "render", HostLearnParams)


# -- the browser's sub-requests ------------------------------------------------------------------------

PAGE = "http://127.0.0.1:8000/posts/p1.html"


@pytest.mark.parametrize(
    "url,rtype,reason",
    [
        ("http://127.0.0.1:8000/js/app.js", "script", None),
        ("http://127.0.0.1:8000/api/posts/1.json", "fetch", None),
        ("http://127.0.0.1:8000/img/hero.jpg", "image", "resource_type"),
        ("http://127.0.0.1:8000/fonts/a.woff2", "font", "resource_type"),
        ("http://127.0.0.1:8000/v.mp4", "media", "resource_type"),
        ("http://127.0.0.1:9000/track.js", "script", "private_address"),  # same host, other port
        ("http://10.0.0.5/internal", "fetch", "private_address"),  # a private address the page is not on
        ("http://[::1]:8000/x", "fetch", "private_address"),
        ("http://93.184.215.14/x", "fetch", "offsite"),
        ("https://www.googletagmanager.com/gtag/js", "script", "offsite"),
        ("ftp://127.0.0.1:8000/x", "other", "scheme"),
        ("ws://127.0.0.1:8000/socket", "websocket", "scheme"),
        ("data:text/plain,hello", "fetch", None),
        ("https://127.0.0.1/js/app.js", "script", "private_address"),  # https: default port 443, not 8000
    ],
)
def test_subrequest_scope(url: str, rtype: str, reason: str | None) -> None:
    assert subrequest_block_reason(url, resource_type=rtype, page_url=PAGE) == reason


def test_subrequest_extra_hosts_allow_a_cdn_and_its_subdomains() -> None:
    extra = frozenset({"cdn.example"})
    assert subrequest_block_reason("https://cdn.example/a.js", resource_type="script", page_url=PAGE, extra_hosts=extra) is None
    assert subrequest_block_reason("https://eu.cdn.example/a.js", resource_type="script", page_url=PAGE, extra_hosts=extra) is None
    assert subrequest_block_reason("https://evilcdn.example/a.js", resource_type="script", page_url=PAGE, extra_hosts=extra) == "offsite"


def test_subrequests_may_reach_the_crawls_own_sites_but_no_other_private_address() -> None:
    page = "https://www.example.org/post"
    crawl = lambda url: url.split("/")[2].endswith("example.org")  # noqa: E731 - the crawl's scope test
    assert subrequest_block_reason("https://api.example.org/v1", resource_type="fetch", page_url=page,
                                   in_crawl_scope=crawl) is None
    assert subrequest_block_reason("https://tracker.example.net/t.js", resource_type="script", page_url=page,
                                   in_crawl_scope=crawl) == "offsite"
    assert subrequest_block_reason("http://192.168.1.1/", resource_type="fetch", page_url=page,
                                   in_crawl_scope=crawl) == "private_address"
    # a loopback start URL is one of the crawl's sites: its pages' browser may reach it
    assert subrequest_block_reason("http://127.0.0.1:9000/api", resource_type="fetch", page_url=page,
                                   in_crawl_scope=lambda url: "127.0.0.1:9000" in url) is None


# -- modes, patterns, settings -------------------------------------------------------------------------


def test_patterns_override_the_mode_first_match_wins() -> None:
    params = params_from_settings(
        {"BOILERSTRIP_RENDER_MODE": "auto",
         "BOILERSTRIP_RENDER_PATTERNS": '[["/app/", "always"], ["\\\\.pdf$", "never"], ["/app/static", "never"]]'},
        "render", BrowserParams)
    assert params.mode_for("https://s.test/app/static/x") == "always"
    assert params.mode_for("https://s.test/docs/a.pdf") == "never"
    assert params.mode_for("https://s.test/blog/") == "auto"


@pytest.mark.parametrize(
    "settings,match",
    [
        ({"BOILERSTRIP_RENDER_MODE": "sometimes"}, "mode must be one of"),
        ({"BOILERSTRIP_RENDER_PATTERNS": '[["(", "always"]]'}, "bad regex"),
        ({"BOILERSTRIP_RENDER_PATTERNS": '[["/a/", "maybe"]]'}, "mode must be one of"),
        ({"BOILERSTRIP_RENDER_PATTERNS": '["/a/"]'}, r"\[regex, mode\]"),
        ({"BOILERSTRIP_RENDER_PATTERNS": "[not json"}, "BOILERSTRIP_RENDER_PATTERNS"),
        ({"BOILERSTRIP_RENDER_PARAMS": '{"max_wait_ms": "soon"}'}, "BOILERSTRIP_RENDER_PARAMS field max_wait_ms"),
        ({"BOILERSTRIP_RENDER_PARAMS": '{"max_wait": 1}'}, "'max_wait' is not a field of BrowserParams"),
        ({"BOILERSTRIP_RENDER_MAX_WAIT_MS": "9000"}, "BOILERSTRIP_RENDER_MAX_WAIT_MS is not a setting"),
    ],
)
def test_bad_settings_fail_with_the_setting_named(settings: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        params_from_settings(settings, "render", BrowserParams)


def test_never_mode_without_rendering_patterns_may_not_render() -> None:
    assert not BrowserParams(mode="never").may_render
    assert BrowserParams(mode="never", patterns=(("/app/", "always"),)).may_render
    assert BrowserParams().may_render


def test_render_flags_from_meta() -> None:
    assert render_flags({}) == []
    meta = {"boilerstrip_render_failed": "render_timeout", "boilerstrip_render_truncated": True,
            "boilerstrip_render_settle": {"outcome": "timeout"}}
    assert render_flags(meta) == ["render_failed:render_timeout", "render_truncated", "render_wait:timeout"]
    meta = {"boilerstrip_render_settle": {"outcome": "idle", "surrogates_repaired": 2}}
    assert render_flags(meta) == ["render_wait:idle", "render_repaired_surrogates"]
    assert render_flags({"boilerstrip_render_static_look": True}) == ["render_static_look"]


@pytest.mark.parametrize("url", ["http://2130706433/", "http://0x7f.1/", "http://127.1:8080/", "http://[::ffff:127.0.0.1]/",
                                 "http://100.64.0.1/", "http://169.254.169.254/latest/meta-data/"])
def test_subrequests_use_the_shared_address_rule_for_literals(url: str) -> None:
    # any spelling of a non-global address: the rule of boilerstrip.safety.addresses, not a weaker copy
    assert subrequest_block_reason(url, resource_type="fetch", page_url="https://example.org/") == "private_address"


def test_connect_refusal_checks_every_resolved_address_and_allows_start_origins() -> None:
    from boilerstrip.rendering.scope import PrivateAllowlist, connect_refusal

    allowed = PrivateAllowlist(entries=["10.0.0.5:9200", "db.local"], start_urls=["http://127.0.0.1:8000/", "http://intranet.test/"])
    assert connect_refusal("127.0.0.1", 8000, ["127.0.0.1"], allowed) is None  # a start URL's origin
    assert connect_refusal("127.0.0.1", 8001, ["127.0.0.1"], allowed) == "loopback"  # another port: refused
    assert connect_refusal("intranet.test", 80, ["10.1.1.1"], allowed) is None
    assert connect_refusal("10.0.0.5", 9200, ["10.0.0.5"], allowed) is None
    assert connect_refusal("db.local", 5432, ["192.168.0.2"], allowed) is None  # any port of a listed host
    assert connect_refusal("example.org", 443, ["93.184.215.14"], allowed) is None
    # a name with one private answer among public ones is refused (the connect could use either)
    assert connect_refusal("rebind.example", 443, ["93.184.215.14", "127.0.0.1"], allowed) == "loopback"
    assert connect_refusal("meta.example", 80, ["169.254.169.254"], allowed) == "link_local"
    assert connect_refusal("v6.example", 80, ["::ffff:10.0.0.1"], allowed) == "embedded_private"
    assert connect_refusal("nothing.example", 80, [], allowed) == "no_address"
