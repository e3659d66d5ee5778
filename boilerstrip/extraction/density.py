"""Second rung: text density, for pages without usable semantic markup.

Readability's scoring over the page's blocks: every good paragraph (long enough, few links, not in a
boilerplate-vocabulary element) gives ``1 + commas + min(chars / 100, 3)`` points to its container and a
decreasing share to the container's ancestors. Containers start from a tag prior and a class/id vocabulary
weight; the score is scaled by ``1 - link density`` (a block whose text is mostly link text is navigation).
The winner's siblings join when they score close to it or are long, link-free paragraphs, and so do its
cousins with the same tag and class a few levels up, so an article split across sibling (or separately
wrapped) containers is kept whole rather than only its longest div.
"""

from __future__ import annotations

from lxml import etree

from ._repeats import widened_to_page_content, with_repeated_units
from ._page import PageStats, Selection, is_inflow_box, select_blocks
from ._vocab import PARAGRAPH_TAGS, TAG_PRIOR_SCORE
from .blocks import BOILERPLATE, classify_attributes, count_commas
from .params import ExtractionParams



def _class_weight(element: etree._Element, params: ExtractionParams) -> float:
    cls, eid = element.get("class"), element.get("id")
    if not cls and not eid:
        return 0.0
    return classify_attributes(f"{cls or ''} {eid or ''}")[1] * params.class_weight_points


def score_candidates(page: PageStats, params: ExtractionParams) -> dict[etree._Element, float]:
    """Readability-style content score of every container that holds good paragraphs."""
    seg = page.seg
    scores: dict[etree._Element, float] = {}
    good = page.sum_good
    chars, texts, owners = seg.chars, seg.texts, seg.owners
    grandparent_share = params.grandparent_score_share
    for i in range(len(seg)):
        if good[i + 1] == good[i]:
            continue
        owner = owners[i]
        node = owner.getparent() if owner.tag in PARAGRAPH_TAGS else owner
        points = 1.0 + count_commas(texts[i]) + min(chars[i] / 100.0, 3.0)
        level = 0
        while node is not None and level < params.max_scored_ancestor_levels:
            if node not in scores:
                scores[node] = TAG_PRIOR_SCORE.get(node.tag, 0.0) + _class_weight(node, params)
            if level == 0:
                scores[node] += points
            elif level == 1:
                scores[node] += points * grandparent_share
            else:
                scores[node] += points / (level * 3)
            node = node.getparent()
            level += 1
    ranges = seg.ranges
    return {
        node: score * (1.0 - seg.link_density(*ranges[node]))
        for node, score in scores.items()
        if node in ranges
    }


def choose_density_containers(page: PageStats, params: ExtractionParams) -> list[etree._Element]:
    """The top-scoring container and the siblings that belong with it (document order)."""
    scores = score_candidates(page, params)
    if not scores:
        return []
    # the best-scoring container that holds a fair share of the page's good text: a small box with a
    # content-like class name ("content-wrapper title") must not beat the article on its class bonus
    floor = params.min_density_winner_share * page.page_good_chars
    ranked = sorted(scores, key=scores.__getitem__, reverse=True)
    top = next((element for element in ranked if page.good_chars(element) >= floor), ranked[0])
    top = _whole_document(top, scores, page, params)
    parent = top.getparent()
    if parent is None:
        return [top]
    seg = page.seg
    top_score = scores[top]
    threshold = max(params.min_sibling_score_points, top_score * params.min_sibling_score_share)
    top_class = top.get("class")
    chosen = []
    for sibling in parent:
        if sibling is top:
            chosen.append(top)
            continue
        span = seg.ranges.get(sibling)
        if span is None:
            continue
        bonus = top_score * params.min_sibling_score_share if top_class and sibling.get("class") == top_class else 0.0
        if sibling in scores and scores[sibling] + bonus >= threshold:
            chosen.append(sibling)
            continue
        if page.verdicts.get(sibling) == BOILERPLATE and is_inflow_box(page, sibling, *span, params):
            chosen.append(sibling)  # a "sidebar" box among the article's paragraphs
            continue
        if params.min_sibling_code_share and _code_share(seg, *span) >= params.min_sibling_code_share:
            if seg.link_density(*span) < params.max_sibling_paragraph_link_density:
                chosen.append(sibling)  # a synopsis: code beside the text
                continue
        if sibling.tag == "p" or span[1] - span[0] == 1:
            length = seg.text_chars(*span)
            if not page.good_chars(sibling):
                continue
            if length > params.min_sibling_paragraph_chars:
                if seg.link_density(*span) < params.max_sibling_paragraph_link_density:
                    chosen.append(sibling)
    return _with_cousins(top, chosen, page, params)


#: elements that are a part of a document, never a whole one (a list)
_PART_TAGS = frozenset(("ul", "ol", "dl"))


def _whole_document(top: etree._Element, scores: dict[etree._Element, float], page: PageStats,
                    params: ExtractionParams) -> etree._Element:
    """``top``, or, when ``top`` is a part of a document rather than one (a list, or a block mostly of code:
    a reference page's synopsis), its ancestor that scores nearly as well (``min_ancestor_score_share``)
    with more good text. A plain container is left as it is: its ancestor adds bylines and teasers."""
    if params.min_ancestor_score_share <= 0:
        return top
    if top.tag not in _PART_TAGS and not (
            params.min_sibling_code_share and _code_share(page.seg, *page.seg.ranges[top]) >= params.min_sibling_code_share):
        return top
    bar = params.min_ancestor_score_share * scores[top]
    chosen, node = top, top.getparent()
    for _ in range(params.max_scored_ancestor_levels):
        if node is None or node.tag in ("body", "html"):
            break
        if scores.get(node, 0.0) >= bar and page.good_chars(node) > page.good_chars(chosen):
            chosen = node
        node = node.getparent()
    return chosen


def _code_share(seg, start: int, end: int) -> float:
    total = seg.text_chars(start, end)
    code = sum(seg.chars[i] for i in range(start, end) if seg.kinds[i] == "pre")
    return code / total if total else 0.0


def _with_cousins(
    top: etree._Element, chosen: list[etree._Element], page: PageStats, params: ExtractionParams
) -> list[etree._Element]:
    """Add the winner's *cousins*: elements with its tag and class a few levels around it. An article cut
    into chunks that each sit in their own wrapper (``<div class="grid"><div class="article__body">``
    per chunk) has its parts side by side only higher up, where sibling merging does not look."""
    cls = top.get("class")
    if not cls or params.max_cousin_levels <= 0:
        return chosen
    ancestor = top
    for _ in range(params.max_cousin_levels):
        parent = ancestor.getparent()
        if parent is None or parent.tag in ("body", "html"):
            break
        ancestor = parent
    if ancestor is top.getparent():
        return chosen  # siblings were already considered
    ranges = page.seg.ranges
    spans = [ranges[element] for element in chosen if element in ranges]
    cousins = [
        element
        for element in ancestor.iter(top.tag)
        if element.get("class") == cls
        and element in ranges
        and page.good_chars(element) > 0
        and not any(s <= ranges[element][0] and ranges[element][1] <= e for s, e in spans)
    ]
    if not cousins:
        return chosen
    return sorted(chosen + cousins, key=lambda element: ranges[element][0])


def extract_density(page: PageStats, params: ExtractionParams) -> Selection:
    containers = choose_density_containers(page, params)
    if not containers:
        return Selection((), 0, 0.0, "no_dense_block")
    containers = with_repeated_units(page, containers, params)
    return select_blocks(page, widened_to_page_content(page, containers, params), params)
