"""One page's text to an lxml tree: the tree a browser builds.

libxml2's HTML parser recovers from broken markup in its own way, which differs from the HTML standard's
tree construction where end tags are misnested: an end tag cannot close elements of higher "end priority"
still open inside it, so ``<button><div></button>`` leaves the button open and the rest of the page (the
article included) ends up inside a header's menu button. Browsers, whose rendering is what people (and
annotators) read, follow the standard.

So the page is parsed by libxml2, and when libxml2's log says it met an end tag it could not match (a
misnested or stray one), the page is built again by an HTML5 tree builder (lexbor, through selectolax, with
scripting on, as in a browser that runs scripts: ``<noscript>`` stays text there and is read the way it
always was), and lxml parses that builder's well-formed serialisation. Well-formed pages (most
documentation sites) are parsed once, as before.

The HTML5 builder's time grows with the square of the nesting depth (its "in scope" checks walk the stack
of open elements): 20,000 nested ``<li><ul>`` take it seconds. So it only gets pages that libxml2 found
shallower than ``MAX_HTML5_DEPTH`` levels and with at most ``max_nodes`` elements; a deeper page keeps
libxml2's tree (and the flattening below), which is linear.

Never raises on page content: the result is the document, or why there is none.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lxml import etree
from selectolax.lexbor import LexborHTMLParser

from ._vocab import FLATTEN_TAGS_RE, SURROGATE_RE

__all__ = ["parse_document", "html5_serialised", "MAX_HTML5_DEPTH"]

#: Deeper trees are not rebuilt by the HTML5 builder (see the module docstring). Blink stops nesting at
#: 512 levels for the same reason; real pages stay under 100 (WCXB-dev and the article benchmark: at most
#: 64 in libxml2's tree).
MAX_HTML5_DEPTH = 512
_DEEPER_THAN_LIMIT = etree.XPath("boolean(" + "/*" * (MAX_HTML5_DEPTH + 1) + ")")
_ELEMENT_COUNT = etree.XPath("count(//*)")
#: libxml2's messages for an end tag it could not match. A stray </p> or </br> is left out: the standard
#: makes an empty element of it, which changes no nesting (sqlite3-doc has one on 338 of its 766 pages).
_UNMATCHED_END_TAG_RE = re.compile(r"tag mismatch|Unexpected end tag : (?!(?:p|br)\s*$)")


def _encode(text: str, flags: list[str]) -> bytes:
    """UTF-8 bytes for the parser (bytes input: libxml2 tolerates control characters and an XML
    declaration there, which it refuses in a str). Lone surrogates become U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        flags.append("lone_surrogates")
        return SURROGATE_RE.sub("\ufffd", text).encode("utf-8", "replace")


def html5_serialised(data: bytes) -> bytes:
    """The page as the HTML standard's tree construction builds it, serialised (UTF-8 in, UTF-8 out);
    ``data`` itself when the builder gives nothing back. Mind the nesting depth (module docstring).

    Scripts and styles are left out (JSON-LD scripts aside: metadata reads them): the extractor strips
    them anyway, and they are ~40% of a rebuilt page's bytes, so libxml2's second parse costs 2.3 ms a
    rebuilt page instead of 3.4 (the rebuild 4.9 ms instead of 6.2; both sets, 2026-12-03)."""
    try:
        tree = LexborHTMLParser(data, scripting=True)
        for element in tree.css("script, style"):
            if not _is_jsonld(element.attributes.get("type")):
                element.decompose()
        serialised = tree.html
    except Exception:  # noqa: BLE001 - the builder is an improvement, never a reason to lose the page
        return data
    return serialised.encode("utf-8", "replace") if serialised else data


def _is_jsonld(script_type: str | None) -> bool:
    return (script_type or "").strip().lower() == "application/ld+json"


@lru_cache(maxsize=1)
def _html5_input(data: bytes) -> bytes:
    """``html5_serialised``, kept for the last page: a crawl reads each page twice in a row (the template
    model's blocks, then extraction, in one worker job), and the HTML5 step is the costly part of such a
    parse. One entry bounds what it holds to one page and its serialisation."""
    return html5_serialised(data)


def _parser() -> etree.HTMLParser:
    # collect_ids=False: nothing looks an element up by id, and collecting them logged "ID ... already
    # defined" for each repeated id, which could fill the parser's log (100 messages) before the unmatched
    # end tag that asks for the HTML5 builder; the parse is 5 % faster too (article set, 2026-12-07)
    return etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True, huge_tree=True, no_network=True,
                            collect_ids=False)


def _libxml2(data: bytes) -> tuple[etree._Element | None, list[str]] | str:
    """(document or None, libxml2's messages), or "parse_error"."""
    parser = _parser()
    try:
        document = etree.fromstring(data, parser=parser)
    except (etree.ParserError, ValueError, etree.XMLSyntaxError):
        return "parse_error"
    return document, [entry.message for entry in parser.error_log]


def _wants_html5_tree(document: etree._Element, messages: list[str], max_nodes: int) -> bool:
    """libxml2 met an end tag it could not match, and the page is small and shallow enough for the HTML5
    builder (module docstring)."""
    if not any(_UNMATCHED_END_TAG_RE.search(message) for message in messages):
        return False
    if any("Excessive depth" in message for message in messages) or _DEEPER_THAN_LIMIT(document):
        return False
    return not max_nodes or _ELEMENT_COUNT(document) <= max_nodes


def parse_document(
    text: str, flags: list[str] | None = None, html5: bool = True, max_nodes: int = 100_000
) -> etree._Element | str:
    """The parsed document, or why there is none ("parse_error", "empty_document"). Appends to ``flags``
    what was repaired on the way ("html5_tree", "lone_surrogates", "truncated_depth"). ``max_nodes``
    bounds the pages the HTML5 builder gets (0: no bound)."""
    flags = [] if flags is None else flags
    data = _encode(text, flags)
    parsed = _libxml2(data)
    if isinstance(parsed, str):
        return parsed
    document, messages = parsed
    if html5 and document is not None and _wants_html5_tree(document, messages, max_nodes):
        rebuilt = _libxml2(_html5_input(data))
        if not isinstance(rebuilt, str) and rebuilt[0] is not None:
            document, messages = rebuilt
            flags.append("html5_tree")
    if any("Excessive depth" in message for message in messages):
        # libxml2 stops at ~2048 levels and drops the rest: flatten container tags and parse again so
        # the deep text is kept (as one run of text), and say so.
        flags.append("truncated_depth")
        flat = _libxml2(FLATTEN_TAGS_RE.sub(" ", data.decode("utf-8", "replace")).encode("utf-8"))
        if isinstance(flat, str):
            return flat
        document = flat[0]
    return "empty_document" if document is None else document
