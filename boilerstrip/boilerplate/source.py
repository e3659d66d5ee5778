"""Which blocks a page's text comes from: the extractor's choice, or the page's whole non-template region.

With ``source="auto"`` (the default) every record carries two block lists: the extractor's (``blocks``) and
the page's *region* (``page_blocks``: every block of the page cut the extractor's way, without <nav>,
<aside>, <footer>; each with its link characters and, where the extractor's class/id vocabulary names an
element around it, its ``furniture`` verdict: comments, hidden, boilerplate, chrome). Once the site's model
has ``min_pages`` pages and finds template on the page, both are cleaned with it; the region wins

- when the extractor found no main content (its result was refused or only accepted as short, or nothing
  of it survives template removal): the region minus template, comment threads and hidden text is all
  there is (an index page that is a list of links is such a page) -- reason ``extraction_failed``;
- when the region holds ``min_held_share`` of the extracted text and the extracted text is less than
  ``max_extracted_share_of_region`` of what the region adds up to: the extracted blocks plus the *prose*
  reached from them block by block (this page's own text, not link lines, not short labels, not template,
  furniture or blocks found on other pages; see :func:`_widened`). The extractor kept one part of the
  content (one section, or it left out an in-text box or a list its sentence introduces) -- reason
  ``wider_region``; the text is then the extracted blocks' span widened the same way.

Otherwise the extracted blocks are kept (``extracted_covers_region``, ``region_not_holding``,
``model_not_ready``, ``no_template_found``, ``no_page_blocks``, ``region_empty``).

The headline: the region's heading that repeats the record's ``title`` (among the few blocks before the
extracted ones) is left to neither side of the comparison -- a headline alone never makes the region win --
and every record's text starts with it, whichever source wins (``SourceChoice.headline``).

The choice is a pure function of the record and the model, so the finishing pass (with the final model)
makes the same choice in any crawl order, and again on its own output. Pure: no Scrapy, Twisted or
Playwright.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from boilerstrip.extraction import LIST_ITEM_KINDS, NAVIGATION_BOX_TITLES

from .blocks import HEADING_KINDS, block_hash, digits_insensitive, normalise_block, repair_text, slot_hash
from .clean import CleanResult, clean_page
from .model import TemplateModel
from .params import BoilerplateParams

__all__ = ["SourceChoice", "choose_source", "region_blocks_of_record", "extraction_failed", "region_fields",
           "repeats_title", "slots_of_record", "SOURCE_FLAGS", "own_navigation", "NAVIGATION"]

#: the flag a record gets when its text comes from the page's region, per reason
SOURCE_FLAGS = {
    "extraction_failed": "boilerplate_source_page_extraction_failed",
    "wider_region": "boilerplate_source_page_wider_region",
    "list_content": "boilerplate_source_page_list_content",
}
#: extraction methods whose accepted result names the main content (bodytext is the last resort)
_CONTENT_METHODS = ("semantic", "density")


@dataclass(frozen=True)
class SourceChoice:
    source: str  # "extracted" | "page"
    reason: str  # short, stable: why that source
    result: CleanResult  # the cleaned blocks of the chosen source
    extracted: CleanResult  # the cleaned extracted blocks (== result when they won)
    #: the cleaned region (template and left-out furniture marked), when it was looked at
    region: CleanResult | None = None
    #: the text carries the page's headline (the region's heading that repeats the title)
    headline: bool = False

    @property
    def flag(self) -> str | None:
        return SOURCE_FLAGS.get(self.reason) if self.source == "page" else None


def _count(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1e12 else 0


def region_blocks_of_record(record: Mapping[str, Any], params: BoilerplateParams | None = None
                            ) -> list[tuple[str, str, str | None, int]] | None:
    """(kind, text, furniture verdict or None, link characters) of the record's ``page_blocks``; None when
    it has none (older records, sources other than auto). The page's own navigation among its furniture
    (:func:`own_navigation`) gets the verdict ``navigation``."""
    raw = record.get("page_blocks")
    if not isinstance(raw, list) or not raw:
        return None
    out: list[tuple[str, str, str | None, int]] = []
    own: list[int] = []
    for block in raw:
        if not isinstance(block, Mapping) or not isinstance(block.get("text"), str):
            continue
        furniture = block.get("furniture")
        furniture = str(furniture) if furniture else None
        out.append((repair_text(str(block.get("kind") or "p")), repair_text(block["text"]), furniture,
                    _count(block.get("links"))))
        own.append(_count(block.get("own_links")))
    if not out:
        return None
    for i in own_navigation(out, own, params or BoilerplateParams()):
        kind, text, _furniture, links = out[i]
        out[i] = (kind, text, NAVIGATION, links)
    return out


#: the furniture verdict of the page's own navigation (:func:`own_navigation`): never part of the region
NAVIGATION = "navigation"
#: item kinds of a table of contents
_TOC_KINDS = frozenset(("li", "dt", "dd", "p"))


def own_navigation(region: list[tuple[str, str, str | None, int]], own_links: list[int],
                   params: BoilerplateParams) -> list[int]:
    """Indices of the region's blocks that are the page's own navigation: what differs on every page, so
    template removal cannot see it, and what the page's structure gives away. Only furniture counts (blocks
    the extractor's vocabulary already puts outside the main flow: a sidebar, a ``role=navigation``):

    - an entry of the page's own table of contents: a link line (link characters above
      ``extra_max_link_density`` of its text) whose links point at the page's own fragments (``own_links``);
    - a box titled like navigation (``_vocab.NAVIGATION_BOX_TITLES``: "Previous topic", "On this page",
      "Table of contents"): its heading, when link lines follow it, and the link lines and short labels
      ("Get started", shorter than ``extra_min_chars``) under it, up to anything else ("Previous topic" / the
      previous page's title; a sidebar's site contents with their captions)."""
    share = params.extra_max_link_density

    def in_a_box(i: int) -> str | None:
        """"link" for a link line of the page's furniture, "label" for a short line without links (a
        caption among the links: "Get started"), else None."""
        kind, text, furniture, links = region[i]
        chars = len(text.strip())
        if not furniture or furniture in _NEVER_REGION or kind in HEADING_KINDS or not chars:
            return None
        if links > share * chars:
            return "link"
        return "label" if not links and chars < params.extra_min_chars else None

    def box_follows(i: int) -> bool:
        """Do link lines follow the heading at ``i`` (past short labels)? A section of the page's own
        titled "Navigation" goes on with prose."""
        for j in range(i + 1, len(region)):
            what = in_a_box(j)
            if what != "label":
                return what == "link"
        return False

    out: list[int] = []
    in_box = False
    for i, (kind, text, furniture, links) in enumerate(region):
        chars = len(text.strip())
        if not furniture or furniture in _NEVER_REGION or not chars:
            in_box = False
            continue
        if kind in HEADING_KINDS:
            in_box = normalise_block(text, digits=False) in NAVIGATION_BOX_TITLES and box_follows(i)
            if in_box:
                out.append(i)
            continue
        if links > share * chars and kind in _TOC_KINDS and own_links[i] > share * chars:
            out.append(i)  # an entry of the page's own table of contents
            continue
        if in_box and in_a_box(i) is not None:
            out.append(i)
            continue
        in_box = False
    return out


def slots_of_record(record: Mapping[str, Any], params: BoilerplateParams) -> dict[str, str]:
    """Block hash -> structural slot (``page.slot_of``) of the record's blocks that carry one (its
    ``page_blocks`` and, with ``source="page"``, its ``blocks``); the first slot wins for a repeated text."""
    out: dict[str, str] = {}
    for key in ("page_blocks", "blocks"):
        raw = record.get(key)
        if not isinstance(raw, list):
            continue
        for block in raw:
            if not isinstance(block, Mapping) or not isinstance(block.get("slot"), str):
                continue
            kind, text = str(block.get("kind") or "p"), block.get("text")
            if not isinstance(text, str):
                continue
            h = block_hash(normalise_block(repair_text(text), digits=digits_insensitive(kind, params.normalise_digits)),
                           kind)
            if h:
                out.setdefault(h, block["slot"])
    return out


def region_fields(record: Mapping[str, Any], choice: SourceChoice) -> list[dict[str, Any]] | None:
    """The record's ``page_blocks`` as written back: {"kind", "text", "md"?, "links", "furniture"?} per block, plus
    "hash" and "removed" (template scope, ``region:<verdict>`` or null) when the region was looked at.
    Only those keys are read again, so cleaning again gives the same record."""
    raw = record.get("page_blocks")
    if not isinstance(raw, list):
        return None
    blocks = [b for b in raw if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
    marks = choice.region.blocks if choice.region is not None and len(choice.region.blocks) == len(blocks) else None
    out = []
    for i, block in enumerate(blocks):
        entry = {key: value for key, value in block.items() if key not in ("hash", "removed")}
        if marks is not None:
            entry["hash"], entry["removed"] = marks[i]["hash"], marks[i]["removed"]
        out.append(entry)
    return out


def extraction_failed(record: Mapping[str, Any]) -> bool:
    """The extractor found no main content: no method from the content rungs, or only a result accepted
    for want of a better one ("accepted_short")."""
    if record.get("method") not in _CONTENT_METHODS:
        return True
    attempts = record.get("attempts")
    if isinstance(attempts, list):
        for attempt in attempts:
            if isinstance(attempt, Mapping) and attempt.get("accepted"):
                return attempt.get("reason") != "accepted"
    return False


def repeats_title(heading: str, title: str | None, params: BoilerplateParams) -> bool:
    """Does ``heading`` repeat the page's ``title``? The extractor's rule on normalised word tokens: the
    heading's words are a run of the title's ("Slug patrol" in "Slug patrol | Garden"), or the heading
    holds the title's words and the title is at least ``min_headline_match_share`` of it."""
    if not title or not isinstance(title, str):
        return False
    words = normalise_block(heading, digits=False)
    headline = normalise_block(title, digits=False)
    if not words or not headline:
        return False
    if f" {words} " in f" {headline} ":
        return True
    return f" {headline} " in f" {words} " and len(headline) >= params.min_headline_match_share * len(words)


