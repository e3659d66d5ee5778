"""The pure render decision on static strings: each signal both ways, and the false positives it must avoid."""

from __future__ import annotations

import pytest

from boilerstrip.extraction import main_text_chars
from boilerstrip.rendering import RENDER_REASONS, RenderParams, needs_rendering

PROSE = (
    "The harbour authority measured the flood marks on the church wall after the spring storms had passed. "
    "A retired schoolteacher catalogued a box of letters found under the floorboards before the market opened. "
    "The village choir celebrated the acoustics of the market hall for the first time in forty years. "
)
ARTICLE = "<article><h1>Flood marks</h1>" + "".join(f"<p>{PROSE}</p>" for _ in range(4)) + "</article>"
CHROME = (
    '<header><nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/archive">Archive</a> '
    '<a href="/contact">Contact</a></nav></header>'
    '<div class="cookie-banner">We use cookies to count visits and remember your preferences. Accept all.</div>'
)
FOOTER = "<footer><p>Tidewater Notes is written by volunteers on the north coast. Stories may be shared.</p></footer>"
APP = '<script src="/static/js/main.8f2a.js" defer></script>'
GA = (
    '<script async src="https://www.googletagmanager.com/gtag/js?id=G-X1"></script>'
    "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());"
    "gtag('config','G-X1');</script>"
)


def page(body: str, head: str = "") -> str:
    return f"<!doctype html><html><head><title>t</title>{head}</head><body>{body}</body></html>"


JSON_PROSE = '{"post": {"paragraphs": [' + ", ".join(f'"{PROSE} Part {i}."' for i in range(8)) + "]}}"

CASES = [
    # (id, html, needs, reason)
    ("cra_shell", page('<noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div>', APP),
     True, "empty_app_root"),
    ("cra_filled", page(f'<div id="root">{ARTICLE}</div>', APP), False, "static_ok"),
    ("vue_shell_with_chrome", page(CHROME + '<div id="app"></div>' + FOOTER, APP), True, "empty_app_root"),
    ("next_shell", page('<div id="__next"></div><script id="__NEXT_DATA__" type="application/json">{"props":{}}</script>', APP),
     True, "empty_app_root"),
    ("next_ssr_with_same_text_in_json", page(
        f'<div id="__next">{ARTICLE}</div><script id="__NEXT_DATA__" type="application/json">'
        '{"props":{"pageProps":{"body":"' + PROSE * 3 + '"}}}</script>', APP), False, "static_ok"),
    ("loading_shell", page(CHROME + '<div id="content"><p>Loading...</p></div>' + FOOTER, APP), True, "loading_shell"),
    ("spinner_shell", page('<main><div class="lds-spinner"></div></main>', APP), True, "loading_shell"),
    ("loader_by_id_shell", page('<main><div id="page-loader"></div><p>A short note.</p></main>', APP), True,
     "loading_shell"),
    # python-celery-doc: a short API page whose entry is anchored by its dotted name (...AppLoader); the
    # extractor's main text is under the shell bound, and the id's "loader" made it a spinner (rendered twice)
    ("api_entry_anchored_by_a_loaders_name", page(
        '<main><h1>pkg.loaders.app</h1><p>The default loader used with custom app instances.</p><dl>'
        '<dt id="pkg.loaders.app.AppLoader">class pkg.loaders.app.AppLoader(app, **kwargs)</dt>'
        "<dd>Default loader used when an app is specified.</dd></dl></main>", APP), False, "static_ok"),
    ("article_mentioning_loading", page("<main><p>Loading the ferry took the crew all night. " + PROSE * 3 + "</p></main>", APP),
     False, "static_ok"),
    ("noscript_notice_shell", page(CHROME + "<noscript>Please enable JavaScript to read this story.</noscript><main></main>", APP),
     True, "noscript_notice"),
    ("visible_js_required_notice", page("<main><p>This site requires JavaScript.</p></main>", APP), True, "noscript_notice"),
    ("blog_with_disqus_notice", page(
        ARTICLE + '<div id="disqus_thread"></div><noscript>Please enable JavaScript to view the comments powered by '
        "Disqus.</noscript>", GA + '<script src="https://example.disqus.com/embed.js"></script>'), False, "static_ok"),
    ("hydration_markers_no_text", page(
        '<div class="shell"><svg><path d="M0 0"/></svg></div>',
        APP + "<script>window.__INITIAL_STATE__ = {};</script>"), True, "hydration_without_text"),
    ("angular_ng_version_no_text", page('<my-app ng-version="17.3.1"><div class="x"></div></my-app>', APP),
     True, "hydration_without_text"),
    ("json_only_content_with_teaser", page(
        "<main><h2>Flood marks</h2><p>" + PROSE[:200] + "</p></main>",
        APP + f"<script>window.__APP_STATE__ = {JSON_PROSE};</script>"), True, "json_only_content"),
    ("ssr_article_with_large_json_state", page(
        ARTICLE, APP + f"<script>window.__PRELOADED_STATE__ = {JSON_PROSE};</script>"), False, "static_ok"),
    ("ld_json_article_body_equal_to_text", page(
        ARTICLE, GA + '<script type="application/ld+json">{"@type":"Article","articleBody":"' + PROSE * 4 + '"}</script>'),
     False, "static_ok"),
    ("little_text_with_app_bundle", page('<div class="page"><div class="c"></div></div>', APP), True,
     "little_text_with_scripts"),
    ("short_static_page_with_only_analytics", page("<main><p>Call us on 0123 456 789.</p></main>", GA), False,
     "no_scripts"),
    ("empty_root_without_any_script", page('<div id="root"></div>'), False, "no_scripts"),
    ("plain_article_with_analytics_and_site_js", page(CHROME + ARTICLE + FOOTER, GA + '<script src="/js/site.js"></script>'),
     False, "static_ok"),
    ("short_page_with_headline_and_site_js", page(
        CHROME + "<main><h1>Committee notes</h1><p>Notes from the meeting, for members only.</p></main>" + FOOTER,
        '<script src="/static/site.js"></script>'), False, "static_ok"),
    ("meta_refresh_redirect_page", page('<p>Redirecting to <a href="/new">/new</a>.</p>', 
        '<meta http-equiv="refresh" content="0; URL=/new">' + APP), False, "meta_refresh"),
    ("spinner_in_hidden_search_popup", page(
        '<div id="search" class="hidden"><div class="spinner-wrapper"></div></div><main><h1>Align</h1>'
        "<p>The tracking issue for this feature is 82232.</p></main>", APP), False, "static_ok"),
    ("xhtml_with_xml_declaration", '<?xml version="1.0" encoding="UTF-8"?>' + page(ARTICLE, APP), False, "static_ok"),
    ("article_in_aspnet_form", page('<form id="aspnetForm">' + ARTICLE + "</form>", APP), False, "static_ok"),
]


