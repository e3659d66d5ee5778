"""The record boilerstrip writes for every page, one JSON object per line.

The schema is versioned (``schema_version``): a field is only ever added in a minor change; renaming or
removing one bumps ``SCHEMA_VERSION``. ``RECORD_FIELDS`` fixes the order of the JSONL keys; fields not
listed there (the raw ``html``) never reach the output.

A written record is *lean* by default: the content and the decisions (``EXPORT_FIELDS``). The block-by-block
trail (``TRAIL_FIELDS``: the blocks before cross-page removal with each one's verdict, the page's region, the
hashes the template model counts) is what the finishing pass works from; it travels in the crawl's
intermediate output and is dropped when the final JSONL is written, unless asked for (``crawl --trail``,
``BOILERSTRIP_FEEDS_TRAIL``). Version 2 made the trail opt-in (version 1 always wrote it).

A written line leaves out every field that holds its default (:func:`compact_record`): a missing field
means its default (``DEFAULTS``: null, ``[]``, ``{}``, ``0``, ``fetch`` "http"; ``final_url`` the
``url``, ``content_hash`` the sha256 of ``text``, ``last_changed`` the ``first_seen``). In an attempt, a
missing ``accepted`` is false and a missing ``chars`` 0. ``url`` and ``text`` are always written. Readers fill them back in with
:func:`complete_record`; a line of an older version holds every field and reads the same. The trail's fields
are written whole whenever they are written (their presence says a record can be cleaned again). Version 3
made lines compact (version 2 wrote every field, with ``", "`` and ``": "`` between them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

#: a record's ``change`` against a recurring crawl's history (``boilerstrip.recrawl`` decides it)
NEW, CHANGED, UNCHANGED, REMOVED, UNSEEN = "new", "changed", "unchanged", "removed", "unseen"
CHANGES = (NEW, CHANGED, UNCHANGED, REMOVED, UNSEEN)
#: the change kinds of a recurring crawl's lines that are not pages (tombstones)
TOMBSTONES = (REMOVED, UNSEEN)

__all__ = ["PageItem", "SCHEMA_VERSION", "EXPORT_FIELDS", "RECORD_FIELDS", "TRAIL_FIELDS", "DEFAULTS", "JSON_SEPARATORS",
           "without_trail", "compact_record", "complete_record", "text_hash"]

SCHEMA_VERSION = 3


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
    # -- transient: the page's HTML and its reading, used by the pipelines and then cleared ---------
    html: str | None = None
    #: transient: the pipelines' reading of ``html`` (``boilerstrip.reading.page.PageReading``: blocks,
    #: extraction, template hashes), read once in the worker pool; never written
    reading: Any = None
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
    page_blocks: list[dict[str, Any]] | None = None  # the page's candidate region (source=auto in BOILERSTRIP_BOILERPLATE_PARAMS: {"kind", "text", "links", "furniture"?}); None otherwise
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


#: what a record's JSON line is written with: no space after "," and ":" (version 3)
JSON_SEPARATORS = (",", ":")

#: written even when empty: a reader tells a page's line by its ``text`` (chunk, check)
_ALWAYS_WRITTEN = ("schema_version", "url", "text")
#: the value a field of the lean record takes when its line leaves it out (PageItem's defaults)
DEFAULTS: dict[str, Any] = {
    f.name: f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
    for f in fields(PageItem)
    if f.name in EXPORT_FIELDS and f.name not in _ALWAYS_WRITTEN
    and (f.default is not MISSING or f.default_factory is not MISSING)
}
#: fields whose default is another field of the same record (left out when they equal it)
_SAME_AS = {"final_url": "url", "last_changed": "first_seen"}
#: an attempt's keys, in order, and those left out at their default
_ATTEMPT_KEYS = ("method", "accepted", "chars", "reason")
_ATTEMPT_DEFAULTS: dict[str, Any] = {"accepted": False, "chars": 0}


def text_hash(text: str | None) -> str:
    """``content_hash``: the sha256 (hex) of a record's ``text`` (None: of no text); also the recurring
    crawl's change decision's only input (``boilerstrip.recrawl``)."""
    return hashlib.sha256((text or "").encode("utf-8", "surrogatepass")).hexdigest()


def _is_default(value: Any, default: Any) -> bool:
    # same type too: 0 is not False, "" is not None (markdown "" is an empty page's, None: Markdown off)
    return type(value) is type(default) and value == default


def _is_page(record: Mapping[str, Any]) -> bool:
    """A page's record: it carries ``schema_version`` (every version writes it), and it is not a failed or
    filtered URL's line, a recurring crawl's tombstone, or another tool's line (a chunk record)."""
    return ("schema_version" in record and isinstance(record.get("url"), str) and "outcome" not in record
            and record.get("change") not in TOMBSTONES)


def compact_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` as its line is written: every lean field that holds its default left out (see the module
    doc), ``schema_version`` this version's. Other lines (tombstones, outcomes) are returned as they are."""
    if not _is_page(record):
        return dict(record)
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key in DEFAULTS and _is_default(value, DEFAULTS[key]):
            continue
        if key in _SAME_AS and value == record.get(_SAME_AS[key]):
            continue
        if key == "content_hash" and isinstance(value, str) and isinstance(record.get("text"), str) \
                and value == text_hash(record["text"]):
            continue
        if key == "attempts" and isinstance(value, list):
            value = [{k: v for k, v in a.items() if not (k in _ATTEMPT_DEFAULTS and _is_default(v, _ATTEMPT_DEFAULTS[k]))}
                     if isinstance(a, Mapping) else a for a in value]
        out[key] = value
    if "schema_version" in record:
        out["schema_version"] = SCHEMA_VERSION
    return out


def complete_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A page's record with every field its line left out filled with its default (a line of any version;
    the trail is not filled: its absence says the record is lean). Other lines are returned as they are."""
    if not _is_page(record):
        return dict(record)
    if DEFAULTS.keys() <= record.keys():  # a line of version 1 or 2 (every field written)
        out = dict(record)
    else:  # keys in the record's order (RECORD_FIELDS), the ones it does not know after them
        out = {}
        for key in RECORD_FIELDS:
            if key in record:
                out[key] = record[key]
            elif key not in DEFAULTS:
                continue
            elif key in _SAME_AS:
                out[key] = record.get(_SAME_AS[key])
            elif key == "content_hash":
                out[key] = text_hash(record["text"]) if isinstance(record.get("text"), str) else None
            else:
                default = DEFAULTS[key]
                out[key] = default.copy() if isinstance(default, (list, dict)) else default
        out.update((key, value) for key, value in record.items() if key not in out)
    attempts = out.get("attempts")
    if isinstance(attempts, list) and any(isinstance(a, Mapping) and not _ATTEMPT_DEFAULTS.keys() <= a.keys() for a in attempts):
        out["attempts"] = [_complete_attempt(a) if isinstance(a, Mapping) else a for a in attempts]
    return out


def _complete_attempt(attempt: Mapping[str, Any]) -> dict[str, Any]:
    out = {key: attempt.get(key, _ATTEMPT_DEFAULTS.get(key)) for key in _ATTEMPT_KEYS
           if key in attempt or key in _ATTEMPT_DEFAULTS}
    out.update((key, value) for key, value in attempt.items() if key not in out)
    return out
