"""Cut a page's Markdown into chunks whose boundaries and IDs survive edits elsewhere on the page.

**Units.** The page's blocks (:mod:`.parse`) are grouped into units that are never cut apart: a heading
with the block after it, a table's header and delimiter rows with its first body row, a short label line
("Example:", a definition list's term) with the block after it, and a list smaller than ``max_tokens``
(a larger one is cut between its items). A paragraph larger than ``max_tokens`` is cut into sentences (the
chunks holding its pieces are flagged ``split_paragraph``); a code block, table row, list item or quote
larger than ``max_tokens`` is never cut: it is a chunk of its own, flagged ``oversize``.

**Boundaries.** Units are taken in order; a chunk ends

1. before a heading, once the chunk holds ``min_tokens``;
2. after a unit whose content *chooses* a boundary, once the chunk holds ``min_tokens``: the crc32 of the
   unit's last block, read as a fraction of 2**32, is below ``unit tokens / (target_tokens - min_tokens)``;
3. before a unit that would take the chunk over ``max_tokens``.

Rules 1 and 2 depend only on the unit itself and the size since the last boundary, so a boundary is where
it was whatever happens earlier on the page once one boundary coincides (content-defined chunking, as
backup tools cut files). An edit to one paragraph changes the chunk holding it and, when a boundary
appears, vanishes or is pushed by the size limit, the next one; every later chunk keeps its text. (A
boundary the minimum suppressed can carry the change one chunk further, rarely: see ``min_tokens``.)
Greedy packing from the section's start would instead move every later boundary of the section when a
paragraph grows. Per unit the chance of a boundary is proportional to its size, so chunks come out at
about ``target_tokens`` whatever the paragraph sizes.

**IDs.** ``chunk_id`` is a sha256 of the URL, the heading path and the chunk's Markdown (stripped), plus an
occurrence number: the n-th chunk of the page with the same heading path and the same Markdown gets n (0
for the first). The ID does not depend on the chunk's index or offset, so an unchanged chunk keeps its ID
when text is added or removed elsewhere on the page; two identical chunks under the same headings are told
apart by their order among themselves only.

**Tables.** A chunk that begins inside a table (a boundary fell between two of its body rows) repeats the
table's header and delimiter rows before its own rows (flag ``table_continued``), so each chunk of a table
is a table with its column names. The boundaries are those of the rows alone (the rule reads the page's
blocks); the ID is over the chunk's Markdown, header rows included.

Speed: this runs once per block of every page, so the hot loops use tuples and lists, count words with
``str``/``bytes`` methods (no list of words for a long block), give the common blocks (a one-line paragraph, a heading
line) short paths, and read a block's crc32 only where rule 2 can apply. A speed-up must not move a
boundary or change an ID: tests/test_chunks_core.py pins the IDs of generated pages.
"""

from __future__ import annotations

import hashlib
import operator
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from .parse import HEADER_ROW, HEADING, LIST, PARAGRAPH, ROW, heading_title, item_spans, scan_blocks
from .parse import _HEADING_RE as _PAGE_HEADING_RE

__all__ = ["ChunkParams", "Chunk", "chunk_markdown", "chunk_id", "plain_text", "FLAG_OVERSIZE", "FLAG_SPLIT_PARAGRAPH",
           "FLAG_TABLE_CONTINUED"]

FLAG_OVERSIZE = "oversize"  # one code block, table row, list item or quote larger than max_tokens, kept whole
FLAG_SPLIT_PARAGRAPH = "split_paragraph"  # a paragraph larger than max_tokens, cut between sentences
#: a chunk that begins inside a table: its ``markdown`` is the table's header and delimiter rows, then
#: ``page[char_start:char_end]`` (so each chunk of a table is a valid GFM table)
FLAG_TABLE_CONTINUED = "table_continued"


