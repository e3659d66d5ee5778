"""Blocks: the unit of extracted text, how a document is cut into them, and how they are rendered.

``segment`` walks a cleaned document once (iteratively: no recursion, whatever the nesting) and cuts it
into blocks in document order. Every block-level element covers a contiguous range of blocks, so the text,
link text and "good paragraph" text of any element are differences of prefix sums: the rungs score
candidates in O(1) each instead of re-reading subtrees.

``render_text`` and ``render_markdown`` are pure functions of a block list, so a caller that removes blocks
(cross-page template removal) re-renders with them and gets the same format.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from lxml import etree

from ._vocab import (
    BLOCK_TAGS,
    BOILERPLATE_PAIRS,
    BOILERPLATE_STEMS,
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
    CELL_BLOCK_TAGS,
    CODE_LANGUAGE_ATTRIBUTES,
    CODE_LANGUAGE_CLASS_RE,
    CODE_TERM_WORDS,
    INLINE_CODE_TAGS,
    LAYOUT_CELL_MIN_SHARE,
    LAYOUT_TABLE_CHILD_TAGS,
    LAYOUT_TABLE_ROLES,
    NO_CODE_LANGUAGES,
    PERMALINK_MAX_CHARS,
    MAIN_LANDMARK_ROLES,
    MARKDOWN_LINE_START_RE,
    NEGATIVE_WORDS,
    PAGE_TAGS,
    PARAGRAPH_BREAK_RE,
    SEMANTIC_TAGS,
    SOCIAL_WORDS,
    STATE_WORDS,
    STREAMED_SEGMENT_ID_RE,
    SWITCHED_ROLES,
    POSITIVE_WORDS,
    WORD_RE,
)


@dataclass(frozen=True)
class Block:
    """One paragraph-level piece of text. ``kind`` is "h1".."h6", "p", "li", "dt" (a definition's term),
    "dd" (its description), "quote", "pre", "tr" (cells joined by " | "), "caption", "figcaption".

    ``markdown`` is the block's own Markdown where it says more than ``text``, else None: code spans in
    backticks, a definition term that is code as a code span, a code block fenced with its declared
    language, a table row as a GFM row (the first row of a table followed by the delimiter line). It
    holds no block prefix ("#", "- ", "> "): the kind gives that when the blocks are rendered."""

    kind: str
    text: str
    markdown: str | None = None

    def as_dict(self) -> dict[str, str]:
        """The block as a record holds it: {"kind", "text"}, and "md" when it has its own Markdown."""
        if self.markdown is None:
            return {"kind": self.kind, "text": self.text}
        return {"kind": self.kind, "text": self.text, "md": self.markdown}


# --- rendering -------------------------------------------------------------------------------------

#: kinds whose consecutive blocks go one per line in the text, by class: list items (and definitions, which
#: were list items before they had kinds of their own), table rows
_TIGHT_CLASS = {"li": "item", "dt": "item", "dd": "item", "tr": "tr"}
_UNESCAPED_PIPE_RE = re.compile(r"(?<!\\)\|")
_BACKTICKS_RE = re.compile(r"`+")


def render_text(blocks: Iterable[Block]) -> str:
    """Plain text: blocks separated by a blank line; consecutive list items (terms and descriptions too)
    and table rows one per line; <pre> text verbatim."""
    out: list[str] = []
    previous = None
    for block in blocks:
        if not block.text:
            continue
        tight = _TIGHT_CLASS.get(block.kind)
        if out:
            out.append("\n" if tight is not None and tight == previous else "\n\n")
        out.append(block.text)
        previous = tight
    return "".join(out)


def _markdown_cells(text: str) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in text.split(" | ")) + " |"


def _delimiter_row(cells: int) -> str:
    return "|" + " --- |" * max(1, cells)


def _row_cells(row: str) -> int:
    """Cells of a GFM row line ("| a | b \\| c |" has two)."""
    return max(1, len(_UNESCAPED_PIPE_RE.findall(row)) - 1)


def code_fence(code: str) -> str:
    """A backtick fence longer than any backtick run in ``code`` (at least three)."""
    longest = max((len(run) for run in _BACKTICKS_RE.findall(code)), default=0)
    return "`" * max(3, longest + 1)


def code_span(code: str) -> str:
    """``code`` as a CommonMark code span: a backtick string longer than any run inside it, and a space of
    padding when it starts or ends with a backtick (or is all spaces' neighbour of one); "" for no code."""
    if not code:
        return ""
    longest = max((len(run) for run in _BACKTICKS_RE.findall(code)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if code[0] == "`" or code[-1] == "`" else ""
    return f"{ticks}{pad}{code}{pad}{ticks}"


#: the marks ``MARKDOWN_LINE_START_RE`` escapes at a line start (after spaces), digits aside
_LINE_START_MARKS = "#>*+-"


def _escape_line_start(match) -> str:
    indent, marker, number, delimiter = match.groups()
    return f"{indent}\\{marker}" if marker else f"{indent}{number}\\{delimiter}"


def render_markdown(blocks: Iterable[Block]) -> str:
    """Markdown: ATX headings, "- " list items, a definition's term and description as paragraphs, "> "
    quotes, fenced code for <pre> (with its language when the page declared one), GFM tables (a table's
    header is its first row; a run of rows without one gets its first row as header). A block's own
    ``markdown`` is used where it has one, its text otherwise."""
    out: list[str] = []
    previous = None
    for block in blocks:
        if not block.text:
            continue
        kind, text, own = block.kind, block.text, block.markdown
        separator = "\n\n"
        if kind == "pre":
            if own is not None:
                line = own
            else:
                fence = code_fence(text)
                line = f"{fence}\n{text}\n{fence}"
        elif kind == "tr":
            if own is not None:
                line = own
                starts_table = "\n" in own  # a table's first row carries its delimiter line
            else:
                line = _markdown_cells(text)
                starts_table = False
            if previous == "tr" and not starts_table:
                separator = "\n"
            elif not starts_table:
                line += "\n" + _delimiter_row(_row_cells(line))
        else:
            text = own if own is not None else text
            # one line that does not open with a mark or a digit (most blocks) has nothing to escape: the
            # regex would try every position of it for a line start (its \d is any decimal digit)
            head = text.lstrip()[:1]
            if "\n" in text or head in _LINE_START_MARKS or head.isdecimal():
                text = MARKDOWN_LINE_START_RE.sub(_escape_line_start, text)
            if kind in HEADING_TAGS:
                line = "#" * int(kind[1]) + " " + text.replace("\n", " ")
            elif kind == "li":
                line = "- " + text.replace("\n", "\n  ")
                if previous == "li":
                    separator = "\n"
            elif kind == "quote":
                line = "\n".join("> " + row for row in text.split("\n"))
            elif kind in ("caption", "figcaption"):
                line = "*" + text.replace("\n", " ") + "*"
            else:
                line = text.replace("\n", "  \n")
        if out:
            out.append(separator)
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


def _vocabulary_word_flags(word: str) -> int:
    """Flags of one lower-case word of a token, pairs aside."""
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


#: The flags of every word the vocabulary names, worked out once: a word outside it has a flag only when it
#: is a run-together compound (COMPOUND_RE, tried only on a word that starts with one of its stems). A
#: table, not a memo: a page's class words are looked up, not worked out, the first time too.
_WORD_FLAGS = {
    word: _vocabulary_word_flags(word)
    for word in COMMENT_WORDS | CONSENT_WORDS | BOILERPLATE_WORDS | NEGATIVE_WORDS | POSITIVE_WORDS
}
_COMPOUND_STEMS = tuple(BOILERPLATE_STEMS)
_SMALL_WORD_RE = re.compile("[a-z]+")
#: CONTENT_TOKEN_RE for a lower-case ASCII token (most): without its IGNORECASE, which costs more than half
#: of each test, and is needed only where a letter outside ASCII folds to one of its letters ("\u017ftory")
_CONTENT_TOKEN_SMALL_RE = re.compile(CONTENT_TOKEN_RE.pattern)
#: the first words of BOILERPLATE_PAIRS: a word that is none of them starts no pair (no tuple to build)
_PAIR_FIRSTS = frozenset(first for first, _second in BOILERPLATE_PAIRS)


def _is_compound(word: str) -> bool:
    """A run-together furniture word ("relatedposts", "sharebuttons": COMPOUND_RE), the pattern tried only on
    a word that starts with one of its stems."""
    return word.startswith(_COMPOUND_STEMS) and COMPOUND_RE.match(word) is not None


def _names_content(lower: str) -> bool:
    """Does the lower-case token name the article body itself (CONTENT_TOKEN_RE)?"""
    return (_CONTENT_TOKEN_SMALL_RE if lower.isascii() else CONTENT_TOKEN_RE).match(lower) is not None


def _token_words(token: str, lower: str) -> list[str]:
    """The lower-case words of a class/id token (``lower`` is ``token.lower()``) without its BEM modifier:
    in ``node--promoted`` or ``card__title--sponsored-look`` the part after ``--`` says what state or variant
    the block is in (Drupal marks every node promoted to the front page ``node--promoted``), not what the
    block is. A token without capitals (most) is split as it is: its words need no lowering."""
    cut = token.find("--")
    if lower == token:  # no capital: WORD_RE's words are the runs of small letters
        return _SMALL_WORD_RE.findall(token[:cut] if cut > 0 else token)
    return [word.lower() for word in WORD_RE.findall(token[:cut] if cut > 0 else token)]


@lru_cache(maxsize=65536)
def _classify_token(token: str) -> int:
    """Flags of one class/id token (cached per token: tokens repeat across elements and pages)."""
    lower = token.lower()
    flags = _HIDDEN_FLAG if lower in HIDDEN_TOKENS else 0
    if _names_content(lower):
        flags |= _CONTENT_FLAG
    words = _token_words(token, lower)
    if not STATE_WORDS.isdisjoint(words):
        return flags  # "has-sidebar", "comments-open": layout state, not furniture
    if not EMBED_WORDS.isdisjoint(words):
        words = [w for w in words if w not in SOCIAL_WORDS]
    previous = None
    for word in words:
        word_flags = _WORD_FLAGS.get(word)
        if word_flags is None:
            word_flags = _BOILER_FLAG if _is_compound(word) else 0
        if (previous in _PAIR_FIRSTS and not word_flags & (_COMMENT_FLAG | _CONSENT_FLAG)
                and (previous, word) in BOILERPLATE_PAIRS):
            word_flags |= _BOILER_FLAG
        flags |= word_flags
        previous = word
    return flags


@lru_cache(maxsize=16384)
def _token_furniture_words(token: str) -> frozenset[str]:
    """The words of one class/id token that make it furniture or a consent banner (a pair as "read-more",
    a run-together compound as itself); empty for a token that names content or a layout state."""
    lower = token.lower()
    if _names_content(lower):
        return frozenset()
    words = _token_words(token, lower)
    if not STATE_WORDS.isdisjoint(words):
        return frozenset()
    if not EMBED_WORDS.isdisjoint(words):
        words = [w for w in words if w not in SOCIAL_WORDS]
    found = set()
    previous = None
    for word in words:
        if (word in CONSENT_WORDS or word in BOILERPLATE_WORDS
                or _is_compound(word)):
            found.add(word)
        elif previous in _PAIR_FIRSTS and (previous, word) in BOILERPLATE_PAIRS:
            found.add(f"{previous}-{word}")
        previous = word
    return frozenset(found)


@lru_cache(maxsize=16384)
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
    #: each block's Markdown where it differs from its text (``Block.markdown``), else None
    markdowns: list[str | None] = field(default_factory=list)
    #: element -> (first block, end block) for every block-level element
    ranges: dict = field(default_factory=dict)
    #: the tag of each element of ``ranges``, in its order (``zip(ranges.items(), tags)``): the rungs that
    #: look at every block-level element by tag do not read each one's tag from the tree again
    tags: list[str] = field(default_factory=list)
    #: (element, verdict, weight) for elements with a class/id verdict or weight, in document order
    marked: list = field(default_factory=list)
    #: element -> its class and id as ``classify_attributes`` read them ("class id", the class alone when there
    #: is no id), for the elements marked
    #: boilerplate (the framework-word test reads their words again)
    furniture_values: dict = field(default_factory=dict)
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
# Marks of the Markdown while a block is built: noncharacters (U+FDD0..), which are not for interchange (a
# page that sends one anyway loses it from its text)
CODE_OPEN = "\ufdd0"
CODE_CLOSE = "\ufdd1"
_CELL_BREAK = "\ufdd2"  # between two blocks of one table cell: " " in the text, "<br>" in the Markdown
_MARKS = CODE_OPEN + CODE_CLOSE + _CELL_BREAK
_MARKS_RE = re.compile(f"([{CODE_OPEN}{CODE_CLOSE}])")
_PLAIN_TABLE = str.maketrans({CODE_OPEN: None, CODE_CLOSE: None, _CELL_BREAK: " "})
_SPACES_RE = re.compile(" {2,}")
_WORD_CHAR_RE = re.compile(r"\w")


def _table_layout(table: etree._Element, page_chars: Callable[[], int]) -> tuple[bool, int]:
    """(data table, columns): a table is layout when it says so (role="presentation"), holds a table,
    a heading or a sectioning element, is one row of cells holding blocks (a page's columns), or has a
    cell holding blocks and ``LAYOUT_CELL_MIN_SHARE`` of the page's text (``page_chars``: one cell
    wrapping the page); columns is the most cells of a row of a data table."""
    if (table.get("role") or "").strip().lower() in LAYOUT_TABLE_ROLES:
        return False, 0
    if next(table.iterdescendants(*LAYOUT_TABLE_CHILD_TAGS), None) is not None:
        return False, 0
    rows = 0
    columns = 0
    blocky: list[etree._Element] = []
    for row in table.iter("tr"):
        rows += 1
        cells = [cell for cell in row if cell.tag in ("td", "th")]
        columns = max(columns, len(cells))
        blocky.extend(cell for cell in cells if next(cell.iterdescendants(*CELL_BLOCK_TAGS), None) is not None)
    if blocky and rows <= 1:
        return False, 0
    if blocky:
        limit = LAYOUT_CELL_MIN_SHARE * page_chars()
        if any(len("".join(cell.itertext())) >= limit for cell in blocky):
            return False, 0
    return True, columns


def code_language(pre: etree._Element) -> str | None:
    """The language a code block declares: on the <pre>, its first <code> child, or a wrapper up to two
    levels above (Sphinx's ``div.highlight-python > div.highlight > pre``)."""
    candidates = [pre]
    child = next(iter(pre), None)
    if child is not None and child.tag == "code":
        candidates.append(child)
    parent = pre.getparent()
    for _ in range(2):
        if parent is None:
            break
        candidates.append(parent)
        parent = parent.getparent()
    for element in candidates:
        for name in CODE_LANGUAGE_ATTRIBUTES:
            value = (element.get(name) or "").strip()
            if value and value.lower() not in NO_CODE_LANGUAGES and " " not in value:
                return value
        tokens = (element.get("class") or "").split()
        for i, token in enumerate(tokens):
            match = CODE_LANGUAGE_CLASS_RE.match(token)
            if match:
                language = match.group(1)
                return None if language.lower() in NO_CODE_LANGUAGES else language
            if token == "sourceCode" and i + 1 < len(tokens):  # pandoc: class="sourceCode python"
                return tokens[i + 1]
    return None


def _is_code_term(term: etree._Element) -> bool:
    """A definition term that is code: a signature by its class (Sphinx's "sig"), or all its text inside
    code elements."""
    cls = term.get("class")
    if cls and CODE_TERM_WORDS.intersection(w.lower() for token in cls.split() for w in WORD_RE.findall(token)):
        return True
    outside = term.text or ""
    inside = 0
    for element in term.iterdescendants():
        if element.tag in INLINE_CODE_TAGS:
            inside += len("".join(element.itertext()).strip())
    if not inside:
        return False
    total = len("".join(term.itertext()).strip())
    return inside >= total and not outside.strip()


#: the verdicts of class/id words that leave an element out of the content
_FURNITURE_VERDICTS = frozenset((BOILERPLATE, COMMENTS, CONSENT))
#: how many elements may open a section before its heading (Django's anchors: three empty <span>s)
_SECTION_OPENING_MAX_NODES = 8


def is_permalink(anchor: etree._Element, href: str) -> bool:
    """An anchor to the element it sits in (its heading, term, caption or section) whose text is only a
    symbol: a permalink ("¶", "#", "§", an icon), never the page's text. The target is an ancestor, an
    element inside the anchor's heading or term, or an empty element right before it (Django's
    ``<span id=x></span><h2>Title<a href="#x">¶</a></h2>``)."""
    text = "".join(anchor.itertext()).strip()
    if len(text) > PERMALINK_MAX_CHARS or _WORD_CHAR_RE.search(text):
        return False
    fragment = href[1:]
    if not fragment:
        return True
    parent = anchor.getparent()
    while parent is not None:
        if _names(parent, fragment):
            return True
        if parent.tag in HEADING_TAGS or parent.tag == "dt":
            if any(_names(element, fragment) for element in parent.iterdescendants()):
                return True
            before = parent.getprevious()
            while before is not None and not (before.tail or "").strip() and not "".join(before.itertext()).strip():
                if _names(before, fragment):
                    return True
                before = before.getprevious()
        parent = parent.getparent()
    return False


def opens_with_permalinked_heading(element: etree._Element) -> bool:
    """Does ``element`` open with a heading (no text before it) that holds a permalink to the element or to
    an anchor inside it? Then it is a section of the document with its own address (docutils' ``<div
    class="section" id="s-testing-tools"><span id="testing-tools"></span><h1>Testing tools<a
    href="#testing-tools">¶</a></h1>``), whatever its class and id say. A box of furniture titled like one
    ("Related posts") has no permalink: nothing links to it as a place in the document."""
    if (element.text or "").strip():
        return False
    ids: set[str] = set()
    for seen, node in enumerate(element.iterdescendants()):
        if seen >= _SECTION_OPENING_MAX_NODES or not isinstance(node.tag, str):
            return False
        if node.tag in HEADING_TAGS:
            names = {element.get("id"), element.get("name")} | ids
            for anchor in node.iter("a"):
                href = anchor.get("href") or ""
                if href[1:] and href.startswith("#") and href[1:] in names and is_permalink(anchor, href):
                    return True
            return False
        if (node.text or "").strip() or (node.tail or "").strip():
            return False  # text before the heading (or a tail: the heading is not inside it either)
        ids.update(value for value in (node.get("id"), node.get("name")) if value)
    return False


_ID_WORD_RE = re.compile(r"[^\W_]+")


def _id_of_own_words(eid: str, heading: etree._Element) -> bool:
    """Is ``eid`` made from the heading's own words ("Login_shell", "h-disable-root-login")? Every word of
    the heading is in it, in order, and they are most of its words (a generator's short prefix aside)."""
    id_words = [word.lower() for word in _ID_WORD_RE.findall(eid)]
    text_words = [word.lower() for word in _ID_WORD_RE.findall("".join(heading.itertext()))]
    if not text_words or 2 * len(text_words) < len(id_words):
        return False
    at = 0
    for word in text_words:
        try:
            at = id_words.index(word, at) + 1
        except ValueError:
            return False
    return True


def _holds_permalink(heading: etree._Element) -> bool:
    """Does ``heading`` hold a permalink to itself or its section (``is_permalink``), or does one stand
    right before it in its section (rustdoc's ``<section id=m><a href="#m">§</a><h4>fn next(...)</h4>``)?"""
    for anchor in heading.iter("a"):
        href = anchor.get("href") or ""
        if href.startswith("#") and is_permalink(anchor, href):
            return True
    parent = heading.getparent()
    before = heading.getprevious()
    for _ in range(_SECTION_OPENING_MAX_NODES):
        if before is None or parent is None:
            break
        href = before.get("href") or "" if before.tag == "a" else ""
        if href[1:] and href.startswith("#") and href[1:] in (parent.get("id"), heading.get("id")) \
                and is_permalink(before, href):
            return True
        before = before.getprevious()
    return False


def _names(element: etree._Element, fragment: str) -> bool:
    return element.get("id") == fragment or element.get("name") == fragment


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


def inline_markdown(line: str) -> str:
    """One line of a block (whitespace already collapsed) with its code marks as code spans."""
    out: list[str] = []
    code: list[str] | None = None
    for piece in _MARKS_RE.split(line):
        if piece == CODE_OPEN:
            if code is None:
                code = []
        elif piece == CODE_CLOSE:
            if code is not None:
                out.append(_spaced_code_span("".join(code)))
                code = None
        elif code is not None:
            code.append(piece)
        else:
            out.append(piece)
    if code is not None:
        out.append(_spaced_code_span("".join(code)))
    return _SPACES_RE.sub(" ", "".join(out)).strip()


def _spaced_code_span(code: str) -> str:
    """A code span with the spaces at the edges of ``code`` put outside it."""
    inner = code.strip()
    if not inner:
        return " " if code else ""
    before = " " if code[0].isspace() else ""
    after = " " if code[-1].isspace() else ""
    return before + code_span(inner) + after


def _finish_markdown(raw: str, kind: str) -> str:
    """The Markdown of a block that is not a table row or code block (see ``_finish_text``)."""
    raw = raw.replace(_CELL_BREAK, " ")
    if _LINE_BREAK in raw:
        lines = (inline_markdown(" ".join(line.split())) for line in raw.split(_LINE_BREAK))
        return "\n".join(line for line in lines if line)
    return inline_markdown(" ".join(raw.split()))


def _row_markdown(raw: str, columns: int, first: bool) -> str:
    """A data table's row as a GFM row: every cell its inline Markdown, several blocks of a cell joined by
    "<br>", pipes escaped; padded to the table's ``columns``; the ``first`` row of a table (its header)
    followed by the delimiter line."""
    cells = raw.replace(_LINE_BREAK, _CELL_BREAK).split(_CELL_MARK)[1:]
    out = []
    for cell in cells:
        pieces = (inline_markdown(" ".join(piece.split())) for piece in cell.split(_CELL_BREAK))
        out.append("<br>".join(piece for piece in pieces if piece).replace("|", "\\|"))
    while len(out) > 1 and not out[-1] and len(out) > columns:
        out.pop()
    out.extend("" for _ in range(columns - len(out)))
    row = "| " + " | ".join(out) + " |"
    return row + "\n" + _delimiter_row(len(out)) if first else row


@dataclass
class _Table:
    """A table being read: data or layout, its columns, and whether its header row was written."""

    data: bool
    columns: int = 0
    rows: int = 0
    cells: int = 0  # open data cells (0 or 1: a data table holds no table)


#: the attributes that can hide an element (one set test rules them all out for most elements)
_HIDING_ATTRIBUTES = frozenset(("hidden", "popover", "aria-hidden", "style"))
#: the tags ``segment`` does something particular for when they open (beyond the block bookkeeping) and
#: when they close: one set test for the other elements, most of a page, instead of a chain of them
_START_TAGS = SECTIONING_TAGS | HEADING_TAGS | INLINE_CODE_TAGS | frozenset(("a", "pre", "blockquote", "br"))
_END_TAGS = SECTIONING_TAGS | HEADING_TAGS | INLINE_CODE_TAGS | frozenset(("a", "pre", "blockquote", "table", "td", "th"))
#: the kinds of an open block that an inline-ish element inside it does not take (it makes a paragraph)
_NOT_INHERITED_KINDS = frozenset(("p", "tr"))


def segment(root: etree._Element, skip_navigation: bool = False) -> Segmentation:
    """Cut the tree under ``root`` into blocks (see module docstring). With ``skip_navigation``, the
    subtrees of <nav>, <aside> and <footer> are not read at all (the extractor never keeps them; a caller
    that wants every block of the page, chrome included, leaves it off)."""
    seg = Segmentation()
    kinds, texts, owners, chars, link_chars = seg.kinds, seg.texts, seg.owners, seg.chars, seg.link_chars
    markdowns = seg.markdowns
    ranges, marked, semantic, figures = seg.ranges, seg.marked, seg.semantic, seg.figures
    range_tags = seg.tags
    furniture_values = seg.furniture_values
    parts: list[str] = []
    links = 0  # link characters in the block being built
    # stack of (element, kind, its first block) for open block-level elements
    stack: list[tuple[etree._Element, str, int]] = []
    tables: list[_Table] = []
    data_table: _Table | None = None  # the innermost table when it is a data table (tables[-1].data)
    link_depth = 0
    pre_depth = 0
    pre_language: str | None = None  # of the outermost <pre> (set when one opens)
    code_depth = 0  # inside <pre> or <code>
    inline_code: list[etree._Element] = []  # the open element that writes a code span (one at a time)
    quote_depth = 0
    # inside a <section>, a <header> introduces that section (the HTML standard gives it the banner role
    # only outside sectioning content): it is read like the section's other blocks, not as chrome. Inside
    # <main> or <article> it stays chrome: there it holds the headline's byline (article benchmark -0.0005)
    section_depth = 0
    heading_depth = 0
    own_page_links: list[etree._Element] = []
    anchored_heading: list[etree._Element] = []  # the open heading that holds a permalink, if any

    root_chars: list[int] = []

    def page_chars() -> int:
        if not root_chars:
            root_chars.append(len("".join(root.itertext())))
        return root_chars[0]

    def add(kind: str, owner, text: str, markdown: str | None, links: int) -> None:
        n = len(text)
        kinds.append(kind)
        texts.append(text)
        owners.append(owner)
        chars.append(n)
        link_chars.append(links if links < n else n)
        markdowns.append(markdown if markdown != text else None)

    def flush() -> None:
        nonlocal links
        if not parts:
            return
        raw = "".join(parts)
        parts.clear()
        block_links = links
        links = 0
        if raw.isspace():
            return
        if stack:
            owner, kind, _first = stack[-1]
        else:
            owner, kind = root, "p"
        if pre_depth:
            kind = "pre"
        elif quote_depth and kind == "p":
            kind = "quote"
        # three tests, no generator: in text without the marks' plane (most of it) each answers at once
        marked_up = CODE_OPEN in raw or CODE_CLOSE in raw or _CELL_BREAK in raw
        plain = raw.translate(_PLAIN_TABLE) if marked_up else raw
        if kind == "tr":
            text = _finish_text(plain, kind)
            if text:
                table = data_table
                if table is not None:
                    markdown = _row_markdown(raw, table.columns, first=not table.rows)
                    table.rows += 1
                else:
                    markdown = None
                add(kind, owner, text, markdown, block_links)
            return
        if kind == "pre":
            text = _finish_text(plain, kind)
            if text:
                markdown = None
                if pre_language:
                    fence = code_fence(text)
                    markdown = f"{fence}{pre_language}\n{text}\n{fence}"
                add(kind, owner, text, markdown, block_links)
            return
        if _LINE_BREAK in raw:
            # <br><br> separates paragraphs: one block each (link text shared out by length)
            pieces = [(_finish_text(piece.translate(_PLAIN_TABLE), kind),
                       _finish_markdown(piece, kind) if marked_up else None)
                      for piece in PARAGRAPH_BREAK_RE.split(raw)]
            pieces = [(text, markdown) for text, markdown in pieces if text]
            total = sum(len(text) for text, _ in pieces)
            for text, markdown in pieces:
                add(kind, owner, text, markdown, min(block_links * len(text) // total, len(text)))
            return
        text = " ".join(plain.split())  # _finish_text of a block that is no row, no code, without <br>
        if text:
            add(kind, owner, text, _finish_markdown(raw, kind) if marked_up else None, block_links)

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
            if code_depth or tag in PAGE_TAGS:
                attrs = None
                if tag in CHROME_TAGS and not (tag == "header" and section_depth):
                    verdict = NAVIGATION if tag in NAVIGATION_TAGS else CHROME
            else:
                # the attribute names, and the values read one by one when present: a dict of every
                # attribute (names and values) cost twice as much, and most elements need only their class
                attrs = element.keys()
                if attrs:
                    cls = element.get("class")
                    eid = element.get("id") if "id" in attrs else None
                    role = element.get("role") if "role" in attrs else None
                    role = role.strip().lower() if role else ""
                    if cls or eid:
                        # (the class alone when there is no id, most elements: the same words, no new string)
                        value = f"{cls or ''} {eid}" if eid else cls
                        verdict, weight = classify_attributes(value)
                        if verdict not in _FURNITURE_VERDICTS:
                            pass
                        elif verdict == BOILERPLATE and (tag == "main" or role in MAIN_LANDMARK_ROLES):
                            verdict = None  # the main landmark is never furniture ("main#skip-to-content")
                        elif (eid and classify_attributes(cls or "")[0] not in _FURNITURE_VERDICTS
                              and opens_with_permalinked_heading(element)):
                            # a section of the document, its id (the target of its heading's permalink) made
                            # from its heading's words ("s-testing-tools" over "Testing tools", "s-comments"
                            # over "Comments"): the id names its subject, not a piece of furniture, a comment
                            # thread or a cookie banner; its class words still count
                            verdict, weight = classify_attributes(cls or "")
                        elif (eid and tag in HEADING_TAGS
                              and classify_attributes(cls or "")[0] not in _FURNITURE_VERDICTS
                              and _id_of_own_words(eid, element)):
                            # a heading's id made from its own words ("Login_shell" over "Login shell", a wiki's
                            # anchor) is the heading's address, not a login box; its class words still count
                            verdict, weight = classify_attributes(cls or "")
                        elif verdict == BOILERPLATE and heading_depth and tag not in BLOCK_TAGS:
                            # a heading is read whole: the class of a link or span in it names how the heading
                            # links (Sphinx's "toc-backref"), not a piece of furniture inside it
                            verdict = None
                    if verdict is None or verdict == CONTENT:
                        if _HIDING_ATTRIBUTES.isdisjoint(attrs):
                            if verdict is None and role in CHROME_ROLES:
                                verdict = CHROME
                        elif (
                            ("hidden" in attrs and not STREAMED_SEGMENT_ID_RE.match(eid or ""))
                            # a popover (the HTML attribute) is not shown until something opens it
                            or "popover" in attrs
                            # aria-hidden hides from assistive technology, not from the eye: on an inline
                            # element it is an icon or a visual duplicate of a label; a block so marked is
                            # shown (a carousel, a decorative heading) and read like any other
                            or (element.get("aria-hidden") == "true" and tag not in BLOCK_TAGS)
                            or ((style := element.get("style")) and HIDDEN_STYLE_RE.search(style))
                        ) and role not in SWITCHED_ROLES:
                            verdict = HIDDEN
                        elif verdict is None and role in CHROME_ROLES:
                            verdict = CHROME
                    if tag in CHROME_TAGS and verdict not in (HIDDEN, CONTENT) and not (tag == "header" and section_depth):
                        verdict = NAVIGATION if tag in NAVIGATION_TAGS else verdict or CHROME
                elif tag in CHROME_TAGS and not (tag == "header" and section_depth):
                    verdict = NAVIGATION if tag in NAVIGATION_TAGS else CHROME
            table = data_table  # (inside one of its cells when table.cells)
            href = element.get("href") if tag == "a" else None
            if (
                (verdict is not None and (
                    (verdict == HIDDEN and (tag not in BLOCK_TAGS or (table is not None and table.cells > 0)))
                    or (verdict == NAVIGATION and skip_navigation)))
                or (href and href.startswith("#") and is_permalink(element, href))
            ):
                # hidden inline text (icons, screen-reader labels), <nav>/<aside>/<footer>, which are
                # never content, and permalink anchors: not read at all (a hidden inline does not cut
                # its paragraph)
                walker.skip_subtree()
                skipped = element
                if verdict == NAVIGATION:
                    flush()
                continue
            if tag == "table":
                data, columns = _table_layout(element, page_chars)
                tables.append(_Table(data, columns))
                data_table = tables[-1] if data else None
            # an element named by the vocabulary gets its own blocks (so it can be pruned alone), except
            # inline ones inside a data table row, which would cut the row apart
            is_block = tag in BLOCK_TAGS or (verdict is not None and table is None)
            if table is None:
                pass
            elif tag == "td" or tag == "th":
                parts.append(_CELL_MARK)
                table.cells += 1
                is_block = False
            elif tag == "tr":
                flush()
                stack.append((element, "tr", len(texts)))
                is_block = False
                if verdict is not None or weight:
                    marked.append((element, verdict, weight))
                    if verdict == BOILERPLATE:
                        furniture_values[element] = value
            elif table.cells > 0 and is_block:
                # a block inside a data cell (a paragraph, a list, code): the cell holds several blocks
                parts.append(_CELL_BREAK)
                is_block = False
            if is_block and pre_depth:
                is_block = False  # a block inside a code block (rustdoc's attribute <div>): a line of it
            if is_block:
                if parts:
                    if len(parts) == 1 and parts[0].isspace():
                        parts.clear()  # the whitespace between two blocks, which flush drops: no call
                    else:
                        flush()
                kind = KIND_BY_TAG.get(tag)
                if kind is None:
                    kind = stack[-1][1] if stack and stack[-1][1] not in _NOT_INHERITED_KINDS else "p"
                stack.append((element, kind, len(texts)))
                if verdict is not None or weight:
                    marked.append((element, verdict, weight))
                    if verdict == BOILERPLATE:
                        furniture_values[element] = value
                if tag in SEMANTIC_TAGS or verdict == CONTENT:
                    semantic.append(element)
                elif tag == "figure":
                    figures.append(element)
                elif attrs and ("itemprop" in attrs or "role" in attrs):
                    semantic.append(element)
                if tag == "dt" and not inline_code and not pre_depth and _is_code_term(element):
                    inline_code.append(element)
                    parts.append(CODE_OPEN)
            if tag not in _START_TAGS:  # most elements: one test instead of the chain below
                pass
            elif tag in SECTIONING_TAGS:
                section_depth += 1
            elif tag in HEADING_TAGS:
                heading_depth += 1
                # (a heading without links has none to count either way: the search is not needed)
                if not anchored_heading and next(element.iter("a"), None) is not None and _holds_permalink(element):
                    anchored_heading.append(element)
            elif tag == "a":
                if heading_depth and (anchored_heading or (href or "").startswith("#")):
                    # a heading's link into its own page (Sphinx's back-link to the contents, mdBook's
                    # self-link) is the heading's text, not a link away: it is not link text; nor is any
                    # link of a heading with its own permalink, which makes it a heading of the document
                    # (Sphinx's "<h4><a href=../admin/>django.contrib.admin</a><a href=#x>¶</a></h4>"),
                    # not a teaser's title linking to its article
                    own_page_links.append(element)
                else:
                    link_depth += 1
            elif tag == "pre":
                if table is not None and table.cells > 0:  # code inside a table cell: a code span of the cell
                    code_depth += 1
                    if not inline_code:
                        inline_code.append(element)
                        parts.append(CODE_OPEN)
                else:
                    if not pre_depth:
                        pre_language = code_language(element)
                    pre_depth += 1
                    code_depth += 1
            elif tag in INLINE_CODE_TAGS:
                code_depth += 1
                if not inline_code and not pre_depth:
                    inline_code.append(element)
                    parts.append(CODE_OPEN)
            elif tag == "blockquote":
                quote_depth += 1
            elif tag == "br":
                parts.append(_LINE_BREAK)
            text = element.text
            if text:
                parts.append(text)
                if link_depth:
                    links += len(text.strip())
        elif element is skipped:
            skipped = None
            if element.tail:
                parts.append(element.tail)
                if link_depth:
                    links += len(element.tail.strip())
        else:
            if inline_code and inline_code[-1] is element:
                inline_code.pop()
                parts.append(CODE_CLOSE)
            if tag not in _END_TAGS:  # most elements: one test instead of the chain below
                pass
            elif tag in SECTIONING_TAGS:
                section_depth -= 1
            elif tag in HEADING_TAGS:
                heading_depth -= 1
                if anchored_heading and anchored_heading[-1] is element:
                    anchored_heading.pop()
            elif tag == "a":
                if own_page_links and own_page_links[-1] is element:
                    own_page_links.pop()
                else:
                    link_depth -= 1
            elif tag == "pre":
                code_depth -= 1
                if pre_depth and not (data_table is not None and data_table.cells):
                    pre_depth -= 1  # pre_language stays: the block is flushed below
            elif tag in INLINE_CODE_TAGS:
                code_depth -= 1
            elif tag == "blockquote":
                quote_depth -= 1
            elif tag == "table":
                tables.pop()
                data_table = tables[-1] if tables and tables[-1].data else None
            elif (tag == "td" or tag == "th") and data_table is not None and data_table.cells:
                data_table.cells -= 1
            if stack and stack[-1][0] is element:
                if parts:
                    if len(parts) == 1 and parts[0].isspace():
                        parts.clear()  # as above
                    else:
                        flush()
                ranges[element] = (stack.pop()[2], len(texts))
                range_tags.append(tag)
            if pre_depth and tag in BLOCK_TAGS and parts and not parts[-1].endswith("\n"):
                parts.append("\n")
            tail = element.tail
            if tail:
                parts.append(tail)
                if link_depth:
                    links += len(tail.strip())
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
    kinds, texts, markdowns = seg.kinds, seg.texts, seg.markdowns
    return tuple(Block(kinds[i], CONTROL_CHARS_RE.sub("", texts[i]),
                       CONTROL_CHARS_RE.sub("", markdowns[i]) if markdowns[i] is not None else None)
                 for i in indices)
