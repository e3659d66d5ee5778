"""First rung: the page's own structure names the content.

Candidates are ``itemprop="articleBody"``, ``<article>``, ``<main>``, ``role="main"|"article"`` and
elements whose class/id names the article body ("entry-content", "article-body", ...). The candidate
holding the most good paragraph text is the page's content area; inside it, the most specific candidate
that still holds most of that text wins (articleBody inside article inside main), so sidebars and headers
in a broad <main> stay out, and a body split across siblings is kept whole. An <article> holding several
<article>s is a list of cards: neither it nor its cards are candidates, and its text does not count
against the story's share of the page.
"""

from __future__ import annotations

from lxml import etree

from ._repeats import widened_to_page_content, with_repeated_units
from ._page import PageStats, Selection, select_blocks
from ._vocab import ARTICLE_BODY_ITEMPROPS, MAIN_ROLES, SEMANTIC_TAGS
from .blocks import CONTENT, classify_attributes
from .params import ExtractionParams


def _is_semantic(element: etree._Element) -> bool:
    if element.tag in ("body", "html"):  # body classes name the page type ("single-post"), not a container
        return False
    if element.tag in SEMANTIC_TAGS:
        return True
    itemprop = element.get("itemprop")
    if itemprop and itemprop.strip().lower() in ARTICLE_BODY_ITEMPROPS:
        return True
    role = element.get("role")
    if role and role.strip().lower() in MAIN_ROLES:
        return True
    value = f"{element.get('class') or ''} {element.get('id') or ''}"
    return classify_attributes(value)[0] == CONTENT


def semantic_candidates(
    page: PageStats, params: ExtractionParams
) -> tuple[list[etree._Element], list[etree._Element]]:
    """(candidates, card lists): the page's semantic elements, minus <article>s that hold several
    <article>s (a list of cards, "you may like") and the cards in them; and those lists."""
    candidates = [element for element in page.seg.semantic if _is_semantic(element)]
    ranges = page.seg.ranges
    articles = [ranges[element] for element in candidates if element.tag == "article"]
    if len(articles) <= params.min_nested_articles_for_list:
        return candidates, []

    def nested_articles(start: int, end: int) -> int:
        return sum(1 for s, e in articles if start <= s and e <= end) - 1

    lists = [
        element
        for element in candidates
        if element.tag == "article" and nested_articles(*ranges[element]) >= params.min_nested_articles_for_list
    ]
    list_spans = [ranges[element] for element in lists]

    def in_list(element: etree._Element) -> bool:
        start, end = ranges[element]
        return any(s <= start and end <= e for s, e in list_spans)

    return [element for element in candidates if not in_list(element)], lists


def choose_semantic_container(page: PageStats, params: ExtractionParams) -> tuple[etree._Element | None, str]:
    """(container, reason): the container chosen, or None and why not."""
    candidates, card_lists = semantic_candidates(page, params)
    if not candidates:
        return None, "no_semantic_container"
    scored = [(page.good_chars(element), element) for element in candidates]
    best_good, best = max(scored, key=lambda pair: pair[0])
    if best_good <= 0:
        return None, "no_text_in_container"
    # card lists are known not to be the story: their text does not compete with it
    page_good = page.page_good_chars - sum(page.good_chars(element) for element in _outermost(card_lists, page))
    if best_good < params.min_semantic_share_of_page * page_good:
        return None, "covers_too_little"
    ranges = page.seg.ranges
    best_start, best_end = ranges[best]
    chosen, chosen_size = best, best_end - best_start
    floor = params.min_nested_container_share * best_good
    inner = []
    for good, element in scored:
        start, end = ranges[element]
        if best_start <= start and end <= best_end:
            inner.append((good, start, end, element))
            if good >= floor and end - start < chosen_size:
                chosen, chosen_size = element, end - start
    if chosen is best:
        dominant = _dominant_article(inner, best_good, params)
        if dominant is not None:
            chosen = dominant
    return chosen, "accepted"


def _outermost(elements: list[etree._Element], page: PageStats) -> list[etree._Element]:
    spans = [(page.seg.ranges[element], element) for element in elements]
    return [
        element
        for (start, end), element in spans
        if not any(s <= start and end <= e and (s, e) != (start, end) for (s, e), _other in spans)
    ]


def _dominant_article(inner: list, best_good: int, params: ExtractionParams) -> etree._Element | None:
    """Several <article>s side by side (the story, then "you may like" cards): the one holding clearly more
    text than any other, and a fair share of the whole, is the story."""
    articles = sorted((item for item in inner if item[3].tag == "article"), key=lambda item: item[0], reverse=True)
    if len(articles) < 2:
        return None
    good, start, end, element = articles[0]
    if good < params.min_dominant_article_share * best_good:
        return None
    for other_good, other_start, other_end, _other in articles[1:]:
        nested = start <= other_start and other_end <= end or other_start <= start and end <= other_end
        if not nested and other_good * params.min_dominant_article_ratio > good:
            return None
    return element


def _split_siblings(container: etree._Element, page: PageStats) -> list[etree._Element]:
    """The container and its siblings with the same tag and class: a body split into several
    ``<div class="article-body">`` (around ads or embeds) is kept whole. Not for <article>/<main>: side by
    side, those are separate stories."""
    parent = container.getparent()
    cls = container.get("class")
    if parent is None or not cls or container.tag in SEMANTIC_TAGS:  # an <article> is whole by definition
        return [container]
    ranges = page.seg.ranges
    return [
        sibling
        for sibling in parent
        if sibling is container or (sibling.tag == container.tag and sibling.get("class") == cls and sibling in ranges)
    ]


def extract_semantic(page: PageStats, params: ExtractionParams) -> Selection:
    container, reason = choose_semantic_container(page, params)
    if container is None:
        return Selection((), 0, 0.0, reason)
    containers = with_repeated_units(page, _split_siblings(container, page), params)
    return select_blocks(page, widened_to_page_content(page, containers, params), params)
