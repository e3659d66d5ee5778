"""The blocks of a *whole* page (chrome included), hashed: what the template model counts.

The extractor keeps the main content; if the model only counted extracted blocks, a footer the extractor
drops on 95 pages and lets through on 5 would look rare and survive on those 5. So the model counts, per
page, every block of the page's HTML, cut the way the extractor cuts (its ``segment``, so a block hashes
the same whether it was extracted or not); an extracted block is then template when it is on most pages.
"""

from __future__ import annotations

import logging
import re

from .blocks import HEADING_KINDS, block_hash, digits_insensitive, normalise_block

__all__ = ["page_blocks", "page_block_hashes", "region_blocks"]

logger = logging.getLogger(__name__)
_BLOCK_TAGS = ("p", "li", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "tr", "caption",
               "figcaption", "div", "td", "th", "section", "article", "header", "footer", "nav", "aside")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _parse(html: str):
    from lxml import etree

    parser = etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True, huge_tree=True,
                              no_network=True)
    data = html.encode("utf-8", "replace")
    return etree.fromstring(data, parser=parser)


def _segment_blocks(document) -> list[tuple[str, str]] | None:
    try:  # the extractor's own segmentation, when present
        from boilerstrip.extraction._vocab import NEVER_CONTENT_TAGS
        from boilerstrip.extraction.blocks import segment
    except ImportError:
        return None
    from lxml import etree

    etree.strip_elements(document, *NEVER_CONTENT_TAGS, with_tail=False)
    body = document.find("body")
    seg = segment(body if body is not None else document)
    return [(kind, _CONTROL_RE.sub("", text)) for kind, text in zip(seg.kinds, seg.texts)]


def _simple_blocks(document) -> list[tuple[str, str]]:
    """Fallback splitter: the own text of every block-level element (no extractor installed)."""
    texts = []
    for el in document.iter(*_BLOCK_TAGS):
        own = [el.text or ""] + [
            (child.tail or "") if child.tag in _BLOCK_TAGS else "".join(child.itertext()) + (child.tail or "")
            for child in el
            if isinstance(child.tag, str)
        ]
        text = " ".join("".join(own).split())
        if text:
            texts.append((el.tag if el.tag in HEADING_KINDS else "p", text))
    return texts


def page_blocks(html: str, *, max_chars: int = 10_000_000) -> list[tuple[str, str]]:
    """(kind, text) of every block of the page; [] for empty, oversized or unparsable input (never raises)."""
    if not html or not isinstance(html, str) or len(html) > max_chars:
        return []
    try:
        document = _parse(html)
        if document is None:
            return []
        blocks = _segment_blocks(document)
        return blocks if blocks is not None else _simple_blocks(document)
    except Exception:  # noqa: BLE001 - hostile HTML gives no page blocks, never an exception
        logger.debug("page blocks: could not segment page", exc_info=True)
        return []


def _region_of(document) -> list[dict] | None:
    try:
        from boilerstrip.extraction._vocab import NEVER_CONTENT_TAGS
        from boilerstrip.extraction.blocks import BOILERPLATE, CHROME, COMMENTS, CONTENT, HIDDEN, segment
    except ImportError:
        return None
    from lxml import etree

    etree.strip_elements(document, *NEVER_CONTENT_TAGS, with_tail=False)
    body = document.find("body")
    seg = segment(body if body is not None else document, skip_navigation=True)
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
    for kind, text, links, verdict in zip(seg.kinds, seg.texts, seg.link_chars, verdicts):
        block = {"kind": kind, "text": _CONTROL_RE.sub("", text), "links": links}
        if verdict:
            block["furniture"] = verdict
        out.append(block)
    return out


def region_blocks(html: str, *, max_chars: int = 10_000_000) -> list[dict]:
    """The page's candidate content region for ``source="auto"``: {"kind", "text", "links"[, "furniture"]}
    of every block cut the extractor's way, minus <nav>/<aside>/<footer>; "furniture" names the extractor's
    verdict on an element around the block ("comments", "hidden", "boilerplate", "chrome"). [] for empty,
    oversized or unparsable input, or without the extractor (never raises)."""
    if not html or not isinstance(html, str) or len(html) > max_chars:
        return []
    try:
        document = _parse(html)
        if document is None:
            return []
        return _region_of(document) or []
    except Exception:  # noqa: BLE001 - hostile HTML gives no region, never an exception
        logger.debug("region blocks: could not segment page", exc_info=True)
        return []


def page_block_hashes(
    html: str, *, digits: bool = True, max_chars: int = 10_000_000, blocks: list[tuple[str, str]] | None = None
) -> list[str]:
    """Sorted distinct hashes of the page's blocks (of ``blocks`` when given, else of ``page_blocks(html)``)."""
    if blocks is None:
        blocks = page_blocks(html, max_chars=max_chars)
    hashes = {block_hash(normalise_block(text, digits=digits_insensitive(kind, digits)), kind) for kind, text in blocks}
    hashes.discard(None)
    return sorted(hashes)  # type: ignore[arg-type]
