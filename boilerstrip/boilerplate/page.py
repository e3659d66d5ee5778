"""The blocks of a *whole* page (chrome included), hashed: what the template model counts.

The extractor keeps the main content; if the model only counted extracted blocks, a footer the extractor
drops on 95 pages and lets through on 5 would look rare and survive on those 5. So the model counts, per
page, every block of the page's HTML, cut the way the extractor cuts (its ``segment``, so a block hashes
the same whether it was extracted or not); an extracted block is then template when it is on most pages.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from lxml import etree

from boilerstrip.extraction import NEVER_CONTENT_TAGS
from boilerstrip.extraction.blocks import BOILERPLATE, CHROME, COMMENTS, CONTENT, HIDDEN, Segmentation, segment
from boilerstrip.extraction.parse import parse_document

from .blocks import block_hash, digits_insensitive, normalise_block, structure_hashes

__all__ = ["page_blocks", "page_block_hashes", "region_blocks", "slot_of", "page_features", "PageFeatures",
           "PageFeaturesReading"]

logger = logging.getLogger(__name__)
#: block-level elements: a block's own-fragment links are counted up to the nearest of these
_BLOCK_TAGS = ("p", "li", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "tr", "caption",
               "figcaption", "div", "td", "th", "section", "article", "header", "footer", "nav", "aside")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_DIGITS_RE = re.compile(r"\d+")
#: a slot names at most this many elements, innermost first: enough to tell a navigation table inside the
#: page's header from a table of the article, short enough to stay the same across a site's pages
_SLOT_DEPTH = 6


def _element_name(element) -> str:
    tag = element.tag if isinstance(element.tag, str) else ""
    ident = (element.get("id") or "").strip()
    classes = sorted(set((element.get("class") or "").split()))
    name = tag + (f"#{ident}" if ident else "") + "".join(f".{c}" for c in classes)
    return _DIGITS_RE.sub("0", name.lower())


def slot_of(element, kind: str, links: int, names_of: dict | None = None) -> str:
    """A block's structural slot: the tag path (tags with id and classes, digits as 0) of its element and
    of up to ``_SLOT_DEPTH`` - 1 ancestors, its kind, and whether it holds links. A site's template puts its
    navigation bars, breadcrumbs and footers in the same slot on every page, whatever their text.
    ``names_of``: element (and its tag, id and class) -> name, kept by the caller over one page (blocks share
    their ancestors: each element is named once a page, not once a block beneath it; a fifth of reading
    sqlite3-doc's pages; the page's two trees, its own and the extraction's, share the names)."""
    names = []
    names_of = {} if names_of is None else names_of
    while element is not None and len(names) < _SLOT_DEPTH and isinstance(element.tag, str):
        if element.tag in ("body", "html"):
            break
        name = names_of.get(element)
        if name is None:  # named by what names it: an element of another tree of the page shares the name
            attributes = (element.tag, element.get("id"), element.get("class"))
            name = names_of.get(attributes)
            if name is None:
                name = names_of[attributes] = _element_name(element)
            names_of[element] = name
        names.append(name)
        element = element.getparent()
    return "/".join(reversed(names)) + f"|{kind}|{'a' if links else ''}"


def _parse(html: str):
    """The extractor's own parse: the tree a browser builds (see extraction.parse); None when unparsable."""
    document = parse_document(html)
    return None if isinstance(document, str) else document


def _segment_blocks(document, names_of: dict | None = None) -> list[tuple[str, str, str]]:
    """The extractor's own segmentation."""
    etree.strip_elements(document, *NEVER_CONTENT_TAGS, with_tail=False)
    body = document.find("body")
    seg = segment(body if body is not None else document)
    names_of = {} if names_of is None else names_of
    return [(kind, _CONTROL_RE.sub("", text), slot_of(owner, kind, links, names_of))
            for kind, text, owner, links in zip(seg.kinds, seg.texts, seg.owners, seg.link_chars)]


def page_blocks(html: str, *, max_chars: int = 10_000_000, slots: bool = False) -> list[tuple[str, ...]]:
    """(kind, text) of every block of the page -- (kind, text, slot) with ``slots`` (see :func:`slot_of`);
    [] for empty, oversized or unparsable input (never raises)."""
    if not html or not isinstance(html, str) or len(html) > max_chars:
        return []
    try:
        document = _parse(html)
        if document is None:
            return []
        blocks = _segment_blocks(document)
        return blocks if slots else [(kind, text) for kind, text, _slot in blocks]
    except Exception:  # noqa: BLE001 - hostile HTML gives no page blocks, never an exception
        logger.debug("page blocks: could not segment page", exc_info=True)
        return []


def _region_of(document, names_of: dict | None = None) -> list[dict]:
    etree.strip_elements(document, *NEVER_CONTENT_TAGS, with_tail=False)
    body = document.find("body")
    return _region_of_segmentation(segment(body if body is not None else document, skip_navigation=True), names_of)


def _region_of_segmentation(seg: Segmentation, names_of: dict | None = None) -> list[dict]:
    """The region's blocks from ``seg``, the segmentation without navigation of the page's tree stripped of
    the never-content tags (read while that tree is as it was cut)."""
    # the extractor's verdict over each block, painted outer to inner (an "entry-content" inside a
    # "post-header" is content again), as the extractor does
    verdicts: list[str | None] = [None] * len(seg)
    for element, verdict, _weight in seg.marked:
        span = seg.ranges.get(element)
        if not span or verdict not in (COMMENTS, HIDDEN, BOILERPLATE, CHROME, CONTENT):
            continue
        painted = None if verdict == CONTENT else verdict
        for i in range(span[0], span[1]):
            verdicts[i] = painted
    out = []
    names_of = {} if names_of is None else names_of
    own_of: dict = {}
    for kind, text, markdown, links, verdict, owner in zip(seg.kinds, seg.texts, seg.markdowns, seg.link_chars,
                                                           verdicts, seg.owners):
        block = {"kind": kind, "text": _CONTROL_RE.sub("", text), "links": links,
                 "slot": slot_of(owner, kind, links, names_of)}
        if markdown is not None:
            block["md"] = _CONTROL_RE.sub("", markdown)
        if verdict:
            block["furniture"] = verdict
        if links:
            own = own_of.get(owner)
            if own is None:
                own = own_of[owner] = own_link_chars(owner)
            if own:
                block["own_links"] = min(own, links)
        out.append(block)
    return out


#: elements that start a block of their own inside a block's element: their links are not the block's
_NESTED_BLOCK_TAGS = frozenset(_BLOCK_TAGS) | {"ul", "ol", "dl", "table"}


def own_link_chars(element) -> int:
    """Characters of the links in ``element``'s own text (not in a nested list or block) that point at a
    fragment of the page itself (``href="#..."``): the entries of the page's own table of contents."""
    total = 0
    for link in element.iter("a"):
        href = link.get("href")
        if not href or not href.lstrip().startswith("#"):
            continue
        parent = link.getparent()
        while parent is not None and parent is not element and parent.tag not in _NESTED_BLOCK_TAGS:
            parent = parent.getparent()
        if parent is element:
            total += len(" ".join("".join(link.itertext()).split()))
    return total


def region_blocks(html: str, *, max_chars: int = 10_000_000) -> list[dict]:
    """The page's candidate content region for ``source="auto"``: {"kind", "text", "md"?, "links", "slot"[, "furniture"]
    [, "own_links"]} of every block cut the extractor's way, minus <nav>/<aside>/<footer>; "furniture" names the
    extractor's verdict on an element around the block ("comments", "hidden", "boilerplate", "chrome");
    "own_links" the characters of its links to the page's own fragments (:func:`own_link_chars`). [] for empty,
    oversized or unparsable input (never raises)."""
    if not html or not isinstance(html, str) or len(html) > max_chars:
        return []
    try:
        document = _parse(html)
        if document is None:
            return []
        return _region_of(document)
    except Exception:  # noqa: BLE001 - hostile HTML gives no region, never an exception
        logger.debug("region blocks: could not segment page", exc_info=True)
        return []


def page_block_hashes(
    html: str, *, digits: bool = True, max_chars: int = 10_000_000, blocks: list[tuple[str, ...]] | None = None
) -> list[str]:
    """Sorted distinct hashes of the page's blocks (of ``blocks`` when given, else of ``page_blocks(html)``),
    with their structure hashes (slots and pieces, see ``blocks.structure_hashes``) when ``blocks`` carry
    slots (``page_blocks(html, slots=True)``, the default here)."""
    if blocks is None:
        blocks = page_blocks(html, max_chars=max_chars, slots=True)
    hashes: set[str | None] = set()
    for kind, text, *slot in blocks:
        hashes.add(block_hash(normalise_block(text, digits=digits_insensitive(kind, digits)), kind))
        hashes.update(structure_hashes(kind, text, slot[0] if slot else None, digits))
    hashes.discard(None)
    return sorted(hashes)  # type: ignore[arg-type]


@dataclass(frozen=True)
class PageFeatures:
    """What the cross-page model takes from a page's HTML (``page_features``)."""

    #: ``page_block_hashes``: sorted distinct hashes of every block and of its structure
    hashes: list[str]
    #: the blocks the record carries as ``page_blocks``: every block with its slot (``source="page"``),
    #: the candidate region (``"auto"``, see :func:`region_blocks`), or None (other sources)
    blocks: list[dict[str, Any]] | None


def page_features(html: str, *, source: str = "auto", digits: bool = True,
                  max_chars: int = 10_000_000) -> PageFeatures:
    """``page_block_hashes``, and the ``page_blocks`` of ``source``, from one parse of ``html``: the same
    values as :func:`page_block_hashes` over ``page_blocks(html, slots=True)`` and :func:`region_blocks`,
    which parse the page once each. A pure function of its arguments (it runs in a worker process during a
    crawl); never raises."""
    return PageFeaturesReading(html, source=source, digits=digits, max_chars=max_chars).features()


class PageFeaturesReading:
    """:func:`page_features` in two steps, so that a page's extraction in between can lend its cut of the
    region: the page's blocks when made, then :meth:`features`. The region (``source="auto"``) is the
    extractor's cut without navigation of the page's tree stripped of the never-content tags, which is what
    the extraction cuts too when its own preparation of the tree changed nothing more (no heading buttons, no
    ``<wbr>``, no no-script shell, no unclosed chrome: most pages): :meth:`take_region`, given to ``extract``
    as its ``segmented`` hook, keeps the region from that cut when the two trees serialise the same, and
    :meth:`features` cuts it itself otherwise. The same values either way (one segmentation a page fewer:
    ~0.8 ms of a 13 KB page)."""

    def __init__(self, html: str, *, source: str = "auto", digits: bool = True, max_chars: int = 10_000_000) -> None:
        self.source = source
        self.digits = digits
        self.html = html
        self.document: Any = None
        self.blocks: list[tuple[str, str, str]] = []
        self.region: list[dict[str, Any]] | None = None
        self._names_of: dict = {}  # the page's element names, for both segmentations of its one tree
        self._cut: bytes | None = None  # the serialised root the region is cut from, once asked
        if not html or not isinstance(html, str) or len(html) > max_chars:
            return
        try:
            document = _parse(html)
            if document is None:
                return
            self.blocks = _segment_blocks(document, self._names_of)
            self.document = document
        except Exception:  # noqa: BLE001 - hostile HTML gives no page blocks, never an exception
            logger.debug("page features: could not segment page", exc_info=True)

    def take_region(self, root: Any, seg: Segmentation) -> None:
        """The region from ``seg``, a segmentation without navigation of ``root`` (the extraction's), when
        ``root`` is the same tree as the one the region would be cut from; never raises."""
        if self.document is None or self.source != "auto" or self.region is not None:
            return
        try:
            if self._cut is None:
                body = self.document.find("body")
                self._cut = etree.tostring(body if body is not None else self.document)
            if etree.tostring(root) == self._cut:
                self.region = _region_of_segmentation(seg, self._names_of)
        except Exception:  # noqa: BLE001 - the region is then cut from the page's own tree
            logger.debug("page features: could not take the extraction's cut", exc_info=True)
            self.region = None

    def features(self) -> PageFeatures:
        """The page's :class:`PageFeatures`."""
        source = self.source
        if self.document is None:
            return PageFeatures([], [] if source in ("auto", "page") else None)
        region = self.region
        if source == "auto" and region is None:
            try:  # the same tree: _segment_blocks stripped the never-content tags, which is all _region_of does first
                region = _region_of(self.document, self._names_of)
            except Exception:  # noqa: BLE001
                logger.debug("page features: could not cut the region", exc_info=True)
                region = []
        elif source == "page":
            region = [{"kind": kind, "text": text, "slot": slot} for kind, text, slot in self.blocks]
        elif source != "auto":
            region = None
        return PageFeatures(page_block_hashes(self.html, digits=self.digits, blocks=self.blocks), region)