def _headline_of(whole: CleanResult, region: list[tuple[str, str, str | None, int]], extracted: set[str],
                 title: str | None, params: BoilerplateParams) -> int | None:
    """Index in the region of the page's headline: the nearest heading that repeats ``title`` among the
    ``headline_search_blocks`` blocks before the first block the extractor kept (among the first blocks
    when it kept none of the region's), not template, not a comment or hidden, not kept by the extractor."""
    if not title or params.headline_search_blocks == 0:
        return None
    eligible = [i for i, ((_k, _t, furniture, _l), block) in enumerate(zip(region, whole.blocks))
                if not block["removed"] and furniture not in _NEVER_REGION]
    first = next((n for n, i in enumerate(eligible) if whole.blocks[i]["hash"] in extracted), None)
    window = (eligible[max(0, first - params.headline_search_blocks):first][::-1] if first is not None
              else eligible[: params.headline_search_blocks])
    for i in window:
        block = whole.blocks[i]
        if block["kind"] in HEADING_KINDS and repeats_title(block["text"], title, params):
            return i
    return None


def _with_headline(result: CleanResult, headline: tuple[str, str] | None) -> CleanResult:
    """``result`` (the extracted blocks, cleaned) with the headline block first in its kept blocks."""
    if headline is None or not headline[1].strip():
        return result
    return dataclasses.replace(result, kept=[headline, *result.kept],
                               total_chars=result.total_chars + len(headline[1].strip()))