@dataclass(frozen=True)
class ChunkParams:
    # Sizes in tokens (the counter's unit; see tokens.py). 384/768 are the common RAG range (embedding
    # models take 512 tokens or more; a chunk of a few hundred tokens keeps one topic); on sqlite3-doc
    # (benchmarks/chunk_benchmark.py) under 0.2% of chunks are over the maximum (oversize code blocks).
    target_tokens: int = 384
    max_tokens: int = 768
    # no boundary (heading or chosen) before a chunk holds this much: small sections join the next. A
    # boundary suppressed by this minimum is what lets an edit reach a third chunk; on 300 generated pages
    # with one paragraph edited (grown, shrunk or reworded) 128 let 3.7% of the edits change more than 2
    # chunks, 64 let 0.7% (median chunk 215 tokens instead of 242).
    min_tokens: int = 64
    # the word estimate's ratio (tokens per whitespace-separated word), used when no tokenizer is named
    words_to_tokens: float = 1.33
    # a one-line paragraph this short that does not end a sentence is a label (a term, "Example:"): it stays
    # with the block after it
    label_max_tokens: int = 12

    def __post_init__(self) -> None:
        if not 0 < self.min_tokens < self.target_tokens < self.max_tokens:
            raise ValueError(f"chunk sizes must satisfy 0 < min ({self.min_tokens}) < target "
                             f"({self.target_tokens}) < max ({self.max_tokens})")
        if not self.words_to_tokens > 0:
            raise ValueError(f"words_to_tokens must be > 0, got {self.words_to_tokens}")
        if self.label_max_tokens < 0:
            raise ValueError(f"label_max_tokens must be >= 0, got {self.label_max_tokens}")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk of a page: ``markdown`` is ``page_markdown[char_start:char_end]``; ``text`` is its plain
    text, preceded by its heading path (a line "A > B") when the chunk does not begin with a heading."""

    chunk_id: str
    index: int
    headings: tuple[str, ...]
    markdown: str
    text: str
    tokens: int
    char_start: int
    char_end: int
    flags: tuple[str, ...] = ()

    @property
    def chars(self) -> int:
        return len(self.markdown)


# a unit while chunking: [start, end, size, begins with a heading, heading path (common to its blocks),
# start of its last block (whose crc32 rule 2 reads), flag]; lists, not objects: one is built per block.
# Sizes are in the counter's tokens, or in words with the default estimate (limits divided by the ratio:
# one multiplication per chunk instead of one per block)
_START, _END, _TOKENS, _HEADING, _PATH, _LAST, _FLAG = range(7)

_SENTENCE_END_RE = re.compile(r"(?<=[.!?:;])[ \t]+(?=\S)|\n")
_LABEL_ENDS = (".", "!", "?", "|")
_TWO32 = 4294967296


def chunk_id(url: str, headings: tuple[str, ...], normalised: str, occurrence: int) -> str:
    """The ID of a chunk: 32 hex digits of sha256 over (URL, heading path, content, occurrence)."""
    key = "\x1e".join((url, "\x1f".join(headings), normalised, str(occurrence)))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    if a == b:
        return a
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n]


def _units(md: str, blocks: list, limits: tuple[float, float, float, float],
           count: Callable[[str], int] | None, heads: dict[int, tuple[int, int]]) -> list[list]:
    """Blocks with their heading paths, oversize paragraphs cut into sentences, glued into units.
    ``count`` None counts words (inlined: this loop runs once per block). ``heads`` is filled with
    {start of a unit that begins with a table's body row: (start, end) of the table's header and delimiter
    rows}, which a chunk beginning with that unit repeats."""
    head: tuple[int, int] | None = None  # the header rows of the table being read
    head_start, row_end = 0, -2
    units: list[list] = []
    append = units.append
    levels: list[int] = []
    titles: list[str] = []
    path: tuple[str, ...] = ()
    glue = False  # the previous unit holds on to the next block
    max_size, label_max = limits[2], limits[3]
    for kind, start, end, level, title in blocks:
        text = md[start:end]
        if count is not None:
            size = count(text)
        elif kind is PARAGRAPH and "\n" not in text and "\t" not in text and text.isascii() and "  " not in text:
            # the common case, two blocks in three: one line of single-spaced ASCII words, counted at C speed
            # (the same count as split); under the maximum it has no flag and takes this short path, what the
            # general one below does for it
            size = text.count(" ") + 1 - (text[-1] == " ") - (text[0] == " ")
            if size <= max_size:
                if glue:
                    last = units[-1]
                    last[_END] = end
                    last[_TOKENS] += size
                    last[_LAST] = start
                    if last[_PATH] != path:
                        last[_PATH] = _common(last[_PATH], path)
                else:
                    append([start, end, size, False, path, start, ""])
                glue = size <= label_max and not text.rstrip().endswith(_LABEL_ENDS)
                continue
        else:
            size = _count_words(text)
        if kind is HEADING:
            while levels and levels[-1] >= level:
                levels.pop()
                titles.pop()
            levels.append(level)
            titles.append(title)
            path = tuple(titles)
        elif size > max_size and kind is PARAGRAPH:
            for s, e, n, flag in _sentences(md, start, end, count or _count_words, max_size):
                append([s, e, n, False, path, s, flag])
            glue = False
            continue
        elif kind == LIST and size > max_size:  # a list larger than a chunk: cut between its items
            first_item = True
            for s, e in item_spans(md, start, end):
                n = (count or _count_words)(md[s:e])
                flag = FLAG_OVERSIZE if n > max_size else ""
                if first_item and glue and not flag and units:  # a heading or label holds on to the first item
                    last = units[-1]
                    last[_END], last[_TOKENS], last[_LAST] = e, last[_TOKENS] + n, s
                else:
                    append([s, e, n, False, path, s, flag])
                first_item = False
            glue = False
            continue
        if kind is ROW or kind is HEADER_ROW:
            if start != row_end + 1:  # not on the line after the last row: another table
                head, head_start = None, start
            if kind is HEADER_ROW:
                head = (head_start, end)
            row_end = end
        flag = FLAG_OVERSIZE if size > max_size else ""
        if glue and (kind != HEADING or units[-1][_HEADING]):
            last = units[-1]
            last[_END] = end
            last[_TOKENS] += size
            last[_LAST] = start
            if last[_PATH] != path:
                last[_PATH] = _common(last[_PATH], path)
            if flag:
                last[_FLAG] = flag
        else:
            append([start, end, size, kind == HEADING, path, start, flag])
            if kind is ROW and head is not None:
                heads[start] = head
        if kind == PARAGRAPH:
            glue = size <= label_max and not flag and "\n" not in text and not text.rstrip().endswith(_LABEL_ENDS)
        else:
            glue = kind == HEADING or kind == HEADER_ROW
    return units


#: ASCII whitespace (what str.split splits at) as b" ", any other byte as b"x"
_WORD_BYTES = bytes(32 if chr(i).isspace() else 120 for i in range(256))
# below this many characters split is the faster count (a heading, a table row)
_SPLIT_MAX_CHARS = 160


def _count_words(text: str) -> int:
    """``len(text.split())``; an ASCII text counted without building its words (a code block or a list
    holds hundreds): the starts of words, `` x`` in its bytes mapped to space or not."""
    if len(text) > _SPLIT_MAX_CHARS and text.isascii():
        marks = text.encode("ascii").translate(_WORD_BYTES)
        return marks.count(b" x") + (marks[:1] == b"x")
    return len(text.split())


def _sentences(md: str, start: int, end: int, count: Callable[[str], int],
               max_tokens: float) -> list[tuple[int, int, int, str]]:
    """An oversize paragraph cut at line breaks and sentence ends; a sentence still over the limit is
    one piece, flagged oversize."""
    pieces = []
    pos = start
    for m in _SENTENCE_END_RE.finditer(md, start, end):
        if m.start() > pos:
            pieces.append((pos, m.start()))
        pos = m.end()
    if pos < end:
        pieces.append((pos, end))
    out = []
    for s, e in pieces:
        n = count(md[s:e])
        out.append((s, e, n, FLAG_OVERSIZE if n > max_tokens else FLAG_SPLIT_PARAGRAPH))
    return out


def _bounds(md: str, units: list[list], limits: tuple[float, float, float, float]
            ) -> list[tuple[int, int, float, tuple[str, ...], str]]:
    """(first unit, end unit, size, heading path, flags) of each chunk, by the rules of the module's
    docstring; the path is the one common to the chunk's units, flags are joined by ","."""
    spans: list[tuple[int, int, float, tuple[str, ...], str]] = []
    min_size, target, max_size = limits[0], limits[1], limits[2]
    span = target - min_size
    crc32 = zlib.crc32
    first, size = 0, 0
    path: tuple[str, ...] = ()
    flags = ""
    previous_oversize = False
    for i, (_, end, tokens, heading, unit_path, last, flag) in enumerate(units):
        oversize = flag == FLAG_OVERSIZE
        if i > first and ((heading and size >= min_size) or size + tokens > max_size
                          or oversize or previous_oversize):
            spans.append((first, i, size, path, flags))
            first, size = i, 0
        if i == first:
            path, flags = unit_path, flag
        else:
            if unit_path is not path:
                path = _common(path, unit_path)
            if flag and flag not in flags:
                flags = ",".join(sorted(filter(None, (*flags.split(","), flag))))
        size += tokens
        previous_oversize = oversize
        # rule 2, its crc32 read only once the chunk is large enough for it to matter
        if size >= min_size and crc32(md[last:end].encode("utf-8", "surrogatepass")) * span < tokens * _TWO32:
            spans.append((first, i + 1, size, path, flags))
            first, size = i + 1, 0
            previous_oversize = False
    if first < len(units):
        spans.append((first, len(units), size, path, flags))
    return spans


