"""What the semantic and density rungs share: per-page block statistics, pruning inside a chosen
container, and the sanity checks on a rung's result."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

from lxml import etree

from ._vocab import (CHROME_ROLES, CHROME_TAGS, FRAMEWORK_WORDS, HEADING_TAGS, LINK_LIST_TAGS, LIST_ELEMENT_TAGS,
                     LIST_ITEM_KINDS, TOKEN_RE)
from .blocks import (
    BOILERPLATE,
    CAPTION,
    CHROME,
    COMMENTS,
    CONTENT,
    PRUNED_VERDICTS,
    UNGUARDED_VERDICTS,
    Segmentation,
    furniture_words,
)
from .params import ExtractionParams


def _is_card(holder: etree._Element, params: ExtractionParams) -> bool:
    """The picture holder, or one of its nearest ancestors, is one of several siblings of one shape (tag and
    class): a card of a grid (products, features, team members), whose short text is the card's, not a
    caption."""
    node = holder
    for _level in range(params.max_card_levels):
        parent = node.getparent()
        if parent is None:
            return False
        tag, cls = node.tag, node.get("class")
        # the siblings of its tag found in C, their classes compared here
        if sum(1 for sibling in parent.iterchildren(tag) if sibling.get("class") == cls) >= params.min_card_siblings:
            return True
        node = parent
    return False


#: the framework words that hold no other: a class/id string with a framework word among its furniture words
#: holds one of them, lower-cased (its words are its letters' runs, lower-cased)
_FRAMEWORK_STEMS = tuple(sorted(word for word in FRAMEWORK_WORDS
                                if not any(other != word and other in word for other in FRAMEWORK_WORDS)))


def _attribute_value(element: etree._Element) -> str:
    return f"{element.get('class') or ''} {element.get('id') or ''}"


def _without_framework_words(seg: Segmentation, params: ExtractionParams) -> list[tuple[etree._Element, str | None]]:
    """(element, verdict) of the page's marked elements, with the furniture verdict taken off elements
    named only by the page's *framework words*: furniture words whose elements together hold more than
    ``max_furniture_word_share_of_page`` of the page's prose (paragraph-length blocks that are not mostly
    links), spread over at least ``min_framework_word_elements`` separate elements. A page builder that
    puts "widget" on every element ("elementor-widget-container"), a component library that prefixes
    every component ("cmp-text", "cmp-container"), a layout named after its sidebar ("content-sidebar-wrap")
    would otherwise make the page's own text furniture; real furniture (a share bar, a related box, a sidebar) holds a small share,
    or is one box. Only FRAMEWORK_WORDS can be framework (a popup or a promotion never is); a chrome tag
    or landmark role among the elements taken off stays chrome."""
    marks = [(element, verdict) for element, verdict, _weight in seg.marked]
    limit = params.max_furniture_word_share_of_page
    n = len(seg)
    if not limit or not n:
        return marks
    ranges = seg.ranges
    values = seg.furniture_values
    words_of: dict[etree._Element, frozenset[str]] = {}
    spans_by_word: dict[str, list[tuple[int, int]]] = {}
    for element, verdict in marks:
        if verdict != BOILERPLATE:
            continue
        span = ranges.get(element)
        if span is None or span[0] >= span[1]:
            continue
        value = values.get(element)
        if value is None:
            value = _attribute_value(element)
        lowered = value.lower()
        if not any(stem in lowered for stem in _FRAMEWORK_STEMS):
            continue  # no framework word among its words: it keeps its verdict whatever is framework
        words = furniture_words(value)
        words_of[element] = words
        for word in words & FRAMEWORK_WORDS:
            spans_by_word.setdefault(word, []).append(span)
    if not spans_by_word:
        return marks
    # prose: paragraph-length blocks that are not mostly links, whatever the vocabulary says
    sum_prose = [0] * (n + 1)
    running = 0
    min_chars, max_ld = params.min_paragraph_chars, params.max_paragraph_link_density
    for i, (c, links) in enumerate(zip(seg.chars, seg.link_chars)):
        if c >= min_chars and links <= max_ld * c:
            running += c
        sum_prose[i + 1] = running
    floor = limit * sum_prose[n]
    framework = set()
    for word, spans in spans_by_word.items():
        covered, reach, boxes = 0, 0, 0
        for start, end in sorted(spans):  # document order: count the prose of the outermost spans once
            if sum_prose[end] > sum_prose[start]:
                boxes += 1  # every element holding prose, nested ones too (a wrapper and its components)
            if end <= reach:
                continue
            start = max(start, reach)
            covered += sum_prose[end] - sum_prose[start]
            reach = end
        if covered > floor and boxes >= params.min_framework_word_elements:
            framework.add(word)
    if not framework:
        return marks
    result = []
    for element, verdict in marks:
        words = words_of.get(element)
        if words and words <= framework:
            role = (element.get("role") or "").strip().lower()
            if element.tag in CHROME_TAGS or role in CHROME_ROLES:
                result.append((element, CHROME))
            continue
        result.append((element, verdict))
    return result


class PageStats:
    """Block statistics of one page: boilerplate flags and "good paragraph" prefix sums."""

    def __init__(
        self,
        seg: Segmentation,
        params: ExtractionParams,
        headline: str | None = None,
        image_holders: list[etree._Element] = (),
    ) -> None:
        self.seg = seg
        self.params = params
        #: the page's declared headline as lower-case words, to recognise it among the blocks
        self.headline_words = " ".join(TOKEN_RE.findall(headline.lower())) if headline else ""
        n = len(seg)
        total = seg.sum_chars[n] if n else 0
        # (start, end, element, verdict) in document order; painting in that order lets the innermost
        # verdict win: an "entry-content" inside an "article-header" wrapper is content again.
        self.verdict_spans: list[tuple[int, int, etree._Element, str]] = []
        #: element -> its verdict (the innermost-wins painting above is in verdict_spans)
        self.verdicts: dict[etree._Element, str] = {}
        page_limit = params.max_pruned_share_of_page * total
        marks = _without_framework_words(seg, params)
        holders = [*image_holders, *seg.figures] if not params.keep_captions else []
        #: caption-like text of grid cards: left out of the good text (it does not choose the container) but
        #: not pruned from the content
        self.card_captions: set[etree._Element] = set()
        if holders:
            # short text next to a picture (or in a <figure>) is its caption or credit
            for holder in holders:
                span = seg.ranges.get(holder)
                if span and 0 < seg.sum_chars[span[1]] - seg.sum_chars[span[0]] <= params.max_caption_chars:
                    if _is_card(holder, params):
                        self.card_captions.add(holder)
                    marks.append((holder, CAPTION))
            # document order, outer before inner (caption marks were appended out of order)
            ranges = seg.ranges

            def order(mark: tuple) -> tuple[int, int]:  # by start, outer first; marks without a span first
                span = ranges.get(mark[0])
                return (span[0], -span[1]) if span else (-1, 0)

            marks.sort(key=order)
        spans = []
        for element, verdict in marks:
            pruned = verdict in PRUNED_VERDICTS
            if not pruned and verdict != CONTENT:
                continue
            span = seg.ranges.get(element)
            if span is None:
                continue
            start, end = span
            if start >= end:
                continue
            spans.append((start, end, element, verdict))
            self.verdict_spans.append((start, end, element, verdict))
            self.verdicts[element] = verdict
        #: comment threads are the page's content: those of a page that holds little else (a forum thread
        #: whose posts are named comments), or every thread with ``comments="keep"``
        self.comments_are_content = params.comments == "keep"
        self.boiler, self.sum_good = self._paint(spans, page_limit, skip_comments=self.comments_are_content)
        if not self.comments_are_content and self.sum_good[-1] < params.min_text_chars:
            if any(verdict == COMMENTS for _start, _end, _element, verdict in spans):
                boiler, good = self._paint(spans, page_limit, skip_comments=True)
                if good[-1] >= params.min_text_chars:
                    self.boiler, self.sum_good = boiler, good
                    self.comments_are_content = True

    def _paint(self, spans: list, page_limit: float, skip_comments: bool) -> tuple[bytearray, list[int]]:
        """(boilerplate flag per block, good paragraph prefix sums) from the verdict spans."""
        seg, params = self.seg, self.params
        n = len(seg)
        boiler = bytearray(n)
        for start, end, _element, verdict in spans:
            if verdict == CONTENT or (skip_comments and verdict == COMMENTS):
                boiler[start:end] = bytes(end - start)
            elif verdict in UNGUARDED_VERDICTS or seg.sum_chars[end] - seg.sum_chars[start] <= page_limit:
                boiler[start:end] = b"\x01" * (end - start)
        good = [0] * (n + 1)
        running = 0
        min_chars = params.min_paragraph_chars
        max_ld = params.max_paragraph_link_density
        chars, links = seg.chars, seg.link_chars
        for i in range(n):
            c = chars[i]
            if c >= min_chars and not boiler[i] and links[i] <= max_ld * c:
                running += c
            good[i + 1] = running
        return boiler, good

    def good_chars(self, element: etree._Element) -> int:
        span = self.seg.ranges.get(element)
        return self.sum_good[span[1]] - self.sum_good[span[0]] if span else 0

    @property
    def page_good_chars(self) -> int:
        return self.sum_good[-1]

    def is_good(self, i: int) -> bool:
        return self.sum_good[i + 1] > self.sum_good[i]


@dataclass(frozen=True)
class Selection:
    indices: tuple[int, ...]
    chars: int
    link_density: float
    reason: str  # "accepted" or why it was refused
    #: the block left out as the page's headline (it is ``title``; the Markdown opens with it), if any
    headline: int | None = None


def _teaser_cards(page: PageStats, containers: list[etree._Element], params: ExtractionParams) -> list[tuple[int, int]]:
    """Spans of teaser cards inside the containers: runs of at least ``min_teaser_cards`` siblings with the
    same tag and class, each a short linked title followed by a summary ("most popular", "read next" grids
    that name themselves with no vocabulary word)."""
    seg = page.seg
    ranges, chars, links = seg.ranges, seg.chars, seg.link_chars
    found: list[tuple[int, int]] = []
    for container in containers:
        for parent in container.iter():
            if len(parent) < params.min_teaser_cards:  # fewer children of any kind (a test in C: most elements)
                continue
            children = [child for child in parent if child in ranges and child.get("class")]
            if len(children) < params.min_teaser_cards:
                continue
            groups: dict[tuple[str, str], list[tuple[int, int]]] = {}
            for child in children:
                groups.setdefault((child.tag, child.get("class")), []).append(ranges[child])
            for spans in groups.values():
                if len(spans) < params.min_teaser_cards:
                    continue
                if all(
                    end - start >= 2
                    and links[start] >= params.max_block_link_density * chars[start]
                    and seg.text_chars(start, end) <= params.max_teaser_card_chars
                    for start, end in spans
                ):
                    found.extend(spans)
    return found


def is_inflow_box(page: PageStats, element: etree._Element, start: int, end: int, params: ExtractionParams) -> bool:
    """A furniture-named element that is an in-text box of the article, not page furniture: a "sidebar",
    "note" or "tip" box of prose set inside a section of the article (DocBook's and magazines' sidebar),
    between the section's own paragraphs. Page furniture inside a broad container (a sidebar column, a
    related-links box) sits next to the article's wrapper, not among its paragraphs, or is links.

    Needs: at least ``min_inflow_box_chars`` of paragraph-length prose (counted whatever the vocabulary
    says), link density at most ``max_inflow_box_link_density``, and a parent that holds, beside it, a
    paragraph of its own that is good text."""
    if params.min_inflow_box_chars <= 0:
        return False
    seg = page.seg
    chars, links = seg.chars, seg.link_chars
    prose = 0
    for i in range(start, end):
        if chars[i] >= params.min_paragraph_chars and links[i] <= params.max_paragraph_link_density * chars[i]:
            prose += chars[i]
    if prose < params.min_inflow_box_chars or seg.link_density(start, end) > params.max_inflow_box_link_density:
        return False
    parent = element.getparent()
    if parent is None:
        return False
    ranges = seg.ranges
    for child in parent:
        if child is element:
            continue
        span = ranges.get(child)
        if span is not None and span[1] - span[0] == 1 and page.is_good(span[0]):
            return True
    return False


def is_data_table(table: etree._Element, params: ExtractionParams) -> bool:
    """A table of data, not of navigation: one of its columns is mostly text of its own. At least
    ``min_data_table_rows`` rows of two or more cells (header rows, all ``<th>``, left out), and a column
    where more than ``min_text_column_share`` of those rows hold a cell whose text is at most
    ``max_data_cell_link_density`` link text (an API table: a linked name, then its description)."""
    text_cells: dict[int, int] = {}
    rows = 0
    for row in table.iter("tr"):
        cells = [cell for cell in row if cell.tag in ("td", "th")]
        if len(cells) < 2 or all(cell.tag == "th" for cell in cells):
            continue
        rows += 1
        for column, cell in enumerate(cells):
            text = "".join("".join(cell.itertext()).split())
            if not text:
                continue
            linked = sum(len("".join("".join(a.itertext()).split())) for a in cell.iter("a"))
            if linked <= params.max_data_cell_link_density * len(text):
                text_cells[column] = text_cells.get(column, 0) + 1
    if rows < params.min_data_table_rows:
        return False
    return any(count > params.min_text_column_share * rows for count in text_cells.values())


def _data_table_link_sums(page: PageStats, inside: Callable[[int, int], bool],
                          params: ExtractionParams) -> list[int] | None:
    """Prefix sums of the link characters of the rows of the data tables (``is_data_table``) inside the
    container, or None when there are none with links (0: off)."""
    if not params.min_data_table_rows:
        return None
    seg = page.seg
    kinds, links = seg.kinds, seg.link_chars
    rows: list[tuple[int, int]] = []
    for (element, (start, end)), tag in zip(seg.ranges.items(), seg.tags):
        if tag != "table" or not inside(start, end):
            continue
        if seg.sum_link_chars[end] == seg.sum_link_chars[start] or "tr" not in kinds[start:end]:
            continue
        if is_data_table(element, params):
            rows.append((start, end))
    if not rows:
        return None
    counted = [0] * len(seg)
    for start, end in rows:
        for i in range(start, end):
            if kinds[i] == "tr":
                counted[i] = links[i]
    sums = [0] * (len(seg) + 1)
    for i, value in enumerate(counted):
        sums[i + 1] = sums[i] + value
    return sums


def _with_introduced_lists(seg: Segmentation, indices: list[int], allowed: bytes, headline: int | None,
                           params: ExtractionParams) -> list[int]:
    """``indices`` with the lists their sentences introduce: a run of list items (or table rows) left out by
    the link rules, right after a block of at least ``min_introduction_words`` words that ends with a colon
    ("Many patches were sent for review:" then the patches' titles, each a link), is part of that sentence;
    the sentence comes back with it when the same rules left it out (a section of the article that is
    mostly its list). ``allowed``: the blocks inside the containers that no verdict left out (named
    furniture stays out); ``headline``: the block taken as the headline, which stays out."""
    kinds, texts = seg.kinds, seg.texts
    kept = set(indices)
    added: list[int] = []
    # only the containers' blocks can be allowed: the walk skips the rest of the page
    for j in range(max(1, allowed.find(1)), allowed.rfind(1) + 1):
        i = j - 1
        if j in kept or kinds[j] not in LIST_ITEM_KINDS or not allowed[j] or not allowed[i] or kinds[i] in LIST_ITEM_KINDS:
            continue
        if i not in kept and kinds[i] in HEADING_TAGS:
            continue  # a heading left out is the headline, or heads a section of pruned blocks
        text = texts[i].rstrip()
        if not text.endswith(":") or len(TOKEN_RE.findall(text)) < params.min_introduction_words:
            continue
        if i not in kept:
            added.append(i)
            h = i - 1
            if h >= 0 and h != headline and allowed[h] and h not in kept and kinds[h] in HEADING_TAGS and kinds[h] != "h1":
                added.append(h)  # the section's own heading (an <h1> left out is the headline)
        while j < len(seg) and allowed[j] and j not in kept and kinds[j] in LIST_ITEM_KINDS:
            added.append(j)
            j += 1
    return sorted(kept.union(added)) if added else indices


def select_blocks(page: PageStats, containers: list[etree._Element], params: ExtractionParams) -> Selection:
    """Blocks of ``containers`` (document order) minus boilerplate, link lists, captions and the headline;
    then the sanity checks."""
    seg = page.seg
    spans = sorted(seg.ranges[c] for c in containers if c in seg.ranges)
    if not spans:
        return Selection((), 0, 0.0, "no_container")
    keep_comments = page.comments_are_content
    if keep_comments:
        # the page's comment threads join the content, wherever they sit (one rule for every page)
        for start, end, _element, verdict in page.verdict_spans:
            if verdict == COMMENTS and not any(s <= start and end <= e for s, e in spans):
                spans = sorted([*(span for span in spans if not (start <= span[0] and span[1] <= end)), (start, end)])
    n = len(seg)
    keep = bytearray(n)
    container_chars = 0
    for start, end in spans:
        keep[start:end] = b"\x01" * (end - start)
        container_chars += seg.text_chars(start, end)
    limit = params.max_pruned_share_of_container * container_chars
    container_set = set(containers)

    if len(spans) == 1:  # most pages: one container, two comparisons instead of a generator
        (low, high), = spans

        def inside(start: int, end: int) -> bool:
            return low <= start and end <= high
    else:
        def inside(start: int, end: int) -> bool:
            return any(s <= start and end <= e for s, e in spans)

    def drop(start: int, end: int) -> None:
        keep[start:end] = bytes(end - start)

    for start, end, element, verdict in page.verdict_spans:
        if element in container_set or not inside(start, end) or (keep_comments and verdict == COMMENTS):
            continue
        if verdict == CAPTION and element in page.card_captions:
            continue
        if verdict == CONTENT:
            for s, e in spans:
                if s <= start and end <= e:
                    keep[start:end] = b"\x01" * (end - start)
        elif verdict == BOILERPLATE and is_inflow_box(page, element, start, end, params):
            continue
        elif verdict in UNGUARDED_VERDICTS or seg.text_chars(start, end) <= limit:
            drop(start, end)
    before_link_lists = bytes(keep)
    list_spans: list[tuple[int, int]] = []  # the link lists dropped that are list elements
    max_inner = params.max_inner_link_density
    # the links of a data table's rows do not make it, or what holds it, a link list
    data_links = _data_table_link_sums(page, inside, params)
    for (element, (start, end)), tag in zip(seg.ranges.items(), seg.tags):
        if end - start < 2 or tag not in LINK_LIST_TAGS or element in container_set:
            continue
        if not inside(start, end):
            continue
        total = seg.text_chars(start, end)
        if total <= limit and seg.link_density(start, end) > max_inner and not (
            data_links and (seg.sum_link_chars[end] - seg.sum_link_chars[start]
                            - data_links[end] + data_links[start]) <= max_inner * total
        ):
            if tag in LIST_ELEMENT_TAGS:
                list_spans.append((start, end))
            drop(start, end)

    if params.min_teaser_cards:
        for start, end in _teaser_cards(page, containers, params):
            if inside(start, end):
                drop(start, end)

    kinds, chars, links = seg.kinds, seg.chars, seg.link_chars
    max_block_ld = params.max_block_link_density
    # A page whose content is a list of links (an index, a listing, a catalogue) keeps its lists: when
    # dropping them leaves less than a page's worth of text and they hold one, they are the content.
    link_lists_are_content = False
    if params.keep_link_list_content:
        kept = sum(chars[i] for i in range(n) if keep[i])
        listed = sum(chars[i] for i in range(n) if before_link_lists[i])
        if kept < params.min_text_chars:
            if listed >= params.min_text_chars:
                keep = bytearray(before_link_lists)
                link_lists_are_content = True
                max_block_ld = float("inf")
        elif params.min_link_list_text_ratio and listed - kept >= params.min_link_list_text_ratio * kept:
            # the lists outweigh the rest many times over: a list page with an introduction
            keep = bytearray(before_link_lists)
            max_block_ld = float("inf")
        elif params.min_list_element_text_ratio and list_spans:
            # lists of links written as lists (<ul>, <ol>, <dl>, <table>) rather than boxes of links are
            # the content's own (a checklist, a table of chapters) unless the rest of it dwarfs them
            dropped = [i for start, end in list_spans for i in range(start, end) if before_link_lists[i] and not keep[i]]
            if sum(chars[i] for i in dropped) >= params.min_list_element_text_ratio * kept:
                for i in dropped:
                    keep[i] = 1
    keep_h1 = params.keep_h1
    if not keep_h1 and params.min_section_h1s:
        # several <h1> in the content are its section headings (documentation generators number their
        # sections with <h1>), not the headline: keep them (the headline one still goes, below)
        keep_h1 = sum(1 for i in range(n) if keep[i] and kinds[i] == "h1") >= params.min_section_h1s
    indices = []
    headline_at = None
    for i in range(n):
        if not keep[i]:
            continue
        kind = kinds[i]
        if kind == "h1" and not keep_h1:
            if headline_at is None:
                headline_at = i
            continue
        if kind == "figcaption" and not params.keep_captions:
            continue
        if links[i] and links[i] >= max_block_ld * chars[i]:
            continue
        indices.append(i)
    # the headline repeated at the top of the body is metadata (``title``), not body text
    headline = page.headline_words
    if headline:
        padded = f" {headline} "
        for position, i in enumerate(indices[: params.max_headline_search_blocks]):
            kind = kinds[i]
            if kind in HEADING_TAGS:
                words = " ".join(TOKEN_RE.findall(seg.texts[i].lower()))
                shorter_title = headline in words and len(headline) >= params.min_headline_match_share * len(words)
                if words and (f" {words} " in padded or shorter_title):
                    if headline_at is None:
                        headline_at = i
                    del indices[position]
                    break
    if params.min_introduction_words:
        indices = _with_introduced_lists(seg, indices, before_link_lists, headline_at, params)
    # headings with nothing after them are section titles of pruned blocks
    while indices and kinds[indices[-1]] in HEADING_TAGS:
        indices.pop()
    if headline_at is not None and indices and headline_at > indices[0]:
        # a heading inside the text (after a version banner, a byline) is not the page's headline: it
        # stays in its place as one of the text's headings (no heading is lost)
        bisect.insort(indices, headline_at)
        headline_at = None
    total = sum(chars[i] for i in indices)
    link_total = sum(links[i] for i in indices)
    density = link_total / total if total else 0.0
    if not total:
        reason = "empty"
    elif total < params.min_text_chars:
        reason = "too_short"
    elif link_lists_are_content:
        reason = "link_list"
    elif density > params.max_link_density:
        reason = "link_density_high"
    else:
        reason = "accepted"
    if headline_at is None and headline and indices:
        # the headline outside the chosen container, just before it (a reference page's title box):
        # the Markdown opens with it all the same
        # the container's first blocks: a heading that is a part of the title ("Install" of "Install |
        # Docs"); farther (past a table of contents): only one that holds the title
        near = indices[0] - params.max_headline_search_blocks
        for i in range(indices[0] - 1, -1, -1):
            if kinds[i] in HEADING_TAGS:
                words = " ".join(TOKEN_RE.findall(seg.texts[i].lower()))
                holds_title = headline in words and len(headline) >= params.min_headline_match_share * len(words)
                if words and (holds_title or (i >= near and f" {words} " in f" {headline} ")):
                    headline_at = i
                    break
    return Selection(tuple(indices), total, density, reason, headline_at)
