"""Blocks: the unit of extracted text, how a document is cut into them, and how they are rendered.

``segment`` walks a cleaned document once (iteratively: no recursion, whatever the nesting) and cuts it
into blocks in document order. Every block-level element covers a contiguous range of blocks, so the text,
link text and "good paragraph" text of any element are differences of prefix sums: the rungs score
candidates in O(1) each instead of re-reading subtrees.

``render_text`` and ``render_markdown`` are pure functions of a block list, so a caller that removes blocks
(cross-page template removal) re-renders with them and gets the same format.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat

from lxml import etree

from ._vocab import (
    BLOCK_TAGS,
    BOILERPLATE_PAIRS,
    COMPOUND_RE,
    BOILERPLATE_WORDS,
    CHROME_ROLES,
    CHROME_TAGS,
    COMMENT_WORDS,
    CONSENT_WORDS,
    NAVIGATION_TAGS,
    COMMA_CHARS,
    CONTENT_TOKEN_RE,
    CONTROL_CHARS_RE,
    EMBED_WORDS,
    HEADING_TAGS,
    HIDDEN_STYLE_RE,
    HIDDEN_TOKENS,
    KIND_BY_TAG,
    ICON_CLASS_RE,
    ICON_MAX_PX,
    LAYOUT_CELL_CHILD_TAGS,
    MAIN_LANDMARK_ROLES,
    MARKDOWN_LINE_START_RE,
    NEGATIVE_WORDS,
    PAGE_TAGS,
    PARAGRAPH_BREAK_RE,
    SOCIAL_WORDS,
    STATE_WORDS,
    STREAMED_SEGMENT_ID_RE,
    SWITCHED_ROLES,
    POSITIVE_WORDS,
    WORD_RE,
)


@dataclass(frozen=True)
class Block:
    """One paragraph-level piece of text. ``kind`` is "h1".."h6", "p", "li", "quote", "pre", "tr" (cells
    joined by " | "), "caption", "figcaption"."""

    kind: str
    text: str


# --- rendering -------------------------------------------------------------------------------------

_TIGHT_KINDS = frozenset(("li", "tr"))


def render_text(blocks: Iterable[Block]) -> str:
    """Plain text: blocks separated by a blank line; consecutive list items and table rows one per line;
    <pre> text verbatim."""
    out: list[str] = []
    previous = None
    for block in blocks:
        if not block.text:
            continue
        if out:
            out.append("\n" if block.kind == previous and block.kind in _TIGHT_KINDS else "\n\n")
        out.append(block.text)
        previous = block.kind
    return "".join(out)


def _markdown_cells(text: str) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in text.split(" | ")) + " |"


def _escape_line_start(match) -> str:
    indent, marker, number, delimiter = match.groups()
    return f"{indent}\\{marker}" if marker else f"{indent}{number}\\{delimiter}"


def render_markdown(blocks: Iterable[Block]) -> str:
    """Markdown: ATX headings, "- " list items, "> " quotes, fenced code for <pre>, pipe tables (the first
    row of a run of rows is the header)."""
    out: list[str] = []
    previous = None
    for block in blocks:
        if not block.text:
            continue
        kind, text = block.kind, block.text
        if kind != "pre":
            text = MARKDOWN_LINE_START_RE.sub(_escape_line_start, text)  # "# x", "- x", "1. x" stay text
        if kind in HEADING_TAGS:
            line = "#" * int(kind[1]) + " " + text.replace("\n", " ")
        elif kind == "li":
            line = "- " + text.replace("\n", "\n  ")
        elif kind == "quote":
            line = "\n".join("> " + row for row in text.split("\n"))
        elif kind == "pre":
            fence = "````" if "```" in text else "```"
            line = f"{fence}\n{text}\n{fence}"
        elif kind == "tr":
            line = _markdown_cells(text)
            if previous != "tr":
                line += "\n" + "|" + " --- |" * (text.count(" | ") + 1)
        elif kind in ("caption", "figcaption"):
            line = "*" + text.replace("\n", " ") + "*"
        else:
            line = text.replace("\n", "  \n")
        if out:
            out.append("\n" if kind == previous and kind in _TIGHT_KINDS else "\n\n")
        out.append(line)
        previous = kind
    return "".join(out)


# --- class / id vocabulary ------------------------------------------------------------------------

HIDDEN, BOILERPLATE, CONTENT, CHROME, NAVIGATION = "hidden", "boilerplate", "content", "chrome", "navigation"
CAPTION, COMMENTS, CONSENT = "caption", "comments", "consent"
#: Verdicts whose elements are left out of the content (subject to the share guards in params, except
#: NAVIGATION, COMMENTS and CONSENT, which never are content whatever their size).
PRUNED_VERDICTS = frozenset((HIDDEN, BOILERPLATE, CHROME, NAVIGATION, CAPTION, COMMENTS, CONSENT))
UNGUARDED_VERDICTS = frozenset((NAVIGATION, COMMENTS, CONSENT))
_NO_ATTRIBUTES: dict = {}
SECTIONING_TAGS = frozenset(("section",))


_HIDDEN_FLAG, _CONTENT_FLAG, _BOILER_FLAG, _POSITIVE_FLAG, _NEGATIVE_FLAG, _COMMENT_FLAG, _CONSENT_FLAG = 1, 2, 4, 8, 16, 32, 64


def _bem_block(token: str) -> str:
    """A BEM class without its modifier: in ``node--promoted`` or ``card__title--sponsored-look`` the part
    after ``--`` says what state or variant the block is in (Drupal marks every node promoted to the front
    page ``node--promoted``), not what the block is."""
    cut = token.find("--")
    return token[:cut] if cut > 0 else token


@lru_cache(maxsize=65536)
def _classify_token(token: str) -> int:
    """Flags of one class/id token (cached per token: tokens repeat across elements and pages)."""
    flags = 0
    lower = token.lower()
    if lower in HIDDEN_TOKENS:
        flags |= _HIDDEN_FLAG
    if CONTENT_TOKEN_RE.match(lower):
        flags |= _CONTENT_FLAG
    words = [w.lower() for w in WORD_RE.findall(_bem_block(token))]
    if STATE_WORDS.intersection(words):
        return flags  # "has-sidebar", "comments-open": layout state, not furniture
    if EMBED_WORDS.intersection(words):
        words = [w for w in words if w not in SOCIAL_WORDS]
    previous = None
    for word in words:
        word_flags = _word_flags(word)
        if not word_flags & (_COMMENT_FLAG | _CONSENT_FLAG) and (previous, word) in BOILERPLATE_PAIRS:
            word_flags |= _BOILER_FLAG
        flags |= word_flags
        previous = word
    return flags


@lru_cache(maxsize=65536)
def _word_flags(word: str) -> int:
    """Flags of one lower-case word of a token, pairs aside (words repeat across tokens far more than
    tokens do: "nav", "item", "container")."""
    flags = 0
    if word in COMMENT_WORDS:
        flags |= _COMMENT_FLAG | _NEGATIVE_FLAG
    elif word in CONSENT_WORDS:
        flags |= _CONSENT_FLAG | _NEGATIVE_FLAG
    elif word in BOILERPLATE_WORDS or COMPOUND_RE.match(word):
        flags |= _BOILER_FLAG
    if word in NEGATIVE_WORDS:
        flags |= _NEGATIVE_FLAG
    if word in POSITIVE_WORDS:
        flags |= _POSITIVE_FLAG
    return flags


@lru_cache(maxsize=16384)
def _token_furniture_words(token: str) -> frozenset[str]:
    """The words of one class/id token that make it furniture or a consent banner (a pair as "read-more",
    a run-together compound as itself); empty for a token that names content or a layout state."""
    lower = token.lower()
    if CONTENT_TOKEN_RE.match(lower):
        return frozenset()
    words = [w.lower() for w in WORD_RE.findall(_bem_block(token))]
    if STATE_WORDS.intersection(words):
        return frozenset()
    if EMBED_WORDS.intersection(words):
        words = [w for w in words if w not in SOCIAL_WORDS]
    found = set()
    previous = None
    for word in words:
        if word in CONSENT_WORDS or word in BOILERPLATE_WORDS or COMPOUND_RE.match(word):
            found.add(word)
        elif (previous, word) in BOILERPLATE_PAIRS:
            found.add(f"{previous}-{word}")
        previous = word
    return frozenset(found)


def furniture_words(value: str) -> frozenset[str]:
    """The words that make a space-joined class + id string furniture (see ``classify_attributes``)."""
    found: frozenset[str] = frozenset()
    for token in value.split():
        words = _token_furniture_words(token)
        if words:
            found = found | words
    return found


@lru_cache(maxsize=65536)
def classify_attributes(value: str) -> tuple[str | None, int]:
    """(verdict, weight) for a space-joined class + id string: verdict is "hidden", "content", "comments",
    "boilerplate" or None; weight is +1 / -1 / 0 for Readability-style scoring. Cached per string: a page
    repeats its class strings ("nav-item" on every menu entry), and a site repeats them across pages."""
    flags = 0
    for token in value.split():
        flags |= _classify_token(token)
    if flags & _HIDDEN_FLAG:
        verdict = HIDDEN
    elif flags & _CONTENT_FLAG:
        verdict = CONTENT
    elif flags & _COMMENT_FLAG:
        verdict = COMMENTS
    elif flags & _CONSENT_FLAG:
        verdict = CONSENT
    elif flags & _BOILER_FLAG:
        verdict = BOILERPLATE
    else:
        verdict = None
    content = flags & _CONTENT_FLAG
    weight = (1 if flags & _POSITIVE_FLAG or content else 0) - (1 if flags & _NEGATIVE_FLAG and not content else 0)
    return verdict, weight


# --- segmentation ----------------------------------------------------------------------------------


@dataclass
class Segmentation:
    """A document cut into blocks, with each block-level element's block range."""

    kinds: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    owners: list[etree._Element] = field(default_factory=list)
    chars: list[int] = field(default_factory=list)
    link_chars: list[int] = field(default_factory=list)
    #: element -> (first block, end block) for every block-level element
    ranges: dict = field(default_factory=dict)
    #: (element, verdict, weight) for elements with a class/id verdict or weight, in document order
    marked: list = field(default_factory=list)
    #: semantic container elements in document order
    semantic: list = field(default_factory=list)
    #: <figure> elements (their short text is a caption or credit, with or without an <img> left)
    figures: list = field(default_factory=list)
    #: prefix sums (len(blocks) + 1 entries)
    sum_chars: list[int] = field(default_factory=list)
    sum_link_chars: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.texts)

    def text_chars(self, start: int, end: int) -> int:
        return self.sum_chars[end] - self.sum_chars[start]

    def link_density(self, start: int, end: int) -> float:
        total = self.sum_chars[end] - self.sum_chars[start]
        return (self.sum_link_chars[end] - self.sum_link_chars[start]) / total if total else 0.0