# line-start syntax is matched after a newline ("\n" first: the regex engine then looks only at newlines,
# where "^" with re.M would try every position); the text's first line is handled by prefixing a newline
_DELIMITER_ROW_RE = re.compile(r"\n[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*(?=\n|$)")
_HEADING_MARK_RE = re.compile(r"\n {0,3}#{1,6}[ \t]+")
_QUOTE_MARK_RE = re.compile(r"\n[ \t]*>[ \t]?")
_LINK_RE = re.compile(r"\[([^\]\n]*)\]\([^)\n]*\)")
_CODE_SPAN_RE = re.compile(r"`([^`\n]+)`")
_DOUBLE_CODE_SPAN_RE = re.compile(r"``[ ]?([^\n]+?)[ ]?``")
_STRONG_RE = re.compile(r"\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*")
#: the replacement of the passes below that keep a match's first group: a C callable (a template such as
#: r"\1" is expanded by a Python function at every match)
_GROUP_1 = operator.itemgetter(1)
_ESCAPE_RE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>])")


# (after a newline, not "^" with re.M: the regex engine then looks only at newlines)
_FENCE_RE = re.compile(r"\n[ \t]*(`{3,}|~{3,})[^\n]*(?=\n|\Z)")


def plain_text(markdown: str) -> str:
    """The text of a piece of Markdown without its syntax (list markers kept: they read as bullets); the
    lines of fenced code as they are. Each pass runs only when the text holds what it removes (the
    passes, run over every chunk, were two thirds of the chunker's time)."""
    # (a one-character test first: ``in`` finds one character at memchr speed, three several times slower)
    if ("`" not in markdown or "```" not in markdown) and ("~" not in markdown or "~~~" not in markdown):
        return _plain_prose(markdown).strip()
    # the fences are matched after a newline, in "\n" + markdown: index i there is index i - 1 here, and a
    # match's start (its newline) is the start of its line here
    lines = "\n" + markdown
    parts = []
    pos = 0
    for fence in _FENCE_RE.finditer(lines):
        start = fence.start()
        if start < pos:
            continue
        close = _closing(fence.group(1)).search(lines, fence.end())
        parts.append(_plain_prose(markdown[pos:start]))
        code_end = close.start() if close is not None else len(markdown)
        parts.append(markdown[fence.end():code_end])
        pos = close.end() - 1 if close is not None else len(markdown)
    parts.append(_plain_prose(markdown[pos:]))
    return "".join(parts).strip()