def _kept_chars(blocks: Iterable[tuple[str, str]]) -> int:
    return sum(len(text.strip()) for _, text in blocks)


def choose_source(
    extracted: list[tuple[str, str]],
    region: list[tuple[str, str, str | None, int]] | None,
    failed: bool,
    site: str,
    cluster: str,
    model: TemplateModel,
    params: BoilerplateParams,
    title: str | None = None,
    slots: Mapping[str, str] | None = None,
) -> SourceChoice:
    """Clean the extracted blocks and, with ``source="auto"``, the page's region; return the winner.

    ``title`` is the record's title: the region's heading that repeats it is the page's headline, which
    the text carries whichever source wins (the extractor leaves it to ``title``) and which does not count
    in the comparison: a headline alone never makes the region win. ``slots``: ``slots_of_record``."""
    cleaned = clean_page(extracted, site, cluster, model, params, slots=slots)
    if params.source != "auto":
        return SourceChoice("extracted", f"source_{params.source}", cleaned, cleaned)
    if not region:
        return SourceChoice("extracted", "no_page_blocks", cleaned, cleaned)
    # before the model is ready (fewer than min_pages pages) this removes nothing
    whole = clean_page([(kind, text) for kind, text, _, _ in region], site, cluster, model, params, slots=slots)
    kept_hashes = {block["hash"] for block in cleaned.blocks if not block["removed"]}
    at = _headline_of(whole, region, kept_hashes, title, params)
    headline = (whole.blocks[at]["kind"], whole.blocks[at]["text"]) if at is not None else None
    headline_chars = len(headline[1].strip()) if headline else 0
    if model.pages(site) < params.min_pages:
        return SourceChoice("extracted", "model_not_ready", _with_headline(cleaned, headline), cleaned,
                            headline=headline is not None)
    if whole.removed_chars == 0:
        # the model knows none of this page's template: nothing says where the content ends
        return SourceChoice("extracted", "no_template_found", _with_headline(cleaned, headline), cleaned,
                            headline=headline is not None)
    extracted_chars = _kept_chars(cleaned.kept)
    failed = failed or extracted_chars == 0
    # the region without the page's furniture (by the extractor's vocabulary: "related", "share",
    # comment threads, hidden text), except blocks the extractor itself kept and the headline
    keep = kept_hashes | ({whole.blocks[at]["hash"]} if at is not None else set())
    listing = _list_items(whole, region, site, model, params, slots)
    if listing is not None:
        # the page's content is a list of links (a chapter's table of contents, a sitemap, an index): the
        # region minus template, with its list even where the vocabulary calls it furniture ("toc")
        items, navigation = listing
        listed = _without(_without_furniture(whole, region, keep | items, skip_all=True), navigation, OUTSIDE)
        return SourceChoice("page", "list_content", listed, cleaned, listed, headline=headline is not None)
    prose = _without_furniture(whole, region, keep, skip_all=not failed)
    if failed:
        if _kept_chars(prose.kept) > headline_chars:
            return SourceChoice("page", "extraction_failed", prose, cleaned, prose, headline=headline is not None)
        return SourceChoice("extracted", "region_empty", cleaned, cleaned, prose)
    with_headline = _with_headline(cleaned, headline)
    # the extracted blocks' span in the region, widened by the prose around it: the headline alone, the
    # next article's title or the author's bio box never make a region wider
    wide = _widened(prose, region, kept_hashes, at, site, cluster, model, params)
    if wide is None:
        return SourceChoice("extracted", "region_not_holding", with_headline, cleaned, prose,
                            headline=headline is not None)
    wide, region_chars = wide
    if region_chars <= 0 or extracted_chars >= params.max_extracted_share_of_region * region_chars:
        return SourceChoice("extracted", "extracted_covers_region", with_headline, cleaned, wide,
                            headline=headline is not None)
    region_hashes = {block["hash"] for block in wide.blocks if not block["removed"]}
    held = sum(len(block["text"].strip()) for block in cleaned.blocks
               if not block["removed"] and block["hash"] in region_hashes)
    if held < params.min_held_share * extracted_chars:
        return SourceChoice("extracted", "region_not_holding", with_headline, cleaned, wide,
                            headline=headline is not None)
    return SourceChoice("page", "wider_region", wide, cleaned, wide, headline=headline is not None)


