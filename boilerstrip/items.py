"""The record boilerstrip writes for every page, one JSON object per line.

The schema is versioned (``schema_version``): a field is only ever added in a minor change; renaming or
removing one bumps ``SCHEMA_VERSION``. ``RECORD_FIELDS`` fixes the order of the JSONL keys; fields not
listed there (the raw ``html``) never reach the output.

A written record is *lean* by default: the content and the decisions (``EXPORT_FIELDS``). The block-by-block
trail (``TRAIL_FIELDS``: the blocks before cross-page removal with each one's verdict, the page's region, the
hashes the template model counts) is what the finishing pass works from; it travels in the crawl's
intermediate output and is dropped when the final JSONL is written, unless asked for (``crawl --trail``,
``BOILERSTRIP_FEEDS_TRAIL``). Version 2 made the trail opt-in (version 1 always wrote it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["PageItem", "SCHEMA_VERSION", "EXPORT_FIELDS", "RECORD_FIELDS", "TRAIL_FIELDS", "without_trail"]

SCHEMA_VERSION = 2


@dataclass
class PageItem:
    # -- how the page was fetched ------------------------------------------------------------------
    url: str
    final_url: str = ""
    status: int = 0
    fetched_at: str = ""  # UTC ISO 8601, e.g. 2026-11-30T06:43:03Z
    depth: int = 0
    fetch: str = "http"  # "http" (static) or "browser" (rendered through Playwright)
    render_reason: str | None = None  # why the page went to the browser, when it did
    content_type: str | None = None
    encoding: str | None = None
    # -- transient: the page's HTML, read by the extraction pipeline and then cleared ----------------
    html: str | None = None
    # -- metadata the page states ------------------------------------------------------------------
    title: str | None = None
    lang: str | None = None  # declared (<html lang>, Content-Language, og:locale), not detected
    description: str | None = None
    canonical_url: str | None = None
    author: str | None = None
    published: str | None = None
    modified: str | None = None
    # -- content -----------------------------------------------------------------------------------
    text: str = ""
    markdown: str | None = None
    method: str | None = None  # extraction rung that won: semantic | density | bodytext
    attempts: list[dict[str, Any]] = field(default_factory=list)  # each rung: method/accepted/chars/reason
    confidence: float | None = None  # the extraction's estimated F1, 0-1 (docs/extraction.md#confidence)
    blocks: list[dict[str, Any]] = field(default_factory=list)  # {"kind", "text", ...} before cross-page removal
    content_hash: str | None = None  # sha256 of the final text
    boilerplate_removed_chars: int = 0
    boilerplate_removed_blocks: int = 0
    #: what the cross-page stage left out of the blocks the text comes from, per reason:
    #: {"template:site": {"blocks": 3, "chars": 120}, "region:outside": {...}}; {} when nothing was
    boilerplate_removed_by: dict[str, dict[str, int]] = field(default_factory=dict)
    template_cluster: str | None = None  # the page's template cluster (URL pattern), see README boilerplate
    duplicate_of: str | None = None  # URL of the page this one nearly duplicates (kept, marked)
    duplicate_similarity: float | None = None  # estimated Jaccard similarity to duplicate_of
    page_block_hashes: list[str] = field(default_factory=list)  # hashes of all the page's blocks, chrome included
    page_blocks: list[dict[str, Any]] | None = None  # the page's candidate region (BOILERSTRIP_BOILERPLATE_SOURCE=auto: {"kind", "text", "links", "furniture"?}); None otherwise
    flags: list[str] = field(default_factory=list)  # e.g. replacement_chars, boilerplate_kept_too_short
    ai_opt_out: list[str] = field(default_factory=list)  # AI-training opt-out signals found (boilerstrip.optout)
    # -- recurring crawls: set by the finishing pass from the state's per-URL history ----------------
    change: str | None = None  # new | changed | unchanged (by the final main-text hash)
    first_seen: str | None = None  # UTC ISO 8601: the first crawl that wrote this URL
    last_changed: str | None = None  # UTC ISO 8601: the last crawl that found its main text changed
    schema_version: int = SCHEMA_VERSION


#: the block-by-block trail: written only on request (see the module doc)
TRAIL_FIELDS = ("blocks", "page_block_hashes", "page_blocks")

#: every field a record can carry, in the order of its JSONL keys (the trail included)
RECORD_FIELDS = [
    "schema_version",
    "url",
    "final_url",
    "status",
    "fetched_at",
    "depth",
    "fetch",
    "render_reason",
    "content_type",
    "encoding",
    "title",
    "lang",
    "description",
    "canonical_url",
    "author",
    "published",
    "modified",
    "method",
    "attempts",
    "confidence",
    "text",
    "markdown",
    "content_hash",
    "boilerplate_removed_chars",
    "boilerplate_removed_blocks",
    "boilerplate_removed_by",
    "template_cluster",
    "duplicate_of",
    "duplicate_similarity",
    "blocks",
    "page_block_hashes",
    "page_blocks",
    "flags",
    "ai_opt_out",
    "change",
    "first_seen",
    "last_changed",
]

#: the fields of a default (lean) record, in order
EXPORT_FIELDS = [name for name in RECORD_FIELDS if name not in TRAIL_FIELDS]


def without_trail(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` without its trail fields (the same dict when it carries none)."""
    if not any(name in record for name in TRAIL_FIELDS):
        return record
    return {key: value for key, value in record.items() if key not in TRAIL_FIELDS}