@pytest.mark.parametrize("html,needs,reason", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_decision_table(html: str, needs: bool, reason: str) -> None:
    verdict = needs_rendering(html)
    assert (verdict.needs, verdict.reason) == (needs, reason), verdict.signals


def test_every_render_reason_is_exercised_by_the_table() -> None:
    reasons = {c[3] for c in CASES if c[2]}
    assert reasons == set(RENDER_REASONS)


@pytest.mark.parametrize(
    "html",
    ["", "   ", "\x00\x01\x02garbage", "<", "<?xml version='1.0' encoding='latin-1'?><html/>", "<html><body>",
     "<script>" * 5000, "<div>" * 20000 + "x"],
)
def test_arbitrary_input_never_raises(html: str) -> None:
    verdict = needs_rendering(html)
    assert isinstance(verdict.needs, bool) and verdict.reason


def test_empty_input_is_an_empty_document() -> None:
    assert needs_rendering("").reason == "empty_document"


def test_precomputed_text_length_replaces_the_own_measure() -> None:
    shell = page('<div id="root"></div>', APP)
    assert needs_rendering(shell).needs
    assert needs_rendering(shell, text_chars=5000).reason == "static_ok"
    article = page("<main>" + f"<p>{PROSE}</p>" * 4 + "</main>", APP)
    assert needs_rendering(article).reason == "static_ok"
    assert needs_rendering(article, text_chars=0).reason == "little_text_with_scripts"


def test_thresholds_are_params() -> None:
    intro = "<p>" + PROSE[:250] + "</p>"  # 250 chars of server-rendered content around an empty app root
    shell = page(CHROME + intro + '<div id="app"></div>' + FOOTER, APP)
    assert needs_rendering(shell).reason == "empty_app_root"
    # below the shell threshold of 400 chars it is a shell; with a threshold of 200 the same page is static
    assert needs_rendering(shell, params=RenderParams(max_shell_text_chars=200)).reason == "static_ok"


def test_input_size_limit_is_applied() -> None:
    huge = page('<div id="root"></div>' + "<!--" + "x" * 200 + "-->", APP) + "<p>" + "word " * 300_000 + "</p>"
    verdict = needs_rendering(huge, params=RenderParams(max_input_chars=1_000))
    assert verdict.signals.content_chars < 1_000


def test_verdict_reports_its_signals() -> None:
    verdict = needs_rendering(page(CHROME + '<div id="app"></div>' + FOOTER, GA + APP))
    s = verdict.signals
    assert s.app_scripts == 1 and s.tracker_scripts == 2 and s.empty_app_roots == 1
    assert s.content_chars < s.visible_chars  # chrome counted as visible, not as content


def _main_text_chars(html: str) -> int:
    return main_text_chars(html, "https://s.test/page")


MEGA_MENU = '<div class="menu">' + "".join(
    f'<div class="menu-col"><a href="/c{i}">Category {i} gardening tools and seeds</a>'
    f'<a href="/c{i}/more">More in category {i}</a></div>' for i in range(12)) + "</div>"


def test_extractor_second_opinion_catches_a_shell_behind_div_chrome() -> None:
    shell = page(MEGA_MENU + '<div id="root"></div>', APP)
    own = needs_rendering(shell)
    assert own.reason == "static_ok" and own.signals.content_chars >= 400  # the menu passes for content
    verdict = needs_rendering(shell, main_text_chars=_main_text_chars)
    assert (verdict.needs, verdict.reason) == (True, "empty_app_root")
    assert verdict.signals.content_source == "extractor"


def test_extractor_second_opinion_keeps_server_rendered_pages_static() -> None:
    ssr = page(f'<div id="__next">{MEGA_MENU}{ARTICLE}</div><script id="__NEXT_DATA__" type="application/json">'
               '{"props":{}}</script>', APP)
    assert needs_rendering(ssr, main_text_chars=_main_text_chars).reason == "static_ok"
    plain = page(MEGA_MENU + ARTICLE, GA)  # no shell evidence: the extractor is not even asked
    calls: list[str] = []
    needs_rendering(plain, main_text_chars=lambda h: calls.append(h) or 0)
    assert calls == []


def test_a_failing_extractor_leaves_the_own_measure() -> None:
    def broken(html: str) -> int:
        raise RuntimeError("extractor bug")

    shell = page(MEGA_MENU + '<div id="root"></div>', APP)
    verdict = needs_rendering(shell, main_text_chars=broken)
    assert verdict.reason == "static_ok" and verdict.signals.content_source == "page"


_WALK_PAGES = [
    # tails after a dropped first, middle and last child, in and out of <article>; chrome by tag and class
    "<html><body><nav>menu</nav>tail one<p>Text <script>x()</script>after script</p><header>h</header>t2"
    "<article><nav>in article</nav>kept</article><div class='cookie-banner'>ok?</div>t3</body></html>",
    # hidden elements (attribute, aria, style, class token) with tails, a spinner inside a hidden popup
    "<html><body><div hidden>a</div>b<div aria-hidden='true'>c</div>d<p style='display: none'>e</p>f"
    "<span class='sr-only x'>g</span>h<div style='visibility:hidden'><i class='spinner'></i></div>"
    "<div class='loader'></div><h1>Title</h1></body></html>",
    # app roots by id, tag and attribute; hydration markers; comments and a processing instruction
    "<html><head><title>t</title></head><body><!-- c --><div id=' Root '></div><app-root></app-root>"
    "<div data-reactroot=''>text</div><astro-island></astro-island><div id='__next'><?pi x?></div>"
    "<noscript>Please enable JavaScript</noscript><script src='/app.js'></script></body></html>",
    # no attributes anywhere; chrome tags nested in <main>
    "<html><body><main><footer>f</footer><aside>a</aside>x</main><nav><nav>n</nav></nav>" + "<p>w</p>" * 40
    + "</body></html>",
]


@pytest.mark.parametrize("html", _WALK_PAGES)
def test_decision_reads_the_tree_lxml_html_builds(html: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The decision parses with lxml's plain HTML parser (``drop_tree`` run on its plain elements): the same
    signals as with lxml.html's parser, ``HtmlElement.text_content`` and ``drop_tree`` (what it used before),
    on pages whose dropped elements have tails, chrome, hidden parts and app roots."""
    import lxml.html

    from boilerstrip.rendering import decide

    ours = decide.page_signals(html)
    monkeypatch.setattr(decide, "_PARSER", lxml.html.HTMLParser())
    monkeypatch.setattr(decide, "_text_content", lambda el: el.text_content())
    monkeypatch.setattr(decide, "_drop", lambda el: el.drop_tree() if el.getparent() is not None else None)
    assert ours == decide.page_signals(html)
    assert ours is not None and ours.visible_chars > 0


def test_tracker_names_are_found_as_the_case_insensitive_pattern_finds_them() -> None:
    """``names_tracker`` (ASCII text lower-cased, a case-sensitive pattern) answers as ``TRACKER_RE`` does,
    on ASCII and non-ASCII text: mixed case, word boundaries, the Kelvin sign and long s that IGNORECASE folds
    onto ``k`` and ``s``, dotted capitals."""
    import random

    from boilerstrip.rendering import _vocab as V

    texts = ["window.DataLayer = []", "xdatalayer", "GTAG('js')", "var _PAQ=[]", "a_paq", "https://WWW.Google-Analytics.COM/x",
             "Hotjar", "ho\u212atjar", "\u017fentry", "SENTRY", "Matomo \u00e9t\u00e9", "clar\u0130ty.ms", "fbq(", "xfbq(",
             "\u00fcber analytics.js", "nr-data", "nr_data", "", "plain code(); no names here"]
    rnd = random.Random(7)
    alphabet = list("abcdefghijklmnopqrstuvwxyzGTAQP_.(-/ \u212a\u017f\u0130\u00e9") + ["gtag(", "dataLayer", "hotjar"]
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 30))) for _ in range(3000)]
    for text in texts:
        assert V.names_tracker(text) == (V.TRACKER_RE.search(text) is not None), text
