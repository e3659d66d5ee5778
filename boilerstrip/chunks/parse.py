"""Cut a page's Markdown into blocks: the pieces a chunk boundary may fall between.

A *block* is a heading line, a paragraph, a fenced code block (whole, blank lines and all), one table row,
one list item (with its nested items, its indented continuation paragraphs and code), or a block quote. A
chunk boundary only ever falls between two blocks, so no chunk splits a fenced code block, a table row or
a list item.

The parser reads CommonMark/GFM as Markdown writers produce it, boilerstrip's own renderer included:

- fenced code opened by 3 or more backticks or tildes (an info string such as ``python`` allowed, a
  backtick fence's info string holding no backtick), closed by a line of at least as many of the same
  character; an unclosed fence runs to the end of the page. Fences indented under a list item belong to it;
- ATX headings (``#`` to ``######``, closing ``#``s dropped); a heading line may interrupt a paragraph;
- GFM tables (a header row, a ``| --- |`` delimiter row, body rows; leading pipes optional): one block per
  row, the header and delimiter marked so they stay with the first body row;
- list items (``-``, ``*``, ``+``, ``1.``, ``1)``) with their indented lines and paragraphs;
- everything else (paragraphs, definition lists written as a term line and a paragraph, quotes, HTML) is a
  paragraph-level block ending at a blank line.

Pure Python, no I/O. Positions are character offsets into the Markdown string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Block", "parse_blocks", "scan_blocks", "heading_title", "HEADING", "PARAGRAPH", "CODE", "ROW", "HEADER_ROW", "ITEM", "QUOTE", "LIST",
           "item_spans"]

HEADING, PARAGRAPH, CODE, ROW, HEADER_ROW, ITEM, QUOTE = "heading", "paragraph", "code", "row", "header_row", "item", "quote"
LIST = "list"  # several items, from scan_blocks(lists=True) only


@dataclass(frozen=True, slots=True)
class Block:
    """One unsplittable piece of the page: ``markdown[start:end]``. ``level`` and ``title`` are set for
    headings only (1-6 and the heading's text)."""

    kind: str
    start: int
    end: int
    level: int = 0
    title: str = ""


# a block while scanning: (kind, start, end, level, title); plain tuples, the scan's hot path builds ~one
# per 150 characters of Markdown
_Raw = tuple[str, int, int, int, str]

_FENCE_RE = re.compile(r"^([ \t]*)(`{3,}|~{3,})([^\n]*)$", re.M)
_BLANK_RE = re.compile(r"\n(?:[ \t]*\n)+")
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?=[ \t]|$)([^\n]*)$", re.M)
_CLOSING_HASHES_RE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_LIST_MARKER_RE = re.compile(r"([ \t]*)(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_DELIMITER_ROW_RE = re.compile(r"[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_SPECIAL_FIRST = frozenset("#-*+0123456789|> \t")
_closing_fences: dict[tuple[str, int], re.Pattern[str]] = {}


def _closing_fence(fence: str) -> re.Pattern[str]:
    key = (fence[0], len(fence))
    pattern = _closing_fences.get(key)
    if pattern is None:
        # matched from its newline (searched from the opening line's end): the regex engine then tries only
        # the newlines of the code block, where "^" with re.M would try every position of it; only the
        # match's end is read
        pattern = re.compile(rf"\n[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*(?=\n|\Z)")
        _closing_fences[key] = pattern
    return pattern


def heading_title(line: str) -> str:
    """The text of an ATX heading line: no leading or closing ``#``s."""
    text = line.strip().lstrip("#")
    if text.endswith("#"):
        text = _CLOSING_HASHES_RE.sub("", text)
    return text.strip()


class _FenceFinder:
    """The opening fence lines of a page in order: candidates found by ``str.find`` of the fence characters
    (a regex anchored at every line start reads the page several times slower), then checked as a line.
    The next backtick and tilde positions are kept, so the page is read once whatever the fence count."""

    def __init__(self, md: str) -> None:
        self.md = md
        self.ticks = md.find("```")
        self.tildes = md.find("~~~")

    def next(self, pos: int) -> re.Match[str] | None:
        md = self.md
        while True:
            if 0 <= self.ticks < pos:
                self.ticks = md.find("```", pos)
            if 0 <= self.tildes < pos:
                self.tildes = md.find("~~~", pos)
            ticks, tildes = self.ticks, self.tildes
            at = min(ticks, tildes) if ticks >= 0 and tildes >= 0 else max(ticks, tildes)
            if at < 0:
                return None
            line_start = md.rfind("\n", 0, at) + 1
            m = _FENCE_RE.match(md, line_start)
            if m is not None and m.start(2) == at and not (m.group(2)[0] == "`" and "`" in m.group(3)):
                return m  # (```a``` on a line of its own is inline code, not a fence)
            line_end = md.find("\n", at)
            if line_end < 0:
                return None
            pos = line_end + 1


def parse_blocks(markdown: str) -> list[Block]:
    """The page's blocks in order (see the module's docstring)."""
    return [Block(*raw) for raw in scan_blocks(markdown)]


def scan_blocks(markdown: str, lists: bool = False) -> list[_Raw]:
    """:func:`parse_blocks` as plain tuples ``(kind, start, end, level, title)``: what the chunker reads.
    With ``lists`` a list of several items is one ``list`` block (the chunker cuts it into its items only
    when it is larger than a chunk: a list is read faster whole, and retrieves better)."""
    blocks: list[_Raw] = []
    pos, n = 0, len(markdown)
    search = _FenceFinder(markdown).next
    while pos < n:
        m = search(pos)
        if m is None:
            _text_blocks(markdown, pos, n, blocks, lists)
            break
        _text_blocks(markdown, pos, m.start(), blocks, lists)
        close = _closing_fence(m.group(2)).search(markdown, m.end())
        end = close.end() if close is not None else n
        if m.group(1) and blocks and blocks[-1][0] in (ITEM, LIST):
            blocks[-1] = (blocks[-1][0], blocks[-1][1], end, 0, "")  # an indented fence belongs to the list item above
        else:
            blocks.append((CODE, m.start(), end, 0, ""))
        pos = end
    return blocks


_WS_LINE_RE = re.compile(r"\n[ \t]+\n")


def _text_blocks(md: str, start: int, end: int, out: list[_Raw], lists: bool) -> None:
    """Blocks of a stretch without fenced code: pieces between blank lines, each classified."""
    while start < end and md[start] in "\n\r":
        start += 1
    while end > start and md[end - 1] in " \t\n\r":
        end -= 1
    if start >= end:
        return
    special = _SPECIAL_FIRST
    append = out.append
    region = md[start:end]
    if _WS_LINE_RE.search(region) is None:
        # no blank line holding spaces: str.split finds the pieces (the scan's hot path, once per paragraph)
        pos = start
        for text in region.split("\n\n"):
            stop = pos + len(text)
            if text:
                first = text[0]
                if first not in special and "\n" not in text:
                    append((PARAGRAPH, pos, stop, 0, ""))  # the common case: a paragraph on one line
                elif first == "#" and "\n" not in text and text[-1] not in " \t\r" \
                        and (h := _HEADING_RE.match(md, pos, stop)) is not None:
                    # the next most common: a heading line (what _piece would find, without its steps)
                    append((HEADING, pos, stop, len(h.group(1)), heading_title(h.group(0))))
                elif first == "\n":  # three or more newlines in a row
                    lead = len(text) - len(text.lstrip("\n"))
                    if lead < len(text):
                        _piece(md, text[lead:], pos + lead, stop, out, lists)
                else:
                    _piece(md, text, pos, stop, out, lists)
            pos = stop + 2
        return
    pos = start
    for sep in _BLANK_RE.finditer(md, start, end):
        if sep.start() > pos:
            _piece(md, md[pos:sep.start()], pos, sep.start(), out, lists)
        pos = sep.end()
    if end > pos:
        _piece(md, md[pos:end], pos, end, out, lists)


def _piece(md: str, text: str, start: int, end: int, out: list[_Raw], lists: bool) -> None:
    stripped = text.rstrip(" \t\n\r")
    if not stripped:  # spaces alone (a page that begins with a line of spaces and a blank line)
        return
    end = start + len(stripped)
    text = stripped
    first = text[0]
    if first in " \t":
        body = text.lstrip(" \t")
        if not body:
            return
        if out and out[-1][0] in (ITEM, LIST):
            out[-1] = (out[-1][0], out[-1][1], end, 0, "")  # an indented paragraph continues the list item above
            return
        first = body[0]
    if "\n" not in text:
        out.append(_line_block(md, start, end, first))
        return
    if "#" in text:
        headings = list(_HEADING_RE.finditer(md, start, end))
        if headings:
            pos = start
            for h in headings:
                if h.start() > pos:
                    _multiline(md, pos, h.start() - 1, out, lists)
                out.append((HEADING, h.start(), h.end(), len(h.group(1)), heading_title(h.group(0))))
                pos = h.end() + 1
            if pos < end:
                _multiline(md, pos, end, out, lists)
            return
    _multiline(md, start, end, out, lists)


def _line_block(md: str, start: int, end: int, first: str) -> _Raw:
    if first == "#":
        h = _HEADING_RE.match(md, start, end)
        if h is not None:
            return (HEADING, start, end, len(h.group(1)), heading_title(h.group(0)))
    elif first in "-*+0123456789":
        if _LIST_MARKER_RE.match(md, start, end):
            return (ITEM, start, end, 0, "")
    elif first == "|":
        return (ROW, start, end, 0, "")
    elif first == ">":
        return (QUOTE, start, end, 0, "")
    return (PARAGRAPH, start, end, 0, "")


def item_spans(md: str, start: int, end: int, lines: list[str] | None = None) -> list[tuple[int, int]]:
    """(start, end) of each item of the list ``md[start:end]`` (its first line a list marker): an item is
    its marker line and the lines after it up to the next marker at its indentation or less."""
    if lines is None:
        lines = md[start:end].split("\n")
    line0 = lines[0]
    marker = _LIST_MARKER_RE.match(line0)
    assert marker is not None
    indent = marker.group(1)
    bullet = line0[len(indent)]
    spans = []
    item_start = start
    pos = start + len(line0) + 1
    if not indent and bullet in "-*+":  # "- item" at the margin: a new item is a line starting so
        opener = bullet + " "
        for line in lines[1:]:
            if line[:2] == opener or line == bullet:
                spans.append((item_start, pos - 1))
                item_start = pos
            pos += len(line) + 1
    else:
        base = len(indent.expandtabs(4))
        for line in lines[1:]:
            m = _LIST_MARKER_RE.match(line)
            if m is not None and len(m.group(1).expandtabs(4)) <= base:
                spans.append((item_start, pos - 1))
                item_start = pos
            pos += len(line) + 1
    spans.append((item_start, end))
    return spans


def _multiline(md: str, start: int, end: int, out: list[_Raw], lists: bool) -> None:
    """A piece of several lines without a heading line: a table, a list, a quote or a paragraph."""
    while start < end and md[start] in "\n\r":
        start += 1
    if start >= end:
        return
    lines = md[start:end].split("\n")
    if len(lines) == 1:
        out.append(_line_block(md, start, end, lines[0].lstrip(" \t")[:1] or " "))
        return
    line0, line1 = lines[0], lines[1]
    first = line0.lstrip(" \t")[:1]
    if "|" in line0 and "-" in line1 and _DELIMITER_ROW_RE.match(line1):
        pos = start
        for k, line in enumerate(lines):
            if line.strip():
                out.append((HEADER_ROW if k < 2 else ROW, pos, pos + len(line), 0, ""))
            pos += len(line) + 1
        return
    if first == "|" and all(line.lstrip(" \t")[:1] == "|" for line in lines):
        pos = start
        for line in lines:  # rows without a delimiter row (a table cut by its writer): still one block a row
            out.append((ROW, pos, pos + len(line), 0, ""))
            pos += len(line) + 1
        return
    if _LIST_MARKER_RE.match(line0) is not None:
        if lists:
            out.append((LIST, start, end, 0, ""))
        else:
            out.extend((ITEM, s, e, 0, "") for s, e in item_spans(md, start, end, lines))
        return
    out.append((QUOTE if first == ">" else PARAGRAPH, start, end, 0, ""))