_CELL_MARK = "\x1f"
_LINE_BREAK = "\x1e"  # what <br> becomes while a block is built (PARAGRAPH_BREAK_RE relies on it)


def _is_data_table(table: etree._Element) -> bool:
    return next(table.iterdescendants(*LAYOUT_CELL_CHILD_TAGS), None) is None


def _finish_text(raw: str, kind: str) -> str:
    if kind == "pre":
        return raw.replace(_LINE_BREAK, "\n").strip("\n").rstrip()
    if kind == "tr":
        cells = [" ".join(cell.split()) for cell in raw.replace(_LINE_BREAK, " ").split(_CELL_MARK)]
        if cells and not cells[0]:
            cells = cells[1:]
        while cells and not cells[-1]:
            cells.pop()
        return " | ".join(cells) if any(cells) else ""
    if _LINE_BREAK in raw:
        lines = (" ".join(line.split()) for line in raw.split(_LINE_BREAK))
        return "\n".join(line for line in lines if line)
    return " ".join(raw.split())


def segment(root: etree._Element, skip_navigation: bool = False) -> Segmentation:
    """Cut the tree under ``root`` into blocks (see module docstring). With ``skip_navigation``, the
    subtrees of <nav>, <aside> and <footer> are not read at all (the extractor never keeps them; a caller
    that wants every block of the page, chrome included, leaves it off)."""
    seg = Segmentation()
    kinds, texts, owners, chars, link_chars = seg.kinds, seg.texts, seg.owners, seg.chars, seg.link_chars
    ranges, marked, semantic, figures = seg.ranges, seg.marked, seg.semantic, seg.figures
    parts: list[str] = []
    links_acc = [0]  # link characters in the block being built
    # stack of (element, kind) for open block-level elements
    stack: list[tuple[etree._Element, str]] = []
    starts: dict = {}
    table_modes: list[bool] = []  # True: data table
    link_depth = 0
    pre_depth = 0
    code_depth = 0  # inside <pre> or <code>
    quote_depth = 0
    # inside a <section>, a <header> introduces that section (the HTML standard gives it the banner role
    # only outside sectioning content): it is read like the section's other blocks, not as chrome. Inside
    # <main> or <article> it stays chrome: there it holds the headline's byline (article benchmark -0.0005)
    section_depth = 0

    def flush() -> None:
        if not parts:
            return
        raw = "".join(parts)
        parts.clear()
        links = links_acc[0]
        links_acc[0] = 0
        if raw.isspace():
            return
        owner, kind = stack[-1] if stack else (root, "p")
        if pre_depth:
            kind = "pre"
        elif quote_depth and kind == "p":
            kind = "quote"
        if _LINE_BREAK in raw and kind != "pre" and kind != "tr":
            # <br><br> separates paragraphs: one block each (link text shared out by length)
            pieces = [piece for piece in map(_finish_text, PARAGRAPH_BREAK_RE.split(raw), repeat(kind)) if piece]
            total = sum(map(len, pieces))
            for text in pieces:
                n = len(text)
                kinds.append(kind)
                texts.append(text)
                owners.append(owner)
                chars.append(n)
                link_chars.append(min(links * n // total, n))
            return
        text = _finish_text(raw, kind)
        if text:
            n = len(text)
            kinds.append(kind)
            texts.append(text)
            owners.append(owner)
            chars.append(n)
            link_chars.append(links if links < n else n)

    skipped = None
    walker = etree.iterwalk(root, events=("start", "end"))
    for event, element in walker:
        tag = element.tag
        if not isinstance(tag, str):  # comments, processing instructions
            if event == "end" and element.tail:
                parts.append(element.tail)
            continue
        if event == "start":
            verdict = None
            weight = 0
            # <html>/<body> classes name the page type; inside code, classes are syntax highlighting
            # ("hljs-comment", "token comment"): neither is a verdict
            attributes = element.items() if tag not in PAGE_TAGS and not code_depth else None
            if attributes:
                attrs = dict(attributes)
                cls = attrs.get("class")
                eid = attrs.get("id")
                role = attrs.get("role")
                role = role.strip().lower() if role else ""
                if cls or eid:
                    verdict, weight = classify_attributes(f"{cls or ''} {eid or ''}")
                    if verdict == BOILERPLATE and (tag == "main" or role in MAIN_LANDMARK_ROLES):
                        verdict = None  # the main landmark is never furniture ("main#skip-to-content")
                if verdict is None or verdict == CONTENT:
                    style = attrs.get("style")
                    if (
                        ("hidden" in attrs and not STREAMED_SEGMENT_ID_RE.match(attrs.get("id") or ""))
                        # a popover (the HTML attribute) is not shown until something opens it
                        or "popover" in attrs
                        # aria-hidden hides from assistive technology, not from the eye: on an inline
                        # element it is an icon or a visual duplicate of a label; a block so marked is
                        # shown (a carousel, a decorative heading) and read like any other
                        or (attrs.get("aria-hidden") == "true" and tag not in BLOCK_TAGS)
                        or (style and HIDDEN_STYLE_RE.search(style))
                    ) and role not in SWITCHED_ROLES:
                        verdict = HIDDEN
                    elif verdict is None and role in CHROME_ROLES:
                        verdict = CHROME
                if tag in CHROME_TAGS and verdict not in (HIDDEN, CONTENT) and not (tag == "header" and section_depth):
                    verdict = NAVIGATION if tag in NAVIGATION_TAGS else verdict or CHROME
            else:
                attrs = _NO_ATTRIBUTES
                if tag in CHROME_TAGS and not (tag == "header" and section_depth):
                    verdict = NAVIGATION if tag in NAVIGATION_TAGS else CHROME
            if (verdict == HIDDEN and tag not in BLOCK_TAGS) or (verdict == NAVIGATION and skip_navigation):
                # hidden inline text (icons, screen-reader labels) and <nav>/<aside>/<footer>, which are
                # never content: not read at all (a hidden inline does not cut its paragraph)
                walker.skip_subtree()
                skipped = element
                if verdict == NAVIGATION:
                    flush()
                continue
            in_data_table = bool(table_modes) and table_modes[-1]
            if tag == "table":
                table_modes.append(_is_data_table(element))
            # an element named by the vocabulary gets its own blocks (so it can be pruned alone), except
            # inline ones inside a data table row, which would cut the row apart
            is_block = tag in BLOCK_TAGS or (verdict is not None and not in_data_table)
            if in_data_table and tag in ("td", "th"):
                parts.append(_CELL_MARK)
                is_block = False
            elif in_data_table and tag == "tr":
                flush()
                stack.append((element, "tr"))
                starts[element] = len(texts)
                is_block = False
                if verdict is not None or weight:
                    marked.append((element, verdict, weight))
            if is_block:
                flush()
                if tag in KIND_BY_TAG:
                    kind = KIND_BY_TAG[tag]
                elif stack and stack[-1][1] not in ("p", "tr"):
                    kind = stack[-1][1]  # an inline-ish element (span.byline) inside a heading, li...
                else:
                    kind = "p"
                stack.append((element, kind))
                starts[element] = len(texts)
                if verdict is not None or weight:
                    marked.append((element, verdict, weight))
                if tag in ("article", "main") or verdict == CONTENT:
                    semantic.append(element)
                elif tag == "figure":
                    figures.append(element)
                elif "itemprop" in attrs or "role" in attrs:
                    semantic.append(element)
            if tag in SECTIONING_TAGS:
                section_depth += 1
            if tag == "a":
                link_depth += 1
            elif tag == "pre":
                pre_depth += 1
                code_depth += 1
            elif tag == "code":
                code_depth += 1
            elif tag == "blockquote":
                quote_depth += 1
            elif tag == "br":
                parts.append(_LINE_BREAK)
            text = element.text
            if text:
                parts.append(text)
                if link_depth:
                    links_acc[0] += len(text.strip())
        elif element is skipped:
            skipped = None
            if element.tail:
                parts.append(element.tail)
                if link_depth:
                    links_acc[0] += len(element.tail.strip())
        else:
            if tag in SECTIONING_TAGS:
                section_depth -= 1
            if tag == "a":
                link_depth -= 1
            elif tag == "pre":
                pre_depth -= 1
                code_depth -= 1
            elif tag == "code":
                code_depth -= 1
            elif tag == "blockquote":
                quote_depth -= 1
            elif tag == "table":
                table_modes.pop()
            if stack and stack[-1][0] is element:
                flush()
                stack.pop()
                ranges[element] = (starts.pop(element), len(texts))
            tail = element.tail
            if tail:
                parts.append(tail)
                if link_depth:
                    links_acc[0] += len(tail.strip())
    flush()

    total = 0
    seg.sum_chars = sums = [0]
    for n in chars:
        total += n
        sums.append(total)
    total = 0
    seg.sum_link_chars = sums = [0]
    for n in link_chars:
        total += n
        sums.append(total)
    return seg


def count_commas(text: str) -> int:
    count = text.count(",")
    if not text.isascii():
        count += sum(text.count(c) for c in COMMA_CHARS[1:])
    return count


def find_image_holders(root: etree._Element) -> list[etree._Element]:
    """The nearest block-level element around every real image (icons and emoji left out): where its
    text is short, that text is a caption or a photo credit (see PageStats)."""
    holders = []
    for image in root.iter("img"):
        cls = image.get("class")
        if cls and ICON_CLASS_RE.search(cls):
            continue
        width = image.get("width")
        if width and width.isdigit() and int(width) <= ICON_MAX_PX:
            continue
        element = image.getparent()
        while element is not None and element.tag not in BLOCK_TAGS:
            element = element.getparent()
        if element is not None and element.tag not in ("body", "html"):
            holders.append(element)
    return holders


def blocks_from(seg: Segmentation, indices: Sequence[int]) -> tuple[Block, ...]:
    kinds, texts = seg.kinds, seg.texts
    return tuple(Block(kinds[i], CONTROL_CHARS_RE.sub("", texts[i])) for i in indices)
