"""Blocks of a page, their normalised form and stable hashes; sites and template clusters of URLs."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from boilerstrip.extraction import Block
from boilerstrip.extraction import render_markdown as extraction_render_markdown
from boilerstrip.extraction import render_text as extraction_render_text
from boilerstrip.minhash import ascii_fold_table
from boilerstrip.scope import site_key

__all__ = [
    "normalise_block",
    "digits_insensitive",
    "HEADING_KINDS",
    "block_hash",
    "kind_class",
    "HASH_VERSION",
    "site_of_url",
    "cluster_of_url",
    "blocks_of_record",
    "markdown_of_blocks",
    "repair_text",
    "render_text",
    "render_markdown",
    "split_pieces",
    "piece_hash",
    "slot_hash",
    "structure_hashes",
]

#: A token of a block's normal form: a word with the code punctuation written against it, so a block is
#: template only when what was *written* repeats ("next()" is not the menu's "Next", "--help" is not
#: "Help"): a sigil before it ("-v", "--help", "@property", "$HOME", "%s"), words joined by "::" or "->"
#: ("std::move", "a->b"), and a call or index bracket right after it ("next()", "next(" of "next(it)",
#: "items[").
#: Prose punctuation does not count: "Reliable.\nChoose" and "Reliable.Choose" match ("." splits words),
#: as do "Home", "Home »" and "« Home".
_WORD_RE = re.compile(r"(?:(?<![\w@$%-])(?:--?|[@$%]))?\w+(?:(?:::|->)\w+)*(?:\(\)|\[\]|\{\}|[(\[])?")
HEADING_KINDS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
_DIGITS_RE = re.compile(r"\d+")
#: the characters ``_WORD_RE`` reads beyond word characters (the code punctuation); a text with none of them
#: is read by the plain word pattern to the same tokens, twice as fast (most blocks of prose)
_CODE_PUNCT_RE = re.compile(r"[-@$%:()\[\]{}]")
_PLAIN_WORD_RE = re.compile(r"\w+")
#: ASCII text (most blocks) is normalised by one byte translation instead of the patterns, to the same form:
#: NFKC leaves ASCII as it is, case folding is lower-casing, ``\w`` is ``[A-Za-z0-9_]``. Each character of
#: ``_CODE_PUNCT_RE`` becomes ``_CODE_MARK`` (such a text goes the patterns' way), a capital its small
#: letter, a digit 1-9 "0" with ``digits`` (a run of zeros is then one "0", as a run of digits is), any other
#: character that is no word character a space. 6 against 17-19 us a block of 380 characters (the large-page
#: site's blocks, 2026-12-07); ``tests/test_boilerplate_structure.py`` compares the two ways.
_CODE_MARK = b"\x00"
_ASCII_FOLDS = {digits: ascii_fold_table(digits, marked=_CODE_PUNCT_RE, mark=_CODE_MARK) for digits in (True, False)}
_ZEROS_RE = re.compile(rb"00+")
#: Bytes of the block digest: 8 bytes (16 hex chars) make a collision between two distinct blocks of one
#: site negligible (~1e-10 at 1e5 distinct blocks) while keeping records and the state DB small.
_HASH_BYTES = 8
#: Version of the block hash: 1 hashed the text alone; 2 hashes (kind class, text), so a category page's
#: ``<h1>Growing</h1>`` is not the menu item "Growing" on every page; 3 keeps the code punctuation written
#: against a word in the normal form (``_WORD_RE``: "next()" is not "next"). Stored hashes of another
#: version are not comparable: a change here bumps ``boilerstrip.state.STATE_SCHEMA_VERSION`` (a state
#: written with another version is not read).
HASH_VERSION = 3
#: the kind classes a block hash distinguishes: a heading, or any other block (paragraph, list item, row,
#: cell... one class: the same menu is a list on one template and a table row on another)
_HEADING_CLASS = "heading"
_OTHER_CLASS = ""


#: Distinct block texts whose normal form and hashes each process keeps (least recently used first out).
#: A page's blocks are normalised several times (the model's hashes, its slots, the clean of the extracted
#: blocks and of the region) and a site's template blocks on every page: with this cache each distinct text
#: is normalised once while it is in use. 16,384 entries hold the template of a large site and the blocks of
#: the pages in flight; at most a few tens of MB even for long blocks (sqlite3-doc crawl: 60 % of the CPU
#: of the boilerplate stages went to normalising before; the hit rate there is above 80 %).
_FEATURE_CACHE_ENTRIES = 16_384


@lru_cache(maxsize=_FEATURE_CACHE_ENTRIES)
def normalise_block(text: str, *, digits: bool = True) -> str:
    """NFKC, case-folded, its tokens (``_WORD_RE``: words with the code punctuation written against them)
    joined by one space: prose punctuation and spacing do not count ("Reliable.\nChoose" and
    "Reliable.Choose" match), code punctuation does ("next()" is not "next"); digit runs become "0" when
    ``digits``. Memoised
    (``_FEATURE_CACHE_ENTRIES``): a pure function of its arguments."""
    text = text or ""
    if text.isascii():
        folded = text.encode("ascii").translate(_ASCII_FOLDS[bool(digits)])
        if _CODE_MARK not in folded:
            if digits and b"00" in folded:
                folded = _ZEROS_RE.sub(b"0", folded)
            return b" ".join(folded.split()).decode("ascii")
    return _normalised_by_patterns(text, digits)


def _normalised_by_patterns(text: str, digits: bool) -> str:
    """``normalise_block`` as its docstring says it, for any text (ASCII text without code punctuation
    takes the byte table's shorter way to the same form: ``_ASCII_FOLDS``)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    if digits:
        text = _DIGITS_RE.sub("0", text)
    return " ".join((_WORD_RE if _CODE_PUNCT_RE.search(text) else _PLAIN_WORD_RE).findall(text))


def digits_insensitive(kind: str, enabled: bool = True) -> bool:
    """Digits are normalised except in headings: "Release 3.0.0" and "Release 3.6.2" are two titles,
    while "Page 3 of 12" and a "last modified 2021-10-06" footer are one template line."""
    return enabled and kind not in HEADING_KINDS


def kind_class(kind: str | None) -> str:
    """The part of a block's kind its hash keeps: "heading" for h1-h6, "" for every other kind."""
    return _HEADING_CLASS if kind in HEADING_KINDS else _OTHER_CLASS


@lru_cache(maxsize=_FEATURE_CACHE_ENTRIES)
def block_hash(normalised: str, kind: str | None = None) -> str | None:
    """A stable 16-hex-digit hash of a normalised block and its kind class (:func:`kind_class`); None for an
    empty block (never template). A heading and a paragraph or list item with the same words hash apart:
    the page's own ``<h1>Growing</h1>`` is not the menu's "Growing", while a "Related posts" ``<h2>`` on
    every page is still one block. Other kinds hash as in hash version 1 (the text alone)."""
    if not normalised:
        return None
    cls = kind_class(kind)
    data = f"{cls}\x1f{normalised}" if cls else normalised
    return hashlib.blake2b(data.encode("utf-8"), digest_size=_HASH_BYTES).hexdigest()


#: What separates the pieces of one block: the extractor's table-cell joiner " | " and the separators of
#: breadcrumbs and link bars ("Home > Docs > Install", "Prev · Up · Next") when set off by spaces. Dashes
#: are left out on purpose: they join prose ("page.height -- The height of the page").
_PIECE_SEPARATORS = "|>/\u00bb\u203a\u00b7\u2022\u2190\u2192"
_PIECE_SEP_RE = re.compile(rf"\s+[{re.escape(_PIECE_SEPARATORS)}]\s+")
#: namespaces of the structure hashes: never equal to a block hash (those hash the bare text)
_PIECE_NS = "piece\x1f"
_SLOT_NS = "slot\x1f"


def split_pieces(text: str, *, digits: bool = True) -> list[str]:
    """The normalised pieces of a block: its cells or the items of a bar ("Prev | Admonitions | Next" ->
    ["prev", "admonitions", "next"]); a block without separators is one piece. Empty pieces are dropped."""
    return list(_pieces(text or "", digits))


@lru_cache(maxsize=_FEATURE_CACHE_ENTRIES)
def _pieces(text: str, digits: bool) -> tuple[str, ...]:
    if not any(separator in text for separator in _PIECE_SEPARATORS):
        # no separator character at all (nine of ten blocks): one piece, without the regex's scan (0.7
        # against 5.2 us a block of 400 characters, the large-page site's blocks, 2026-12-06)
        piece = normalise_block(text, digits=digits)
        return (piece,) if piece else ()
    pieces = (normalise_block(part, digits=digits) for part in _PIECE_SEP_RE.split(text))
    return tuple(piece for piece in pieces if piece)


@lru_cache(maxsize=_FEATURE_CACHE_ENTRIES)
def piece_hash(piece: str) -> str | None:
    """Hash of one normalised piece (its own namespace: a piece never matches a block hash)."""
    if not piece:
        return None
    return hashlib.blake2b((_PIECE_NS + piece).encode("utf-8"), digest_size=_HASH_BYTES).hexdigest()


@lru_cache(maxsize=_FEATURE_CACHE_ENTRIES)
def slot_hash(slot: str | None) -> str | None:
    """Hash of a block's structural slot (``page.slot_of``: tag path with class/id, kind, links or not)."""
    if not slot:
        return None
    return hashlib.blake2b((_SLOT_NS + slot).encode("utf-8"), digest_size=_HASH_BYTES).hexdigest()


def structure_hashes(kind: str, text: str, slot: str | None, digits: bool = True) -> set[str]:
    """What a block teaches the structural template model: the hash of its slot (when known) and of each of
    its pieces. Counted per page like block hashes (``TemplateModel``), so the model knows on how many
    pages a slot occurs and on how many a piece ("Prev", "Home") occurs, whatever text surrounds it."""
    return set(_structure_hashes(kind in HEADING_KINDS, text or "", slot, digits))


@lru_cache(maxsize=_FEATURE_CACHE_ENTRIES)
def _structure_hashes(heading: bool, text: str, slot: str | None, digits: bool) -> frozenset[str]:
    out = {piece_hash(piece) for piece in _pieces(text, digits and not heading)}
    out.add(slot_hash(slot))
    out.discard(None)
    return frozenset(out)  # type: ignore[arg-type]


def site_of_url(url: str) -> str:
    """The site a page belongs to: :func:`boilerstrip.scope.site_key` (host, and the port unless default)."""
    return site_key(url or "", "host") or ""


def cluster_of_url(url: str) -> str:
    """The template cluster of a page: its first folder (digits as 0) and its path depth.

    ``/blog/2024/05/post`` -> ``blog:4``, ``/c3ref/open.html`` -> ``c0ref:2``, ``/about.html`` and ``/`` -> ``-:1``.
    Pages of one section at one depth share a template on most sites; the rule needs no HTML.
    """
    try:
        path = urlsplit(url or "").path
    except ValueError:
        path = ""
    segments = [s for s in path.split("/") if s]
    depth = max(1, len(segments))  # the home page "/" goes with the other top-level pages
    first = _DIGITS_RE.sub("0", segments[0].lower()) if depth > 1 else "-"
    return f"{first}:{depth}"


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def repair_text(text: str) -> str:
    """Lone surrogates (valid in JSON, not in UTF-8) become U+FFFD, so the text hashes and encodes."""
    if text.isascii():  # O(1) in CPython: most texts skip the search (called on every block, several times)
        return text
    return _SURROGATE_RE.sub("\ufffd", text) if _SURROGATE_RE.search(text) else text


def blocks_of_record(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(kind, text) of every block of a record, removed or not; falls back to the text's paragraphs."""
    blocks = record.get("blocks") or []
    out: list[tuple[str, str]] = []
    if isinstance(blocks, list) and blocks:
        for block in blocks:
            if isinstance(block, Mapping):
                text = block.get("text")
                if isinstance(text, str):
                    out.append((repair_text(str(block.get("kind") or "p")), repair_text(text)))
            elif isinstance(block, str):
                out.append(("p", repair_text(block)))
        return out
    text = record.get("text") or ""
    if isinstance(text, str):
        out = [("p", repair_text(part.strip())) for part in text.split("\n\n") if part.strip()]
    return out


def markdown_of_blocks(record: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """(kind, text) -> the block's own Markdown (its ``md`` key: code spans, a fenced block's language, a
    GFM row) of the record's ``blocks`` and ``page_blocks`` that carry one. Blocks without it (older
    records) render from their text."""
    out: dict[tuple[str, str], str] = {}
    for key in ("blocks", "page_blocks"):
        raw = record.get(key)
        if not isinstance(raw, list):
            continue
        for block in raw:
            if isinstance(block, Mapping) and isinstance(block.get("md"), str) and isinstance(block.get("text"), str):
                out.setdefault((repair_text(str(block.get("kind") or "p")), repair_text(block["text"])),
                               repair_text(block["md"]))
    return out


def render_text(blocks: Iterable[tuple[str, str]]) -> str:
    """Text of the kept (kind, text) blocks, rendered by the extractor (text stays one pure function of
    the blocks)."""
    return extraction_render_text([Block(kind=kind, text=text) for kind, text in blocks])


def render_markdown(blocks: Iterable[tuple[str, str]], markdowns: Mapping[tuple[str, str], str] | None = None) -> str:
    """Markdown of the kept (kind, text) blocks, rendered by the extractor; ``markdowns`` (see
    :func:`markdown_of_blocks`) gives a block its own Markdown where the record kept one."""
    markdowns = markdowns or {}
    return extraction_render_markdown([Block(kind=kind, text=text, markdown=markdowns.get((kind, text)))
                                       for kind, text in blocks])
