"""One page's text to an lxml tree: the tree a browser builds.

libxml2's HTML parser recovers from broken markup in its own way, which differs from the HTML standard's
tree construction where end tags are misnested: an end tag cannot close elements of higher "end priority"
still open inside it, so ``<button><div></button>`` leaves the button open and the rest of the page (the
article included) ends up inside a header's menu button. Browsers, whose rendering is what people (and
annotators) read, follow the standard. So by default the page is first built by an HTML5 tree builder
(lexbor, through selectolax, with scripting on, as in a browser that runs scripts: ``<noscript>`` stays
text there and is read the way it always was), and lxml parses that builder's well-formed serialisation,
which libxml2 reads as it is.

Never raises on page content: the result is the document, or why there is none.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lxml import etree
from selectolax.lexbor import LexborHTMLParser

from ._vocab import FLATTEN_TAGS_RE, SURROGATE_RE

__all__ = ["parse_document", "html5_serialised"]

_START_TAG_RE = re.compile(r"<[A-Za-z]")


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
    ``data`` itself when the builder gives nothing back."""
    try:
        serialised = LexborHTMLParser(data, scripting=True).html
    except Exception:  # noqa: BLE001 - the builder is an improvement, never a reason to lose the page
        return data
    return serialised.encode("utf-8", "replace") if serialised else data


@lru_cache(maxsize=2)
def _parser_input(text: str, html5: bool) -> tuple[bytes, bool]:
    """(bytes for libxml2, whether lone surrogates were replaced). Cached for the last two pages: a crawl
    reads each page twice in a row (the template model's blocks, then extraction), and the HTML5 step is
    the costly part of a parse (a str caches its hash, so the look-up costs one pass over the page)."""
    repaired: list[str] = []
    data = _encode(text, repaired)
    return (html5_serialised(data) if html5 else data), bool(repaired)


def _parser() -> etree.HTMLParser:
    return etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True, huge_tree=True, no_network=True)


def parse_document(text: str, flags: list[str] | None = None, html5: bool = True) -> etree._Element | str:
    """The parsed document, or why there is none ("parse_error", "empty_document"). Appends to ``flags``
    what was repaired on the way ("lone_surrogates", "truncated_depth")."""
    flags = [] if flags is None else flags
    data, repaired = _parser_input(text, html5)
    if repaired:
        flags.append("lone_surrogates")
    parser = _parser()
    try:
        document = etree.fromstring(data, parser=parser)
    except (etree.ParserError, ValueError, etree.XMLSyntaxError):
        return "parse_error"
    if any("Excessive depth" in entry.message for entry in parser.error_log):
        # libxml2 stops at ~2048 levels and drops the rest: flatten container tags and parse again so
        # the deep text is kept (as one run of text), and say so.
        flags.append("truncated_depth")
        parser = _parser()
        try:
            flat = FLATTEN_TAGS_RE.sub(" ", data.decode("utf-8", "replace"))
            document = etree.fromstring(flat.encode("utf-8"), parser=parser)
        except (etree.ParserError, ValueError, etree.XMLSyntaxError):
            return "parse_error"
    if document is None or (html5 and _is_bare_skeleton(document) and not _START_TAG_RE.search(text)):
        return "empty_document"
    return document


def _is_bare_skeleton(document: etree._Element) -> bool:
    """Only the <html><head></head><body></body></html> the HTML5 builder makes of any input: with no tag
    in the source either (a lone comment), what libxml2 reports as no document at all."""
    if len(document) > 2 or (document.text or "").strip():
        return False
    return all(len(part) == 0 and not (part.text or "").strip() and not part.attrib for part in document)