#: ``removed`` of a region block left out as furniture starts with this (``region:<verdict>``)
FURNITURE_PREFIX = "region:"
#: ``removed`` of a region block outside the widened span of the extracted blocks (not template)
OUTSIDE = "region:outside"


_PROSE, _LINKS, _STOP = "prose", "links", "stop"
#: kinds a widening takes however short: headings, code, and the terms and items of a list of this
#: page's own (``height="n"``: a parameter's name); a short paragraph (a name, a date line) stops it
_NO_MIN_CHARS_KINDS = HEADING_KINDS | {"pre", "li", "dt", "dd"}


def _introduced_items(blocks: list[dict[str, Any]]) -> set[int]:
    """Indices of the items of every list whose previous kept block ends with a colon: the list is part
    of the sentence that introduces it ("76 Methods:" then the methods, however many links they are)."""
    out: set[int] = set()
    previous: dict[str, Any] | None = None
    run = False
    for i, block in enumerate(blocks):
        if block["removed"]:
            continue
        if block["kind"] in LIST_ITEM_KINDS:
            if run or (previous is not None and previous["kind"] not in LIST_ITEM_KINDS
                       and previous["text"].rstrip().endswith(":")):
                run = True
                out.add(i)
        else:
            run = False
        previous = block
    return out


