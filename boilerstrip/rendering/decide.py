"""Does this page need a browser? A pure function of the static HTML, with a reason.

One lxml parse. The page's *content text* is its visible text outside nav/header/footer/aside and
cookie banners (chrome a shell often ships server-rendered). Then, in this order:

- plenty of content text -> ``static_ok`` (whatever scripts, spinners and JSON state the page carries);
- no script that could build the page -> ``no_scripts`` (a browser would show the same thing);
- a ``<meta http-equiv="refresh">`` redirect page -> ``meta_refresh`` (the crawler follows it);
- a shell: ``loading_shell`` ("Loading..." or a spinner and nothing else), ``empty_app_root``
  (``#root``, ``#app``, ``#__next``... with no text), ``noscript_notice`` ("please enable JavaScript"),
  ``hydration_without_text`` (framework markers, no server-rendered text);
- ``json_only_content``: the prose is in JSON blobs / script strings, not in the HTML (at least twice
  the visible content text);
- ``little_text_with_scripts``: almost no text, no headline, and app scripts (analytics alone do not
  count; a short page with its own ``<h1>``, a contact page say, is a real page);
- else ``static_ok``.

A verdict never raises: empty, binary or broken input gives ``empty_document`` / ``static_ok``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from lxml import etree
from lxml.html import HtmlMixin

from boilerstrip.rendering import _vocab as V
from boilerstrip.rendering.params import RenderParams

__all__ = ["RenderVerdict", "PageSignals", "needs_rendering", "page_signals", "RENDER_REASONS", "STATIC_REASONS"]

#: Reasons of a "needs a browser" verdict, in the order they are tried.
RENDER_REASONS = (
    "loading_shell",
    "empty_app_root",
    "noscript_notice",
    "hydration_without_text",
    "json_only_content",
    "little_text_with_scripts",
)
#: Reasons of a "static is fine" verdict.
STATIC_REASONS = ("static_ok", "no_scripts", "meta_refresh", "empty_document")

_DEFAULT = RenderParams()
#: lxml.html's parser without its element classes: the same tree, and no Python call to pick a class for each
#: element the walk meets (``lxml.html.HtmlElementClassLookup``: a tenth of the decision on a page of 400
#: elements); ``_text_content`` stands for the ``HtmlElement`` method the decision used, ``_drop`` calls the other
_PARSER = etree.HTMLParser()
#: ``HtmlElement.text_content``: the element's text, its descendants' included (XPath ``string()``)
_text_content = etree.XPath("string()", smart_strings=False)
_NO_WORDS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class PageSignals:
    """What the decision looked at (kept on the verdict so a user can ask "why?")."""

    content_chars: int = 0  # visible text outside chrome (or the caller's pre-computed text length)
    visible_chars: int = 0  # all visible body text, chrome included (what a browser's innerText starts at)
    app_scripts: int = 0  # executable scripts that are not analytics/trackers
    tracker_scripts: int = 0
    app_roots: int = 0
    empty_app_roots: int = 0
    noscript_notice: bool = False
    loading: bool = False
    hydration_markers: tuple[str, ...] = ()
    script_prose_chars: int = 0
    headline_chars: int = 0  # text of <h1> outside chrome: a shell has none, a short real page has one
    content_source: str = "page"  # who measured content_chars: page (chrome-stripped text), caller, extractor
    meta_refresh: bool = False  # <meta http-equiv="refresh">: a redirect page, followed by the crawler


@dataclass(frozen=True)
class RenderVerdict:
    needs: bool
    reason: str
    signals: PageSignals = field(default_factory=PageSignals)


def _collapsed(text: str) -> str:
    """``text`` with each run of whitespace as one space, none at the ends (``str.split`` splits at the
    characters ``\\s`` matches: the same string as a regex substitution, several times faster on a page)."""
    return " ".join(text.split())


def _norm_len(text: str) -> int:
    return len(_collapsed(text))


def _words(value: str | None) -> set[str]:
    if not value:
        return set()
    return {w.lower() for w in V.WORD_RE.findall(value)}


def _id_names_its_text(el_id: str | None, el: etree._Element) -> bool:
    """Is ``el_id`` the element's name, made of words its own text holds, with one word at least that is no
    loading word? An API entry or a code block anchored by what it documents (Sphinx's
    ``id="celery.loaders.app.AppLoader"`` over "class celery.loaders.app.AppLoader(app)") is no loader,
    while ``id="loader"`` or ``id="page-loader"`` over "Loading..." is one."""
    id_words = _words(el_id)
    if not id_words - V.LOADING_CLASS_WORDS:
        return False
    return id_words <= _words(" ".join(el.itertext()))


def _is_prose(text: str, params: RenderParams) -> int:
    """Length of ``text`` when it reads as prose (after stripping markup), else 0."""
    text = V.MARKUP_IN_STRING_RE.sub(" ", text)
    words = text.split()
    if len(words) < params.min_prose_words:
        return 0
    compact = "".join(words)
    letters = len(V.LETTER_RE.findall(compact))
    if not compact or letters / len(compact) < params.min_prose_letter_share:
        return 0
    return len(" ".join(words))


def _script_prose_chars(scripts: list[str], params: RenderParams) -> int:
    total = 0
    budget = params.max_script_scan_chars
    seen: set[str] = set()
    for code in scripts:
        if budget <= 0:
            break
        code = code[:budget]
        budget -= len(code)
        for match in V.STRING_LITERAL_RE.finditer(code):
            literal = match.group(1)
            if literal in seen:  # the same text twice (title in og and in body) counts once
                continue
            seen.add(literal)
            total += _is_prose(literal, params)
    return total


def page_signals(html: str, *, text_chars: int | None = None, params: RenderParams = _DEFAULT) -> PageSignals | None:
    """Parse ``html`` once and measure what the decision needs; None when there is no document."""
    if not html or not html.strip():
        return None
    html = V.XML_DECLARATION_RE.sub("", html[: params.max_input_chars], count=1)
    try:
        root = etree.fromstring(html, _PARSER)
    except (etree.ParserError, ValueError, TypeError):
        return None
    if root is None:
        return None

    app_scripts = tracker_scripts = 0
    script_texts: list[str] = []
    markers: set[str] = set()
    noscript_notice = False
    spinners: list = []
    refresh = False
    roots: list = []
    drop_invisible: list = []
    drop_chrome: list = []

    for el in root.iter():
        tag = el.tag
        if not isinstance(tag, str):  # comments, processing instructions: no text_content() anyway
            continue
        tag = tag.lower()
        attrib = el.attrib
        if tag == "script":
            stype = (attrib.get("type") or "").strip()
            sid = (attrib.get("id") or "").lower()
            code = el.text or ""
            if sid in V.HYDRATION_SCRIPT_IDS:
                markers.add(f"script#{sid}")
            if V.DATA_SCRIPT_TYPE_RE.search(stype):
                script_texts.append(code)
            elif V.CODE_SCRIPT_TYPE_RE.match(stype):
                src = attrib.get("src") or ""
                if V.names_tracker(src) or (not src and V.names_tracker(code[: V.TRACKER_SNIFF_CHARS])):
                    tracker_scripts += 1
                elif src or len(code.strip()) >= params.min_app_inline_script_chars:
                    app_scripts += 1
                if code:
                    script_texts.append(code)
                    hit = V.HYDRATION_GLOBALS_RE.search(code[: params.max_script_scan_chars])
                    if hit:
                        markers.add(hit.group(0))
            drop_invisible.append(el)
            continue
        if tag == "meta" and (attrib.get("http-equiv") or "").strip().lower() == "refresh":
            refresh = True
            continue
        if tag == "noscript":
            if V.NOSCRIPT_NOTICE_RE.search(_text_content(el).lower()):
                noscript_notice = True
            drop_invisible.append(el)
            continue
        if tag in V.INVISIBLE_TAGS:
            drop_invisible.append(el)
            continue
        if tag in V.HYDRATION_TAGS:
            markers.add(tag)
        if not attrib:  # most elements: what follows with no id, class or other attribute
            if tag in V.APP_ROOT_TAGS:
                roots.append(el)
            if tag in V.CHROME_TAGS and not _in_content(el):
                drop_chrome.append(el)
            continue
        names = attrib.keys()
        el_id = (attrib.get("id") or "").strip()
        hydration = V.HYDRATION_ATTRS.intersection(names)
        if hydration:
            markers.update(f"@{name}" for name in hydration)
        if el_id.lower() in V.APP_ROOT_IDS or tag in V.APP_ROOT_TAGS or not V.APP_ROOT_ATTRS.isdisjoint(names):
            roots.append(el)
            if el_id.lower() in V.FRAMEWORK_ROOT_IDS:
                markers.add(f"#{el_id.lower()}")
        style = attrib.get("style")
        classes = attrib.get("class")
        if tag not in ("html", "body") and (  # a whole page hidden until its script runs is still judged
            "hidden" in attrib
            or attrib.get("aria-hidden") == "true"
            or (style and V.HIDDEN_STYLE_RE.search(style))
            or (classes and V.HIDDEN_CLASS_TOKENS.intersection(classes.lower().split()))
        ):
            drop_invisible.append(el)
            continue
        class_words = _words(classes)
        words = class_words | _words(el_id) if classes or el_id else _NO_WORDS
        if words & V.LOADING_CLASS_WORDS and (
            class_words & V.LOADING_CLASS_WORDS or not _id_names_its_text(el_id, el)
        ):
            spinners.append(el)
        if tag in V.CHROME_TAGS or (words & V.CHROME_CLASS_WORDS and tag not in ("html", "body")):
            if not _in_content(el):
                drop_chrome.append(el)

    for el in drop_invisible:
        _drop(el)
    body = root.find("body")
    if body is None:
        body = root
    visible_text = _collapsed(_text_content(body))
    root_texts = [_norm_len(_text_content(r)) for r in roots if _alive(r, root)]
    loading_class = any(_alive(el, root) for el in spinners)
    short_text = visible_text  # the content text, collapsed: the visible text when there is no chrome to drop
    if drop_chrome:
        for el in drop_chrome:
            _drop(el)
        short_text = _collapsed(_text_content(body))
    headline_chars = sum(_norm_len(_text_content(h)) for h in body.iter("h1"))
    content_chars = len(short_text) if text_chars is None else int(text_chars)
    source = "page" if text_chars is None else "caller"
    loading = loading_class or bool(short_text and len(short_text) <= 80 and V.LOADING_TEXT_RE.match(short_text))
    if not noscript_notice and content_chars < params.max_shell_text_chars:
        noscript_notice = bool(V.NOSCRIPT_NOTICE_RE.search(short_text.lower()))

    return PageSignals(
        content_chars=content_chars,
        visible_chars=len(visible_text),
        app_scripts=app_scripts,
        tracker_scripts=tracker_scripts,
        app_roots=len(root_texts),
        empty_app_roots=sum(1 for n in root_texts if n < params.max_empty_root_text_chars),
        noscript_notice=noscript_notice,
        loading=loading,
        hydration_markers=tuple(sorted(markers)),
        script_prose_chars=_script_prose_chars(script_texts, params),
        headline_chars=headline_chars,
        content_source=source,
        meta_refresh=refresh,
    )


def _in_content(el) -> bool:
    """``el`` is inside an ``<article>`` or ``<main>`` (chrome there is the content's own)."""
    return any(isinstance(a.tag, str) and a.tag.lower() in V.CONTENT_ANCESTOR_TAGS for a in el.iterancestors())


def _drop(el) -> None:
    """Remove ``el`` and its text but keep its tail (the text after it belongs to the parent): lxml.html's
    ``drop_tree`` itself, which reads and writes only what every element has (parent, previous sibling,
    text and tail), run on the plain element the decision's parser makes; a root is left alone."""
    if el.getparent() is not None:
        HtmlMixin.drop_tree(el)


def _alive(el, root) -> bool:
    """``el`` is still in the tree (not inside a dropped subtree)."""
    for ancestor in el.iterancestors():
        if ancestor is root:
            return True
    return el is root


def needs_rendering(
    html: str,
    *,
    url: str | None = None,
    text_chars: int | None = None,
    main_text_chars: Callable[[str], int] | None = None,
    params: RenderParams = _DEFAULT,
) -> RenderVerdict:
    """Decide whether the static ``html`` of a page needs a browser to show its content.

    ``text_chars``: the length of the page's main text when the caller already extracted it (the
    extractor's answer is better than the decision's own chrome-stripping measure).
    ``main_text_chars``: a function measuring the main text of ``html`` (an extractor), asked only for a
    second opinion when the page shows shell evidence (an empty app root, a notice, a spinner, hydration
    markers) but its own measure found enough text: chrome without nav/header/footer tags (a mega-menu of
    plain divs) can pass for content. ``url`` is for callers' logging; the verdict does not depend on it.
    """
    signals = page_signals(html, text_chars=text_chars, params=params)
    if signals is None:
        return RenderVerdict(False, "empty_document")
    shell_evidence = signals.loading or signals.empty_app_roots or signals.noscript_notice or signals.hydration_markers
    if (
        text_chars is None
        and main_text_chars is not None
        and shell_evidence
        and signals.app_scripts
        and params.max_shell_text_chars <= signals.content_chars < params.max_extractor_check_text_chars
    ):
        try:
            measured = int(main_text_chars(html))
        except Exception:  # noqa: BLE001 - a failing extractor leaves the page's own measure in place
            measured = None
        if measured is not None:
            signals = replace(signals, content_chars=measured, content_source="extractor")
    content = signals.content_chars
    # Every signal below is a shell signal: it counts only on a page with little content text. Real
    # articles carry scripts, spinners and JSON state of every kind (a React SSR page holds its whole
    # text again in __PRELOADED_STATE__, plus related articles and comments): on 181 real article pages
    # (the extraction benchmark's), judging JSON prose without this guard rendered 23 of them.
    if content >= params.max_shell_text_chars:
        return RenderVerdict(False, "static_ok", signals)
    if signals.app_scripts == 0:
        return RenderVerdict(False, "no_scripts", signals)
    if signals.meta_refresh:
        return RenderVerdict(False, "meta_refresh", signals)
    if signals.loading:
        return RenderVerdict(True, "loading_shell", signals)
    if signals.empty_app_roots:
        return RenderVerdict(True, "empty_app_root", signals)
    if signals.noscript_notice:
        return RenderVerdict(True, "noscript_notice", signals)
    if signals.hydration_markers:
        return RenderVerdict(True, "hydration_without_text", signals)
    if (
        signals.script_prose_chars >= params.min_script_prose_chars
        and signals.script_prose_chars >= params.min_script_prose_ratio * content
    ):
        return RenderVerdict(True, "json_only_content", signals)
    if content < params.max_little_text_chars and not signals.headline_chars:
        return RenderVerdict(True, "little_text_with_scripts", signals)
    return RenderVerdict(False, "static_ok", signals)
