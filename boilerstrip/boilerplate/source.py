"""Which blocks a page's text comes from: the extractor's choice, or the page's whole non-template region.

With ``source="auto"`` (the default) every record carries two block lists: the extractor's (``blocks``) and
the page's *region* (``page_blocks``: every block of the page cut the extractor's way, without <nav>,
<aside>, <footer>; each with its link characters and, where the extractor's class/id vocabulary names an
element around it, its ``furniture`` verdict: comments, hidden, boilerplate, chrome). Once the site's model
has ``min_pages`` pages and finds template on the page, both are cleaned with it; the region wins

- when the extractor found no main content (its result was refused or only accepted as short, or nothing
  of it survives template removal): the region minus template, comment threads and hidden text is all
  there is (an index page that is a list of links is such a page) -- reason ``extraction_failed``;
- when the region minus template and furniture (blocks the extractor kept stay) holds ``min_held_share``
  of the extracted text and the extracted text is less than ``max_extracted_share_of_region`` of it: the
  extractor kept one part of the content (one section, or it left out an in-text box, the headline, a
  list) -- reason ``wider_region``.

Otherwise the extracted blocks are kept (``extracted_covers_region``, ``region_not_holding``,
``model_not_ready``, ``no_template_found``, ``no_page_blocks``, ``region_empty``). The choice is a pure
function of the record and the model, so the finishing pass (with the final model) makes the same choice
in any crawl order, and again on its own output. Pure: no Scrapy, Twisted or Playwright.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .blocks import repair_text
from .clean import CleanResult, clean_page
from .model import TemplateModel
from .params import BoilerplateParams

__all__ = ["SourceChoice", "choose_source", "region_blocks_of_record", "extraction_failed", "region_fields",
           "SOURCE_FLAGS"]

#: the flag a record gets when its text comes from the page's region, per reason
SOURCE_FLAGS = {
    "extraction_failed": "boilerplate_source_page_extraction_failed",
    "wider_region": "boilerplate_source_page_wider_region",
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

    @property
    def flag(self) -> str | None:
        return SOURCE_FLAGS.get(self.reason) if self.source == "page" else None


def region_blocks_of_record(record: Mapping[str, Any]) -> list[tuple[str, str, str | None]] | None:
    """(kind, text, furniture verdict or None) of the record's ``page_blocks``; None when it has none
    (older records, sources other than auto)."""
    raw = record.get("page_blocks")
    if not isinstance(raw, list) or not raw:
        return None
    out: list[tuple[str, str, str | None]] = []
    for block in raw:
        if not isinstance(block, Mapping) or not isinstance(block.get("text"), str):
            continue
        furniture = block.get("furniture")
        furniture = str(furniture) if furniture else None
        out.append((repair_text(str(block.get("kind") or "p")), repair_text(block["text"]), furniture))
    return out or None


def region_fields(record: Mapping[str, Any], choice: SourceChoice) -> list[dict[str, Any]] | None:
    """The record's ``page_blocks`` as written back: {"kind", "text", "links", "furniture"?} per block, plus
    "hash" and "removed" (template scope, ``region:<verdict>`` or null) when the region was looked at.
    Only those keys are read again, so cleaning again gives the same record."""
    raw = record.get("page_blocks")
    if not isinstance(raw, list):
        return None
    blocks = [b for b in raw if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
    marks = choice.region.blocks if choice.region is not None and len(choice.region.blocks) == len(blocks) else None
    out = []
    for i, block in enumerate(blocks):
        entry = {key: block[key] for key in ("kind", "text", "links", "furniture") if key in block}
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


def _kept_chars(blocks: Iterable[tuple[str, str]]) -> int:
    return sum(len(text.strip()) for _, text in blocks)


def choose_source(
    extracted: list[tuple[str, str]],
    region: list[tuple[str, str, str | None]] | None,
    failed: bool,
    site: str,
    cluster: str,
    model: TemplateModel,
    params: BoilerplateParams,
) -> SourceChoice:
    """Clean the extracted blocks and, with ``source="auto"``, the page's region; return the winner."""
    cleaned = clean_page(extracted, site, cluster, model, params)
    if params.source != "auto":
        return SourceChoice("extracted", f"source_{params.source}", cleaned, cleaned)
    if not region:
        return SourceChoice("extracted", "no_page_blocks", cleaned, cleaned)
    if model.pages(site) < params.min_pages:
        return SourceChoice("extracted", "model_not_ready", cleaned, cleaned)
    whole = clean_page([(kind, text) for kind, text, _ in region], site, cluster, model, params)
    if whole.removed_chars == 0:
        # the model knows none of this page's template: nothing says where the content ends
        return SourceChoice("extracted", "no_template_found", cleaned, cleaned)
    extracted_chars = _kept_chars(cleaned.kept)
    failed = failed or extracted_chars == 0
    # the region without the page's furniture (by the extractor's vocabulary: "related", "share",
    # comment threads, hidden text), except blocks the extractor itself kept
    kept_hashes = {block["hash"] for block in cleaned.blocks if not block["removed"]}
    prose = _without_furniture(whole, region, kept_hashes, skip_all=not failed)
    if failed:
        if _kept_chars(prose.kept) > 0:
            return SourceChoice("page", "extraction_failed", prose, cleaned, prose)
        return SourceChoice("extracted", "region_empty", cleaned, cleaned, prose)
    region_chars = _kept_chars(prose.kept)
    if not region_chars or extracted_chars >= params.max_extracted_share_of_region * region_chars:
        return SourceChoice("extracted", "extracted_covers_region", cleaned, cleaned, prose)
    region_hashes = {block["hash"] for block in prose.blocks if not block["removed"]}
    held = sum(len(block["text"].strip()) for block in cleaned.blocks
               if not block["removed"] and block["hash"] in region_hashes)
    if held < params.min_held_share * extracted_chars:
        return SourceChoice("extracted", "region_not_holding", cleaned, cleaned, prose)
    return SourceChoice("page", "wider_region", prose, cleaned, prose)


#: furniture verdicts never part of the region (even when the extraction failed)
_NEVER_REGION = frozenset(("comments", "hidden"))


def _without_furniture(whole: CleanResult, region: list[tuple[str, str, str | None]], extracted: set[str],
                       skip_all: bool) -> CleanResult:
    """``whole`` with its kept furniture blocks marked left out (``removed`` = ``region:<verdict>``): comment
    threads and hidden text always, other furniture ("related", "share", <header>, <form>) when
    ``skip_all``; a block the extractor kept (its hash in ``extracted``) stays. Left-out furniture is not
    template: it does not count in ``removed_chars`` / ``removed`` (the template report)."""
    blocks: list[dict[str, Any]] = []
    kept: list[tuple[str, str]] = []
    for (_kind, _text, furniture), block in zip(region, whole.blocks):
        block = dict(block)
        if not block["removed"]:
            if furniture and (skip_all or furniture in _NEVER_REGION) and block["hash"] not in extracted:
                block["removed"] = f"region:{furniture}"
            else:
                kept.append((block["kind"], block["text"]))
        blocks.append(block)
    return dataclasses.replace(whole, blocks=blocks, kept=kept)
