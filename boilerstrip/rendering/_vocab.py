"""Every rule of the render decision that is data: ids, markers, phrases and tracker hosts.

One copy, compiled once at import. Nothing in here names a particular site.
"""

from __future__ import annotations

import re

#: Elements a client-side app mounts into, by id (lower-cased). React (create-react-app, Vite), Vue,
#: Next.js, Nuxt, Gatsby, Svelte, Angular CLI and the common hand-rolled names.
APP_ROOT_IDS = frozenset(
    """root app __next __nuxt ___gatsby svelte app-root react-root vue-app main-app application
    spa-root js-app""".split()
)
#: App root ids that name their framework (and so are hydration markers too).
FRAMEWORK_ROOT_IDS = frozenset(("__next", "__nuxt", "___gatsby"))
#: Elements a client-side app mounts into, by tag (Angular's default component, web-component shells).
APP_ROOT_TAGS = frozenset(("app-root",))
#: Attributes that mark an element as an app root.
APP_ROOT_ATTRS = frozenset(("data-reactroot", "ng-app", "data-v-app", "data-server-rendered"))

#: Framework / hydration markers: attribute names, tag names, script ids and window globals.
HYDRATION_ATTRS = frozenset(
    ("data-reactroot", "data-server-rendered", "ng-version", "data-v-app", "q:container", "data-sveltekit-hydrate")
)
HYDRATION_TAGS = frozenset(("astro-island", "app-root"))
HYDRATION_SCRIPT_IDS = frozenset(("__next_data__", "__nuxt_data__", "__nuxt__", "__remix_context__"))
HYDRATION_GLOBALS_RE = re.compile(
    r"__NEXT_DATA__|__NUXT__|__INITIAL_STATE__|__PRELOADED_STATE__|__APOLLO_STATE__|__remixContext"
    r"|self\.__next_f|__sveltekit|window\.__data\b|__INITIAL_PROPS__"
)

#: "Enable JavaScript" notices (searched in <noscript> and in the visible text, lower-cased).
NOSCRIPT_NOTICE_RE = re.compile(
    r"enable javascript|javascript (?:is )?(?:required|disabled|needed|must be enabled|is turned off)"
    r"|(?:requires|need|needs) (?:to )?(?:enable )?javascript|turn on javascript|activate javascript"
    r"|javascript aktivieren|activer javascript|activez javascript|habilitar javascript|activa javascript"
    r"|browser (?:does not|doesn't) support javascript"
)

#: A "Loading..." shell: the visible text is (mostly) one of these phrases.
LOADING_TEXT_RE = re.compile(
    r"^\W*(?:loading|please wait|one moment|just a moment|chargement|cargando|wird geladen|laden"
    r"|caricamento|carregando|загрузка)\b[\s\S]{0,40}$",
    re.IGNORECASE,
)
#: Class / id words of spinner and skeleton placeholders.
LOADING_CLASS_WORDS = frozenset("spinner loader loading skeleton shimmer preloader".split())
WORD_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")

#: Class tokens (whole token, lower-cased) of hidden elements, and inline styles that hide one: their text is
#: not visible, and a spinner inside a hidden search popup (mdBook's) is not a loading shell.
HIDDEN_CLASS_TOKENS = frozenset(
    """hidden hide d-none is-hidden u-hidden invisible sr-only screen-reader-text visually-hidden
    visuallyhidden element-invisible""".split()
)
HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
#: An XML declaration in front of an XHTML page (lxml refuses one in a str).
XML_DECLARATION_RE = re.compile(r"^\s*<\?xml[^>]*\?>")

#: Tags whose text is never visible page text.
INVISIBLE_TAGS = frozenset("script style noscript template svg math head title iframe object embed".split())
#: Page chrome outside the article: its text does not count as content (unless inside <article>/<main>).
CHROME_TAGS = frozenset(("nav", "aside", "footer", "header"))
CONTENT_ANCESTOR_TAGS = frozenset(("article", "main"))
#: Class / id words of banners whose text is not content (a shell often ships its cookie notice).
CHROME_CLASS_WORDS = frozenset("cookie cookies consent gdpr".split())

#: <script type> values that are data, not code.
DATA_SCRIPT_TYPE_RE = re.compile(r"json|text/(?:template|x-)|importmap|speculationrules", re.IGNORECASE)
#: <script type> values that execute (empty means JavaScript).
CODE_SCRIPT_TYPE_RE = re.compile(r"^(?:|module|(?:text|application)/(?:x-)?(?:java|ecma)script(?:;.*)?)$", re.IGNORECASE)

#: Analytics / tag-manager / monitoring scripts: they never build the page, so they are not evidence that
#: a page needs a browser (a plain article with Google Analytics stays static).
TRACKER_RE = re.compile(
    r"google-analytics\.com|googletagmanager\.com|gtag\(|\bdataLayer\b|plausible\.io|matomo|piwik|\b_paq\b"
    r"|cdn\.segment\.com|analytics\.js|hotjar|connect\.facebook\.net|\bfbq\(|cloudflareinsights"
    r"|clarity\.ms|stats\.wp\.com|umami|usefathom|newrelic|nr-data|sentry|doubleclick|adsbygoogle"
    r"|googlesyndication|quantserve|scorecardresearch|chartbeat|parsely|cookiebot|onetrust|consentmanager",
    re.IGNORECASE,
)

#: TRACKER_RE lower-cased, for an ASCII text lower-cased: the same answer (on ASCII text IGNORECASE folds only
#: the ASCII letters, and lower-casing moves no word boundary), three times faster (a case-insensitive
#: alternation is tried letter by letter at every position: 0.7 ms of a sqlite3-doc page's decision)
_TRACKER_ASCII_RE = re.compile(TRACKER_RE.pattern.lower())


def names_tracker(text: str) -> bool:
    """Whether TRACKER_RE finds one of its names in ``text``."""
    if text.isascii():
        return _TRACKER_ASCII_RE.search(text.lower()) is not None
    return TRACKER_RE.search(text) is not None


#: An inline script is a tracker snippet when one of TRACKER_RE's names shows up in its first this-many
#: characters (gtag / dataLayer / _paq snippets are a few hundred characters; an app bundle that merely
#: mentions "analytics" deep inside is not a tracker).
TRACKER_SNIFF_CHARS = 2000

#: A double-quoted string literal in a script or JSON blob (JSON escapes allowed), at least 40 chars.
STRING_LITERAL_RE = re.compile(r'"((?:[^"\\\n]|\\.){40,})"')
#: Markup inside a string literal ("<p>...</p>", or its \u003c escaped form) and JSON escapes.
MARKUP_IN_STRING_RE = re.compile(r"<[^>]{0,200}>|\\u003[cC][\s\S]{0,200}?\\u003[eE]|\\[nrt]")
LETTER_RE = re.compile(r"[^\W\d_]", re.UNICODE)
