"""The links of a page, read once per response.

The spider (to follow them, its canonical URL, the extraction's node budget), the trap filter (to report
links with other schemes), the recrawl middleware (to keep them for the next crawl) and the AI opt-out
middleware (its ``<meta>`` signals) all need what one parse of the page shows: every ``<a href>`` and
``<area href>``, the ``rel=canonical`` link, the named ``<meta>`` tags, the element count. :func:`read_links`
reads them (pure: the crawl's worker pool runs it in the render decision's job, so a static page is not
parsed in the crawl's process at all); :func:`page_links` answers for a response, from that reading when the
worker sent one, else reading the response's text there and then. Either way the same function on the same
text: the tree Scrapy's ``response.selector`` builds (parsel, lxml's HTML parser, base URL from w3lib).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Any

from lxml import etree
from parsel import Selector
from w3lib.html import get_base_url

from boilerstrip.meta import LINKS_META
from boilerstrip.urls import UrlParams, link_targets

__all__ = ["CANONICAL_XPATH", "HREF_XPATH", "META_XPATH", "LinksUnreadable", "PageLinks", "page_hrefs",
           "page_links", "read_links", "remember_links", "surely_over_node_budget"]

HREF_XPATH = "//a/@href | //area/@href"
CANONICAL_XPATH = (
    "//link[contains(concat(' ', normalize-space(translate(@rel, 'CANOICL', 'canoicl')), ' '),"
    " ' canonical ')]/@href"
)
META_XPATH = "//meta[@name and @content]"
#: where Scrapy's ``get_base_url(response)`` looks for ``<base href>``
_BASE_SCAN_CHARS = 4096
#: a start tag (or comment, doctype) in the served bytes: what the cheap element count counts
_START_TAG = re.compile(rb"<[A-Za-z!]")
#: the fewest bytes an element takes in HTML (``<p>``): a body shorter than 3 bytes a node is within any budget
_MIN_BYTES_PER_NODE = 3
#: the nodes ``root.iter()`` yields (elements, comments, processing instructions: what the extraction's
#: budget counts), counted by libxml2: ``iter()`` makes a Python object for each, and lxml.html's tree picks
#: each one's class by a Python call (~0.3 ms of a 400-element page)
_count_nodes = etree.XPath("count(descendant-or-self::* | descendant::comment() | descendant::processing-instruction())")


@dataclass(frozen=True, slots=True)
class PageLinks:
    """What one parse of a page shows the crawl (plain data: it crosses back from a worker)."""

    base: str  # the URL the page's links resolve against: its <base href>, else the page's own
    hrefs: tuple[str, ...] | None  # the raw href of every <a> and <area>, in order; None: unreadable
    canonical: str | None  # the first rel=canonical href, raw
    metas: tuple[tuple[str, str], ...]  # (name, content) of every <meta name content>, in order
    elements: int  # the tree's nodes, as the extraction's budget counts them (elements, comments...)
    bad_base: bool = False  # an unusable <base href> (ignored, as browsers do)
    error: str | None = None  # why the tree could not be queried (an exception's name)
    #: the normal form of each href under ``url_params`` (``boilerstrip.urls.link_targets``), and the names of
    #: the errors unusable ones raised; None when not asked for
    targets: tuple[str | None, ...] | None = None
    target_errors: tuple[str, ...] = ()
    url_params: UrlParams | None = None

    def over_budget(self, max_nodes: int) -> bool:
        """Whether the page has more than ``max_nodes`` nodes (0: no limit), as ``over_node_budget``."""
        return bool(max_nodes) and self.elements > max_nodes


def surely_over_node_budget(body: bytes, max_nodes: int) -> bool:
    """Whether the served ``body`` has more start tags than ``max_nodes`` (0: no limit): a byte scan of a few
    milliseconds for 10 MB, decided before the parse it spares (a parse of 360,000 elements holds the
    thread that runs it for seconds). Tags inside scripts count too: a page that many "<x" in its scripts
    is not worth the parse either."""
    if not max_nodes or len(body) <= _MIN_BYTES_PER_NODE * max_nodes:
        return False
    for count, _ in enumerate(_START_TAG.finditer(body), start=1):
        if count > max_nodes:
            return True
    return False


def read_links(text: str, url: str, encoding: str | None = None, url_params: UrlParams | None = None) -> PageLinks:
    """What the crawl reads of the HTML ``text`` of ``url`` (served in ``encoding``), with the links' normal
    forms under ``url_params`` when given (the crawl's worker works them out for the spider); never raises."""
    bad_base = False
    try:
        base = get_base_url(text[:_BASE_SCAN_CHARS], url, encoding or "utf-8")
    except ValueError:  # http://example.org:port/, http://[oops/: Scrapy's response.selector raises on it
        base, bad_base = url, True
    try:
        root = Selector(text=text, type="html", base_url=base).root
    except ValueError:
        base, bad_base = url, True
        root = Selector(text=text, type="html", base_url=url).root
    elements = int(_count_nodes(root))
    try:
        # lxml's own queries: the same strings as parsel's .getall() without a Selector built for each
        # (a large page has hundreds of links: sqlite3-doc, 155,000 Selector objects for the crawl)
        hrefs = tuple(str(href) for href in root.xpath(HREF_XPATH, smart_strings=False))
        canonical = next((str(href) for href in root.xpath(CANONICAL_XPATH, smart_strings=False)), None)
        metas = tuple((node.get("name", ""), node.get("content", "")) for node in root.xpath(META_XPATH))
    except Exception as exc:  # noqa: BLE001 - a hostile page: no links, and the reason
        return PageLinks(base, None, None, (), elements, bad_base, type(exc).__name__)
    if url_params is None:
        return PageLinks(base, hrefs, canonical, metas, elements, bad_base)
    targets, errors = link_targets(hrefs, base, url_params)
    return PageLinks(base, hrefs, canonical, metas, elements, bad_base, None, targets, errors, url_params)


def _meta_of(response: Any, request: Any) -> Any:
    """The meta a reading of ``response`` travels on: its request's (a downloader middleware's response has
    no ``response.request`` yet, so it passes the request it has), else None."""
    if request is not None:
        return request.meta
    try:
        return response.meta
    except AttributeError:  # a response without a request
        return None


def _read_from(response: Any) -> tuple[str, int, int]:
    """What a reading was read from: the URL, the body's length and its CRC-32 (a request re-issued with the
    same meta, a retry or a rewritten body, is read again rather than given another body's links)."""
    body = response.body
    return response.url, len(body), zlib.crc32(body)


def remember_links(response: Any, links: PageLinks, request: Any = None) -> None:
    """``links`` read (by a worker) from ``response``'s own text: what :func:`page_links` answers for it.
    They travel on the request's meta (``meta[LINKS_META]``, which is ``response.meta``) with what they were
    read from; ``request``: the response's request when ``response.request`` is not set yet (a downloader
    middleware's ``process_response``)."""
    meta = _meta_of(response, request)
    if meta is not None:
        meta[LINKS_META] = (*_read_from(response), links)


def page_links(response: Any, max_nodes: int = 0, request: Any = None) -> PageLinks:
    """The :class:`PageLinks` of an HTML ``response``: the reading a worker sent, else read now (once). With
    ``max_nodes`` (the extraction budget), a body :func:`surely_over_node_budget` is not parsed: its reading
    has no links (``hrefs`` None, ``error`` "over_budget") and more than ``max_nodes`` elements.
    ``request``: as for :func:`remember_links`."""
    meta = _meta_of(response, request)
    entry = meta.get(LINKS_META) if meta is not None else None
    if entry is not None and entry[:3] == _read_from(response):
        return entry[3]
    if surely_over_node_budget(response.body, max_nodes):
        links = PageLinks(response.url, None, None, (), max_nodes + 1, error="over_budget")
        remember_links(response, links, request)
        return links
    links = read_links(response.text, response.url, response.encoding)
    remember_links(response, links, request)
    return links


class LinksUnreadable(ValueError):
    """The page's tree could not be queried for its links."""


def page_hrefs(response: Any) -> list[str]:
    """The raw ``href`` of every ``<a>`` and ``<area>`` of an HTML ``response``; raises
    :class:`LinksUnreadable` on a page whose tree cannot be queried."""
    links = page_links(response)
    if links.hrefs is None:
        raise LinksUnreadable(links.error or "unreadable")
    return list(links.hrefs)