_closings: dict[str, re.Pattern[str]] = {}


def _closing(fence: str) -> re.Pattern[str]:
    pattern = _closings.get(fence)
    if pattern is None:
        pattern = _closings[fence] = re.compile(rf"\n[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*(?=\n|\Z)")
    return pattern


def _plain_prose(text: str) -> str:
    text = "\n" + text
    if "-" in text and "---" in text:
        text = _DELIMITER_ROW_RE.sub("", text)
    if "#" in text:
        text = _HEADING_MARK_RE.sub("\n", text)
    if "|" in text:  # a row's outer pipes (the writers put a space inside them)
        text = text.replace("\n| ", "\n").replace(" |\n", "\n")
        if text.endswith(" |"):
            text = text[:-2]
    if ">" in text:
        text = _QUOTE_MARK_RE.sub("\n", text)
    if "]" in text and "](" in text:
        if "![" in text:
            text = text.replace("![", "[")
        text = _LINK_RE.sub(_GROUP_1, text)
    if "`" in text:
        if "``" in text:
            text = _DOUBLE_CODE_SPAN_RE.sub(_GROUP_1, text)
        text = _CODE_SPAN_RE.sub(_GROUP_1, text)
    if "*" in text and "**" in text:
        text = _STRONG_RE.sub(_GROUP_1, text)
    if "\\" in text:
        text = _ESCAPE_RE.sub(_GROUP_1, text)
    return text[1:]