def _widened(prose: CleanResult, region: list[tuple[str, str, str | None, int]], extracted: set[str],
             headline: int | None, site: str, cluster: str, model: TemplateModel, params: BoilerplateParams
             ) -> tuple[CleanResult, int] | None:
    """``prose`` cut to the span of the blocks the extractor kept (everything kept between the first and
    the last of them: a box, a list or a heading set among the article's paragraphs), widened on each side
    block by block through this page's prose; and the characters the comparison counts (the extracted
    blocks and the prose among the others).

    A block is *prose* when it is kept (not template nor furniture), not the headline, a heading or at
    least ``extra_min_chars`` long, with link characters at most ``extra_max_link_density`` of it, and on
    at most ``extra_max_pages`` pages of the site (an author's bio box and other articles' titles are on
    several). A widening steps over left-out furniture (an in-text box named "sidebar", which stays out)
    and over link lines ("-> https://..."), which it takes along without counting them; anything else
    stops it. Headings and link lines left at the end of a widening are dropped. The headline stays;
    blocks outside are marked ``region:outside``. None when the region holds none of the extracted blocks."""
    blocks = prose.blocks
    inside = [i for i, block in enumerate(blocks) if not block["removed"] and block["hash"] in extracted]
    if not inside:
        return None

    introduced = _introduced_items(blocks)

    def kind_of(i: int) -> str:
        block = blocks[i]
        text = block["text"].strip()
        if block["removed"] or i == headline or not text:
            return _STOP
        if i in introduced:  # the items of a list its sentence introduces ("76 Methods:")
            return _PROSE
        pages = model.block_pages(site, block["hash"])
        if block["kind"] in HEADING_KINDS and pages >= params.min_pages:
            # a heading on many pages that cleaning kept heads a section of this page's own text
            # ("Description"; see clean._section_headings): the page's structure, not another page's title
            return _PROSE
        # counted in the page's cluster: an author's bio box is on their other articles; the same parameter
        # documented in a manual's two parts (another folder) is still this page's own text
        if model.block_pages(site, block["hash"], cluster) > params.extra_max_pages:
            return _STOP
        if region[i][3] > params.extra_max_link_density * len(text):
            return _LINKS
        if block["kind"] not in _NO_MIN_CHARS_KINDS and len(text) < params.extra_min_chars:
            return _STOP
        return _PROSE

    counted: set[int] = set(inside)  # what the comparison counts

    def widen(start: int, step: int) -> int:
        """The farthest prose block reached from the extracted block ``start`` going ``step`` (up to the
        next extracted block); the prose reached is counted."""
        reached, i = start, start + step
        while 0 <= i < len(blocks) and i not in inside_set:
            removed = blocks[i]["removed"]
            if removed and removed.startswith(FURNITURE_PREFIX) and i != headline:
                i += step
                continue
            kind = kind_of(i)
            if kind == _STOP and step < 0 and headline is not None and headline < i and not removed:
                # between the headline and the extracted text: the page's lede (a reference page's one-line
                # purpose, also listed in its chapter's table of contents), not another page's
                kind = _PROSE if region[i][3] <= params.extra_max_link_density * len(blocks[i]["text"].strip()) else _LINKS
            if kind == _STOP:
                break
            if kind == _PROSE:
                counted.add(i)
                if step < 0 or blocks[i]["kind"] not in HEADING_KINDS:
                    reached = i  # going down, a heading is taken only with the prose after it
            i += step
        return reached

    inside_set = set(inside)
    for i in inside:  # between extracted blocks too, only prose reached from one of them counts
        if blocks[i]["kind"] not in HEADING_KINDS:  # what precedes a heading is not its text
            widen(i, -1)
        widen(i, +1)
    lo, end = widen(inside[0], -1), widen(inside[-1], +1)
    out: list[dict[str, Any]] = []
    kept: list[tuple[str, str]] = []
    chars = 0
    for i, block in enumerate(blocks):
        if not block["removed"] and not (lo <= i <= end or i == headline):
            block = {**block, "removed": OUTSIDE}
        if not block["removed"]:
            kept.append((block["kind"], block["text"]))
            if i in counted:
                chars += len(block["text"].strip())
        out.append(block)
    return dataclasses.replace(prose, blocks=out, kept=kept), chars


