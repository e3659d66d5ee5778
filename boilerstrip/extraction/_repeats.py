"""Repeated structures: the posts of a thread, the items of a listing, the cards of a product grid.

A rung picks the container holding the most good text; on a page whose content is a run of similar units
(forum posts, search results, product cards), that is one unit. ``with_repeated_units`` walks up from the
chosen container: the first ancestor whose *shape* (tag and first class token) recurs under its parent
(the first post beside a block of replies, each reply the same card) at least ``min_repeated_units`` times
with good text, and whose recurrences together hold clearly more good text than the container alone, makes
all those recurrences the content, in document order.
"""

from __future__ import annotations

from lxml import etree

from ._page import PageStats
from .params import ExtractionParams

#: Elements that repeat as units with no class (list items, table rows, articles in a feed).
_UNCLASSED_UNIT_TAGS = frozenset(("li", "article", "tr", "section", "dd"))


def unit_shape(element: etree._Element) -> tuple[str, str] | None:
    """(tag, first class token), the shape that repeats; None when the element has no shape to repeat."""
    cls = element.get("class")
    tokens = cls.split() if cls else ()
    if not tokens and element.tag not in _UNCLASSED_UNIT_TAGS:
        return None
    return element.tag, tokens[0] if tokens else ""


def _units_of_shape(page: PageStats, shape: tuple[str, str]) -> list[tuple[int, int, etree._Element]]:
    """[(start, end, element)] of the page's block-level elements of ``shape``, in document order (outer
    first); not to be changed by the caller. The page's elements are indexed by tag once per page, and the
    elements of a tag by shape the first time that tag is asked for (the walk up asks for it at every
    level: a page's divs were read again for each)."""
    index = getattr(page, "_tag_index", None)
    if index is None:
        index = {}
        for (element, (start, end)), tag in zip(page.seg.ranges.items(), page.seg.tags):
            if start < end:
                index.setdefault(tag, []).append((start, end, element))
        page._tag_index = index
        page._shape_index = {}
    by_shape = page._shape_index.get(shape[0])
    if by_shape is None:
        by_shape = page._shape_index[shape[0]] = {}
        for span in index.get(shape[0], ()):
            by_shape.setdefault(unit_shape(span[2]), []).append(span)
        for spans in by_shape.values():
            spans.sort(key=lambda span: (span[0], -span[1]))
    return by_shape.get(shape, [])


def _outermost(spans: list[tuple[int, int, etree._Element]]) -> list[tuple[int, int, etree._Element]]:
    result: list[tuple[int, int, etree._Element]] = []
    for span in spans:  # sorted by start, outer first
        if result and span[1] <= result[-1][1]:
            continue
        result.append(span)
    return result


def with_repeated_units(
    page: PageStats, containers: list[etree._Element], params: ExtractionParams
) -> list[etree._Element]:
    """``containers``, or the run of repeated units one of them belongs to (see the module docstring)."""
    if params.min_repeated_units <= 0 or not containers:
        return containers
    ranges = page.seg.ranges
    chosen_good = sum(page.good_chars(element) for element in containers)
    node = max(containers, key=page.good_chars)
    for _level in range(params.max_repeated_unit_levels):
        parent = node.getparent()
        if parent is None or parent.tag in ("html", "body") or parent not in ranges:
            break
        shape = unit_shape(node)
        if shape is not None:
            low, high = ranges[parent]
            spans = _outermost([span for span in _units_of_shape(page, shape) if low <= span[0] and span[1] <= high])
            units = [element for _start, _end, element in spans]
            goods = [page.good_chars(unit) for unit in units]
            if sum(1 for good in goods if good > 0) >= params.min_repeated_units:
                if sum(goods) >= params.min_repeated_units_gain * chosen_good:
                    unit_spans = [(start, end) for start, end, _element in spans]
                    outside = [
                        c for c in containers if not any(s <= ranges[c][0] and ranges[c][1] <= e for s, e in unit_spans)
                    ]
                    return sorted([*units, *outside], key=lambda element: ranges[element][0])
        node = parent
    return containers


def widened_to_page_content(
    page: PageStats, containers: list[etree._Element], params: ExtractionParams
) -> list[etree._Element]:
    """``containers``, or, when they hold less than ``min_container_share_of_page`` of the page's good
    text, their nearest common ancestor that holds ``min_widened_share_of_page`` of it: product, service
    and listing pages spread their content over many sibling sections, none of which dominates, and the
    pruning inside the container then removes the furniture between them."""
    page_good = page.page_good_chars
    if params.min_container_share_of_page <= 0 or not containers or not page_good:
        return containers
    if sum(page.good_chars(element) for element in containers) >= params.min_container_share_of_page * page_good:
        return containers
    target = params.min_widened_share_of_page * page_good
    node = max(containers, key=page.good_chars)
    ranges = page.seg.ranges
    while node is not None and node.tag not in ("html",):
        if node in ranges and page.good_chars(node) >= target:
            if all(_inside(ranges, element, node) for element in containers):
                return [node]
        node = node.getparent()
    return containers


def _inside(ranges: dict, inner: etree._Element, outer: etree._Element) -> bool:
    (start, end), (low, high) = ranges[inner], ranges[outer]
    return low <= start and end <= high