_DEFAULT_PARAMS = ChunkParams()


def _whole_page(markdown: str, url: str, words: int, ratio: float) -> Chunk:
    """The one chunk of a page under ``min_tokens`` (the rules cut nowhere in it): the same chunk the
    blocks would give, its heading path from the heading lines alone."""
    body = markdown.lstrip()
    start = markdown.rfind("\n", 0, len(markdown) - len(body)) + 1
    end = len(markdown.rstrip())
    md = markdown[start:end]
    path: tuple[str, ...] | None = None
    stack: list[tuple[int, str]] = []
    if "#" in md:
        for h in _PAGE_HEADING_RE.finditer(md):
            if path is None and h.start() > 0:
                path = ()  # a block before the first heading: no heading is common to the chunk
            level = len(h.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading_title(h.group(0))))
            now = tuple(t for _, t in stack)
            path = now if path is None else _common(path, now)
    path = path or ()
    normalised = md.strip()
    text = plain_text(md)
    if path and not md.startswith(("#", " #", "  #", "   #")):
        text = " > ".join(path) + "\n\n" + text
    return Chunk(chunk_id(url, path, normalised, 0), 0, path, md, text, int(words * ratio + 0.5), start, end, ())


def chunk_markdown(markdown: str, url: str, params: ChunkParams | None = None,
                   count: Callable[[str], int] | None = None, exact_tokens: bool = False) -> tuple[Chunk, ...]:
    """The chunks of one page's Markdown, in page order (see the module's docstring).

    ``count`` counts tokens (default: the word estimate of ``params``); with ``exact_tokens`` a chunk's
    ``tokens`` is counted again on its whole Markdown (a tokenizer's count of a concatenation can differ from
    the sum of its parts by a token per seam), else it is the sum of its units' counts.
    """
    params = params or _DEFAULT_PARAMS
    if not markdown or not markdown.strip():
        return ()
    if count is None:  # sizes in words, limits in words
        ratio = params.words_to_tokens
        limits = (params.min_tokens / ratio, params.target_tokens / ratio, params.max_tokens / ratio,
                  params.label_max_tokens / ratio)
        # (a page of more characters than 40 a word is not counted: it is not that short)
        if len(markdown) < 40 * limits[0] and "```" not in markdown and "~~~" not in markdown:
            words = len(markdown.split())
            if words < limits[0]:  # under min_tokens: one chunk whatever the rules, no need for blocks
                return (_whole_page(markdown, url, words, ratio),)
    else:
        ratio = 1.0
        limits = (params.min_tokens, params.target_tokens, params.max_tokens, params.label_max_tokens)
    heads: dict[int, tuple[int, int]] = {}
    units = _units(markdown, scan_blocks(markdown, lists=True), limits, count, heads)
    chunks: list[Chunk] = []
    seen: dict[tuple[tuple[str, ...], str], int] = {}
    for index, (a, b, size, path, flags) in enumerate(_bounds(markdown, units, limits)):
        start, end = units[a][_START], units[b - 1][_END]
        md = markdown[start:end]
        if heads and start in heads:  # a table's later rows: its header rows first, a table of its own
            head = markdown[heads[start][0]:heads[start][1]]
            md = head + "\n" + md
            size += count(head) if count is not None else _count_words(head)
            flags = ",".join(sorted(filter(None, (*flags.split(","), FLAG_TABLE_CONTINUED))))
        normalised = md.strip()
        key = (path, normalised)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        text = plain_text(md)
        if path and not units[a][_HEADING]:
            text = " > ".join(path) + "\n\n" + text
        tokens = count(md) if exact_tokens and count is not None else int(size * ratio + 0.5)
        chunks.append(Chunk(chunk_id(url, path, normalised, occurrence), index, path, md, text, tokens, start, end,
                            tuple(flags.split(",")) if flags else ()))
    return tuple(chunks)