def _list_items(whole: CleanResult, region: list[tuple[str, str, str | None, int]], site: str,
                model: TemplateModel, params: BoilerplateParams, slots: Mapping[str, str] | None
                ) -> tuple[set[str], set[str]] | None:
    """(hashes of the list's items, hashes of link items in the template's slots) when the page *is* a
    list: its list items that hold a link, kept (not template, not a comment or hidden) and not in a slot
    found on ``structure_min_share_of_pages`` of the site's pages (the template's own links: a "Next
    <title>" bar item, a sidebar on every page), make at least ``list_page_min_share`` of the region's kept
    text and are at least ``list_page_min_items``. None otherwise."""
    if params.list_page_min_share > 1.0:
        return None
    pages = model.pages(site)
    items: set[str] = set()
    navigation: set[str] = set()
    item_chars = total = 0
    for (_kind, _text, furniture, links), block in zip(region, whole.blocks):
        if block["removed"] or furniture in _NEVER_REGION:
            continue
        chars = len(block["text"].strip())
        if block["kind"] in LIST_ITEM_KINDS and links > 0:
            slot = slot_hash(slots.get(block["hash"])) if slots else None
            if slot and pages and model.block_pages(site, slot) >= params.structure_min_share_of_pages * pages:
                navigation.add(block["hash"])
                continue
            items.add(block["hash"])
            item_chars += chars
        total += chars
    if len(items) < params.list_page_min_items or item_chars < params.list_page_min_share * total:
        return None
    return items, navigation


def _without(result: CleanResult, hashes: set[str], reason: str) -> CleanResult:
    """``result`` with its kept blocks whose hash is in ``hashes`` marked ``removed`` = ``reason``."""
    if not hashes:
        return result
    blocks = [{**b, "removed": reason} if not b["removed"] and b["hash"] in hashes else b for b in result.blocks]
    kept = [(b["kind"], b["text"]) for b in blocks if not b["removed"]]
    return dataclasses.replace(result, blocks=blocks, kept=kept)


#: furniture verdicts never part of the region (even when the extraction failed)
_NEVER_REGION = frozenset(("comments", "hidden", NAVIGATION))


def _without_furniture(whole: CleanResult, region: list[tuple[str, str, str | None, int]], extracted: set[str],
                       skip_all: bool) -> CleanResult:
    """``whole`` with its kept furniture blocks marked left out (``removed`` = ``region:<verdict>``): comment
    threads and hidden text always, other furniture ("related", "share", <header>, <form>) when
    ``skip_all``; a block the extractor kept (its hash in ``extracted``) stays. Left-out furniture is not
    template: it does not count in ``removed_chars`` / ``removed`` (the template report). The page's own
    navigation (``navigation``) is left out even where the extractor kept it (its last rung keeps the body)."""
    blocks: list[dict[str, Any]] = []
    kept: list[tuple[str, str]] = []
    for (_kind, _text, furniture, _links), block in zip(region, whole.blocks):
        block = dict(block)
        if not block["removed"]:
            if furniture == NAVIGATION or (furniture and (skip_all or furniture in _NEVER_REGION)
                                           and block["hash"] not in extracted):
                block["removed"] = f"region:{furniture}"
            else:
                kept.append((block["kind"], block["text"]))
        blocks.append(block)
    return dataclasses.replace(whole, blocks=blocks, kept=kept)
