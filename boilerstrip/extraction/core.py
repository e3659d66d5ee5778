"""The ladder: decode and parse once, read metadata, strip what is never content, cut the body into blocks,
then try semantic -> density -> body-text XPath and keep the first result that passes its sanity checks.

``extract`` never raises on page content: empty, binary, oversized, deeply nested or badly encoded input
gives a result (maybe empty) with a ``reason`` and ``flags``.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree
from w3lib.encoding import html_to_unicode

from ._page import PageStats, Selection
from ._vocab import (
    CONTROL_BYTES_RE,
    CONTROL_CHARS_RE,
    HEADING_TAGS,
    NAVIGATION_TAGS,
    NEVER_CONTENT_TAGS,
)
from .blocks import Block, Segmentation, blocks_from, find_image_holders, render_markdown, render_text, segment
from .bodytext import extract_bodytext
from .confidence import estimate_confidence, page_signals
from .density import extract_density
from .metadata import Metadata, extract_metadata
from .params import ExtractionParams
from .parse import parse_document
from .semantic import extract_semantic

logger = logging.getLogger(__name__)

RUNGS = ("semantic", "density", "bodytext")
#: the rung of last resort over budget: the body's text, one line per block-level element
PLAINTEXT = "plaintext"
_PLAINTEXT_BREAKS = frozenset(
    "address article blockquote br dd div dl dt figcaption figure h1 h2 h3 h4 h5 h6 header hr li main ol p pre "
    "section table tbody td tfoot th thead tr ul".split()
)
_PLAINTEXT_SKIPPED = ("nav", "aside", "footer")
#: Refusals that still leave a last-resort result when every rung refuses: text too short for a page, or
#: a page whose content is a list of links (an index, a listing; its longest such result is kept).
LAST_RESORT_REASONS = frozenset(("too_short", "link_list", "link_density_high"))
_SNIFF_CHARS = 4096
_UNICODE_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


@dataclass(frozen=True)
class Attempt:
    """One rung tried: its name, whether it won, how many characters it found, and why (short, stable)."""

    method: str
    accepted: bool
    chars: int
    reason: str


@dataclass(frozen=True)
class ExtractionResult:
    text: str = ""
    markdown: str = ""
    title: str | None = None
    description: str | None = None
    canonical_url: str | None = None
    lang: str | None = None
    author: str | None = None
    published: str | None = None
    modified: str | None = None
    method: str | None = None
    attempts: tuple[Attempt, ...] = ()
    blocks: tuple[Block, ...] = ()
    flags: tuple[str, ...] = ()
    reason: str | None = None
    #: the heading the extractor left out of the text as the page's headline (it is ``title``); the
    #: Markdown opens with it: ``markdown == render_markdown((headline, *blocks))``
    headline: Block | None = None
    #: the estimated F1 of this extraction (0-1; 0 when nothing was extracted), see ``confidence.py``
    confidence: float = 0.0
    #: what ``confidence`` was estimated from: ``confidence.SIGNALS`` in order (not in ``to_dict``)
    signals: tuple[float, ...] = field(default=(), repr=False, compare=False)

    def to_dict(self) -> dict:
        """JSON-ready dict (attempts and blocks as dicts)."""
        return {
            "text": self.text,
            "markdown": self.markdown,
            "title": self.title,
            "description": self.description,
            "canonical_url": self.canonical_url,
            "lang": self.lang,
            "author": self.author,
            "published": self.published,
            "modified": self.modified,
            "method": self.method,
            "attempts": [a.__dict__.copy() for a in self.attempts],
            "blocks": [b.as_dict() for b in self.blocks],
            "flags": list(self.flags),
            "reason": self.reason,
            "confidence": self.confidence,
        }


# --- input ------------------------------------------------------------------------------------------


def _sniff_encoding(data: bytes) -> str:
    """For pages that declare no charset: UTF-8 when the bytes are valid UTF-8, else Windows-1252 (the
    browsers' fallback for undeclared legacy pages)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # a page cut inside its last multi-byte character is still UTF-8
        truncated = exc.reason == "unexpected end of data" and exc.start >= len(data) - 3 > _SNIFF_CHARS
        return "utf-8" if truncated else "cp1252"
    return "utf-8"


def decode_html(data: bytes, content_type: str | None = None) -> tuple[str, str]:
    """(text, encoding): BOM, then the Content-Type header, then the page's <meta charset>, then UTF-8 if
    the bytes are valid UTF-8, else Windows-1252; undecodable bytes become U+FFFD. Never raises."""
    encoding, text = html_to_unicode(content_type, bytes(data), auto_detect_fun=_sniff_encoding)
    return text, encoding


def _looks_binary(sample: str | bytes, params: ExtractionParams) -> bool:
    """Control characters (and, in text, U+FFFD) above a share of the first bytes: not HTML."""
    if not sample:
        return False
    if isinstance(sample, bytes):
        if sample.startswith(_UNICODE_BOMS):
            return False
        odd = len(CONTROL_BYTES_RE.findall(sample))
    else:
        odd = len(CONTROL_CHARS_RE.findall(sample)) + sample.count("\ufffd")
    return odd > params.max_binary_char_ratio * len(sample)


# --- the ladder ---------------------------------------------------------------------------------------


#: the Metadata fields an ExtractionResult carries as they are (jsonld_body is only a locating signal)
_STATED_FIELDS = ("title", "description", "canonical_url", "lang", "author", "published", "modified")


def _stated(metadata: Metadata) -> dict[str, str | None]:
    return {name: getattr(metadata, name) for name in _STATED_FIELDS}


def _empty(reason: str, flags: list[str], metadata: Metadata = Metadata(), attempts=()) -> ExtractionResult:
    return ExtractionResult(
        **_stated(metadata),
        attempts=tuple(attempts),
        flags=tuple(flags),
        reason=reason,
    )


def _run_bodytext(document: etree._Element, params: ExtractionParams) -> tuple[tuple[Block, ...], Selection]:
    found, link_chars = extract_bodytext(document, params.bodytext_include_tags, params.bodytext_exclude_tags)
    blocks = tuple(found)
    chars = sum(len(block.text) for block in blocks)
    density = link_chars / chars if chars else 0.0
    if not chars:
        reason = "empty"
    elif chars < params.min_text_chars:
        reason = "too_short"
    elif density > params.max_link_density:
        reason = "link_density_high"
    else:
        reason = "accepted"
    return blocks, Selection((), chars, density, reason)


_TEXT_CHARS = etree.XPath("string-length(normalize-space())")
_NODES_BUT_TEXT = etree.XPath("count(descendant-or-self::node()) - count(descendant::text())")


def _text_chars(element: etree._Element) -> int:
    """Characters of the element's text, whitespace runs counted as one (in C: no Python loop)."""
    return int(_TEXT_CHARS(element))


def _noscript_chars(body: etree._Element) -> int:
    """Characters of the text of the <noscript> elements under ``body``."""
    return sum(_text_chars(noscript) for noscript in body.iter("noscript"))


def _is_noscript_shell(body: etree._Element, params: ExtractionParams) -> bool:
    """The page's <noscript> elements hold most of its text (scripts and styles already removed)."""
    hidden = _noscript_chars(body)
    if hidden < params.min_text_chars:
        return False
    return hidden >= params.min_noscript_share_of_page * _text_chars(body)


def _unwrap_heading_buttons(document: etree._Element) -> None:
    """A <button> inside a heading is the heading's text: the header of an accordion or disclosure
    section (the WAI-ARIA accordion pattern wraps each header button in a heading). Other buttons are
    controls, never content. (From the buttons up, not the headings down: a page has few buttons, and an
    XPath over every heading's descendants cost 8% of the extractor's time.)"""
    in_headings = [button for button in document.iter("button") if _inside_heading(button)]
    for button in in_headings:
        button.tag = "span"


def _inside_heading(element: etree._Element) -> bool:
    return next(element.iterancestors(*HEADING_TAGS), None) is not None


def _unwrap_swallowing_chrome(body: etree._Element, params: ExtractionParams) -> bool:
    """A <nav>, <aside> or <footer> holding most of the page's text is an unclosed one that swallowed the
    page (the parser nests everything after it inside): it becomes a <div>, so its content is read."""
    body_chars = None
    changed = False
    for element in list(body.iter(*NAVIGATION_TAGS)):
        chars = _text_chars(element)
        if chars < params.min_text_chars:
            continue
        if body_chars is None:
            body_chars = _text_chars(body)
        if chars > params.max_chrome_share_of_page * body_chars:
            element.tag = "div"
            changed = True
    return changed


def _rungs_to_run(params: ExtractionParams) -> list[tuple[str, bool]]:
    if params.method != "auto":
        return [(params.method, True)]
    enabled = {
        "semantic": params.semantic_enabled,
        "density": params.density_enabled,
        "bodytext": params.bodytext_enabled,
    }
    return [(name, enabled[name]) for name in RUNGS]


def extract(
    html: str | bytes, url: str | None = None, params: ExtractionParams = ExtractionParams(), *,
    segmented: Callable[[etree._Element, Segmentation], None] | None = None,
) -> ExtractionResult:
    """Main content and metadata of one HTML page. See the module docstring. ``segmented``: called with the
    body and its segmentation when the semantic and density rungs' blocks are cut, before any rung reads
    them or changes the tree (a crawl's page reading takes the page's region from it instead of cutting the
    same tree again); it must not change either."""
    flags: list[str] = []
    if html is None:
        return _empty("empty_input", flags)
    if not isinstance(html, (str, bytes, bytearray, memoryview)):
        return _empty("not_text", flags)
    if len(html) > params.max_input_chars:
        flags.append("input_too_large")
        return _empty("input_too_large", flags)
    if not isinstance(html, str):
        html = bytes(html)
        if html[:2] == b"\x1f\x8b" or _looks_binary(html[:_SNIFF_CHARS], params):
            return _empty("binary_input", flags)
        html, _encoding = decode_html(html)
    if not html or html.isspace():  # (strip() would copy a page that ends with a newline)
        return _empty("empty_input", flags)
    if _looks_binary(html[:_SNIFF_CHARS], params):
        return _empty("binary_input", flags)
    # a scan for the character first: most pages hold none, and finding is faster than counting
    replacements = html.count("\ufffd") if "\ufffd" in html else 0
    if replacements > params.max_replacement_char_ratio * len(html):
        flags.append("replacement_chars")

    started_cpu_s = time.thread_time()
    document = parse_document(html, flags, html5=params.html5_tree, max_nodes=params.max_nodes)
    if isinstance(document, str):
        return _empty(document, flags)
    try:
        metadata = extract_metadata(document, url)
    except Exception:  # noqa: BLE001 - metadata is best effort; content must still come out
        logger.debug("metadata extraction failed for %s", url, exc_info=True)
        metadata = Metadata()
    body = document.find("body")
    if body is None:
        body = document
    # found before <img> is stripped below (after it, no picture is left to mark its caption)
    image_holders = find_image_holders(body) if not params.keep_captions else []
    _unwrap_heading_buttons(document)
    # <wbr> (a line-break opportunity) is empty, but libxml2's HTML parser nests the rest of its parent in
    # it ("syn::<wbr>token::<wbr>While", rustdoc's headings): its text would be lost to the body-text rung
    etree.strip_tags(document, "wbr")
    if _noscript_chars(body) < params.min_text_chars:
        # no <noscript> can hold the page (most pages; its text counted before the strip, never less than
        # after it): one walk of the tree strips them with the rest
        etree.strip_elements(document, *NEVER_CONTENT_TAGS, with_tail=False)
    else:
        etree.strip_elements(document, *(NEVER_CONTENT_TAGS - {"noscript"}), with_tail=False)
        if _is_noscript_shell(body, params):
            # a JavaScript app shell whose no-script rendering holds the page (forum software serves its
            # posts this way): read the <noscript> markup as the page
            flags.append("noscript_shell")
            etree.strip_tags(document, "noscript")
        else:
            etree.strip_elements(document, "noscript", with_tail=False)
    if _unwrap_swallowing_chrome(body, params):
        flags.append("unclosed_chrome")

    attempts: list[Attempt] = []
    if over_node_budget(document, params.max_nodes):
        # Every later stage (the rungs here, block hashes, cross-page cleaning, dedup, export) is Python per
        # block: a page this size would cost tens of seconds. No text, and a reason the crawl records.
        flags.append("extraction_budget:nodes")
        for name, _enabled in _rungs_to_run(params):
            attempts.append(Attempt(name, False, 0, "over_budget"))
        return _empty("over_budget", flags, metadata, attempts)

    page = None
    headline: Block | None = None
    fallback: tuple[str, tuple[Block, ...], int, str] | None = None
    over_budget = False
    for name, enabled in _rungs_to_run(params):
        if not enabled:
            attempts.append(Attempt(name, False, 0, "disabled"))
            continue
        if over_budget or (params.max_cpu_s and time.thread_time() - started_cpu_s > params.max_cpu_s):
            over_budget = True
            attempts.append(Attempt(name, False, 0, "over_budget"))
            continue
        try:
            if name != "bodytext" and page is None:
                seg = segment(body, skip_navigation=True)
                if segmented is not None:
                    segmented(body, seg)
                page = PageStats(seg, params, headline=metadata.title, image_holders=image_holders)
            blocks, selection, headline = _run_rung(name, document, page, params)
        except Exception as exc:  # noqa: BLE001 - a bug in one rung must not lose the page: next rung
            logger.warning("extraction rung %s failed on %s", name, url, exc_info=True)
            attempts.append(Attempt(name, False, 0, f"error_{type(exc).__name__}"))
            continue
        accepted = selection.reason == "accepted"
        attempts.append(Attempt(name, accepted, selection.chars, selection.reason))
        logger.debug("extraction %s: %s (%d chars) for %s", name, selection.reason, selection.chars, url)
        if accepted:
            result = _result(name, blocks, attempts, flags, metadata, headline, page, selection.indices)
            if result.confidence >= params.min_confidence_without_retry or over_budget:
                return result
            return _reconsidered(result, document, page, params, flags, metadata, image_holders)
        if (
            selection.reason in LAST_RESORT_REASONS
            and selection.chars >= params.min_last_resort_chars
            and (fallback is None or selection.chars > fallback[2])
        ):
            fallback = (name, blocks, selection.chars, selection.reason, selection.indices)
    if over_budget:
        flags.append("extraction_budget:cpu")
    if fallback is not None:
        # Every rung refused; the longest result refused only for being short, or for being a list of
        # links, is better than nothing for a genuinely short page or an index page, and the attempts say so.
        name, blocks, chars, reason, indices = fallback
        attempts.append(Attempt(name, True, chars, "accepted_short" if reason == "too_short" else "accepted_links"))
        result = _result(name, blocks, attempts, flags, metadata, page=page, indices=indices)
        if result.confidence >= params.min_confidence_without_retry or over_budget:
            return result
        return _reconsidered(result, document, page, params, flags, metadata, image_holders)
    if over_budget:
        return _plaintext_result(body, attempts, flags, metadata, params)
    return _empty("no_content_found", flags, metadata, attempts)


def _run_rung(name: str, document: etree._Element, page: PageStats | None, params: ExtractionParams):
    """(blocks, selection, headline) of one rung: ``page`` (the block statistics) for semantic and density."""
    if name == "bodytext":
        blocks, selection = _run_bodytext(document, params)
        return blocks, selection, None
    selection = (extract_semantic if name == "semantic" else extract_density)(page, params)
    blocks = blocks_from(page.seg, selection.indices)
    headline = blocks_from(page.seg, (selection.headline,))[0] if selection.headline is not None else None
    return blocks, selection, headline


#: the recall-oriented widening a low-confidence result is compared with: what the "recall" preset keeps
#: more of inside the chosen container (see params.EXTRACTION_PRESETS)
_WIDENING = ("keep_captions", "max_block_link_density", "max_inner_link_density", "min_link_list_text_ratio",
             "min_list_element_text_ratio", "min_teaser_cards")


def _reconsidered(result: ExtractionResult, document, page, params: ExtractionParams, flags, metadata: Metadata,
                  image_holders) -> ExtractionResult:
    """A second opinion on a result whose confidence is below ``min_confidence_without_retry``: every rung
    the ladder did not take (refused, or not run because an earlier one won) and the winner's rung widened
    for recall (the "recall" preset's pruning) are scored by the same estimate, and the most confident is
    kept when it beats the first by ``min_retry_confidence_gain``. Each try is recorded in ``attempts``:
    ``retry_kept`` for the one kept, ``retry_less_confident`` for the others (``retry_failed`` when it
    found nothing)."""
    tried: list[tuple[float, str, tuple, Selection, Block | None, PageStats | None]] = []
    widened = None
    if result.method in ("semantic", "density") and page is not None:
        from .params import EXTRACTION_PRESETS

        recall = EXTRACTION_PRESETS["recall"]
        wide_params = dataclasses.replace(params, **{name: recall[name] for name in _WIDENING if name in recall})
        widened = PageStats(page.seg, wide_params, headline=metadata.title,
                            image_holders=image_holders if not wide_params.keep_captions else [])
    options = [(name, page, params) for name, enabled in _rungs_to_run(params) if enabled and name != result.method]
    if widened is not None:
        options.append((result.method, widened, wide_params))
    base = [Attempt(a.method, False, a.chars, a.reason) if a.accepted else a for a in result.attempts]
    for name, stats, rung_params in options:
        if name != "bodytext" and stats is None:
            continue
        try:
            blocks, selection, headline = _run_rung(name, document, stats, rung_params)
        except Exception:  # noqa: BLE001 - a second opinion never loses the first
            logger.debug("retry of %s failed", name, exc_info=True)
            continue
        if selection.chars < params.min_last_resort_chars or selection.reason not in ("accepted", *LAST_RESORT_REASONS):
            tried.append((-1.0, name, blocks, selection, headline, stats))
            continue
        signals = page_signals(name, (*base, Attempt(name, True, selection.chars, "accepted")), blocks, stats,
                               selection.indices, headline, flags)
        tried.append((estimate_confidence(signals), name, blocks, selection, headline, stats))
    best = max(tried, key=lambda t: t[0], default=None)
    keep = best is not None and best[0] >= result.confidence + params.min_retry_confidence_gain
    attempts = list(result.attempts)
    for entry in tried:
        confidence, name, _blocks, selection, _headline, stats = entry
        reason = "retry_failed" if confidence < 0 else "retry_kept" if keep and entry is best else "retry_less_confident"
        label = name if stats is page or name == "bodytext" else f"{name}+widened"
        attempts.append(Attempt(label, reason == "retry_kept", selection.chars, reason))
    if not keep:
        return dataclasses.replace(result, attempts=tuple(attempts))
    _confidence, name, blocks, selection, headline, stats = best
    return _result(name, blocks, attempts, flags, metadata, headline, stats, selection.indices)


def over_node_budget(document: etree._Element, max_nodes: int) -> bool:
    """Whether the parsed ``document`` has more than ``max_nodes`` nodes, text aside (its elements, comments
    and processing instructions: what ``document.iter()`` yields; 0: no limit). Counted in C: about a
    millisecond per 100 000 nodes (a Python loop over ``iter()`` took twice as long on the benchmark pages)."""
    if not max_nodes:
        return False
    return _NODES_BUT_TEXT(document) > max_nodes


def _plaintext_blocks(body: etree._Element) -> tuple[Block, ...]:
    """The body's text, cut at block-level elements, navigation/aside/footer left out: one pass over the
    tree (no scoring), so its cost is the walk itself."""
    etree.strip_elements(body, *_PLAINTEXT_SKIPPED, with_tail=False)
    parts: list[str] = []
    for event, element in etree.iterwalk(body, events=("start", "end")):
        tag = element.tag if isinstance(element.tag, str) else ""
        if event == "start":
            if tag in _PLAINTEXT_BREAKS:
                parts.append("\n")
            if element.text:
                parts.append(element.text)
        else:
            if tag in _PLAINTEXT_BREAKS:
                parts.append("\n")
            if element.tail and element is not body:
                parts.append(element.tail)
    lines = (" ".join(line.split()) for line in "".join(parts).split("\n") if line and not line.isspace())
    return tuple(Block("p", line) for line in lines if line)


def _plaintext_result(body, attempts: list[Attempt], flags: list[str], metadata: Metadata, params: ExtractionParams) -> ExtractionResult:
    blocks = _plaintext_blocks(body)
    chars = sum(len(block.text) for block in blocks)
    if chars < params.min_last_resort_chars:
        attempts.append(Attempt(PLAINTEXT, False, chars, "too_short"))
        return _empty("no_content_found", flags, metadata, attempts)
    attempts.append(Attempt(PLAINTEXT, True, chars, "over_budget"))
    return _result(PLAINTEXT, blocks, attempts, flags, metadata)


def _result(
    method: str, blocks, attempts, flags, metadata: Metadata, headline: Block | None = None, page=None, indices=()
) -> ExtractionResult:
    """The result of the rung that won; ``headline`` is the heading it left out as the page's ``title``:
    the Markdown opens with it (the text and the blocks leave it to ``title``). ``page`` and ``indices``
    (the ladder's block statistics and the kept blocks' places in them) feed the confidence."""
    signals = page_signals(method, attempts, blocks, page, indices, headline, flags)
    return ExtractionResult(
        text=render_text(blocks),
        markdown=render_markdown((headline, *blocks) if headline is not None else blocks),
        **_stated(metadata),
        method=method,
        attempts=tuple(attempts),
        blocks=tuple(blocks),
        flags=tuple(flags),
        reason=None,
        headline=headline,
        confidence=estimate_confidence(signals),
        signals=signals,
    )


def main_text_chars(html: str | bytes, url: str | None = None, params: ExtractionParams = ExtractionParams()) -> int:
    """Characters of the page's main text as evidence that the page was served with its content (the
    render decision's second opinion): 0 when only a list of links answered as the last resort
    ("accepted_links": a menu is not content)."""
    result = extract(html, url=url, params=params)
    if result.attempts and result.attempts[-1].reason == "accepted_links":
        return 0
    return len(result.text)
