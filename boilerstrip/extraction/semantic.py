"""First rung: the page's own structure names the content.

Candidates are ``itemprop="articleBody"``, ``<article>``, ``<main>``, ``role="main"|"article"`` and
elements whose class/id names the article body ("entry-content", "article-body", ...). The candidate
holding the most good paragraph text is the page's content area; inside it, the most specific candidate
that still holds most of that text wins (articleBody inside article inside main), so sidebars and headers
in a broad <main> stay out, and a body split across siblings is kept whole.
"""

from __future__ import annotations

from lxml import etree

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


def semantic_candidates(page: PageStats) -> list[etree._Element]:
    candidates = [element for element in page.seg.semantic if _is_semantic(element)]
    ranges = page.seg.ranges
    articles = [ranges[element] for element in candidates if element.tag == "article"]
    if len(articles) < 3:
        return candidates
    # an <article> holding several <article>s is a list of cards, not a story
    return [
        element
        for element in candidates
        if element.tag != "article"
        or sum(1 for s, e in articles if ranges[element][0] <= s and e <= ranges[element][1]) <= 2
    ]


def choose_semantic_container(page: PageStats, params: ExtractionParams) -> tuple[etree._Element | None, str]:
    """(container, reason): the container chosen, or None and why not."""
    candidates = semantic_candidates(page)
    if not candidates:
        return None, "no_semantic_container"
    scored = [(page.good_chars(element), element) for element in candidates]
    best_good, best = max(scored, key=lambda pair: pair[0])
    if best_good <= 0:
        return None, "no_text_in_container"
    if best_good < params.min_semantic_share_of_page * page.page_good_chars:
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


def _dominant_article(inner: list, best_good: int, params: ExtractionParams) -> etree._Element | None:
    """Several <article>s side by side (the story, then "you may like" cards): the one holding clearly more
    text than any other, and a fair share of the whole, is the story."""
    articles = [item for item in inner if item[3].tag == "article"]
    # an <article> holding several <article>s is a list of cards, not a story
    articles = [
        (good, start, end, element)
        for good, start, end, element in articles
        if sum(1 for _g, s, e, other in articles if other is not element and start <= s and e <= end) < 2
    ]
    articles.sort(key=lambda item: item[0], reverse=True)
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
    return select_blocks(page, _split_siblings(container, page), params)
