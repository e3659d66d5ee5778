"""From a crawl's records to chunk records, and what changed since the chunk IDs an earlier run kept.

Pure functions over dicts: :func:`record_kind` tells a page from a tombstone and refuses what is not a
crawl's record; :func:`chunk_records` gives a page's chunk records; :func:`diff_ids` compares a page's chunk
IDs with the ones kept for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .cut import ChunkParams, chunk_markdown

__all__ = ["CHUNK_FIELDS", "NEW", "UNCHANGED", "REMOVED", "PAGE", "TOMBSTONE", "UNSEEN", "NotCrawlRecord",
           "record_kind", "chunk_records", "removed_record", "PageDiff", "diff_ids", "site_of"]

#: the keys of a chunk record, in the order written (``change`` only when run with a state folder)
CHUNK_FIELDS = ("chunk_id", "change", "url", "title", "headings", "index", "char_start", "char_end", "tokens",
                "chars", "flags", "markdown", "text")
NEW, UNCHANGED, REMOVED = "new", "unchanged", "removed"
#: what a line of a crawl's output is: a page, a removed page's tombstone, a page the crawl did not see
PAGE, TOMBSTONE, UNSEEN = "page", "tombstone", "unseen"


class NotCrawlRecord(ValueError):
    """A line that is not one of a crawl's records (the message says why)."""


def record_kind(record: Any) -> str:
    """``PAGE``, ``TOMBSTONE`` (``change: removed``) or ``UNSEEN`` (``change: unseen``); raises
    :class:`NotCrawlRecord` for anything else: a chunk record, a line without a URL or without content."""
    if not isinstance(record, Mapping):
        raise NotCrawlRecord("not a JSON object")
    if "chunk_id" in record:
        raise NotCrawlRecord("a chunk record (the output of boilerstrip chunk), not a crawl's page")
    url = record.get("url")
    if not isinstance(url, str) or "://" not in url:
        raise NotCrawlRecord("no url")
    change = record.get("change")
    if "markdown" not in record and "text" not in record:
        if change == REMOVED:
            return TOMBSTONE
        if change == UNSEEN:
            return UNSEEN
        raise NotCrawlRecord("neither markdown nor text (a crawl written with --fields that leaves them out, "
                             "or not a page of boilerstrip crawl)")
    for key in ("markdown", "text"):
        if record.get(key) is not None and not isinstance(record.get(key), str):
            raise NotCrawlRecord(f"{key} is not a string")
    return PAGE


def chunk_records(record: Mapping[str, Any], params: ChunkParams, count: Callable[[str], int] | None = None,
                  exact_tokens: bool = False) -> list[dict[str, Any]]:
    """The chunk records of one page (without ``change``): cut from its ``markdown``, or from its ``text``
    when the crawl wrote no Markdown (``BOILERSTRIP_EXTRACTION_MARKDOWN`` off: paragraphs, no headings)."""
    url = record["url"]
    source = record.get("markdown") or record.get("text") or ""
    title = record.get("title")
    return [
        {"chunk_id": c.chunk_id, "url": url, "title": title, "headings": list(c.headings), "index": c.index,
         "char_start": c.char_start, "char_end": c.char_end, "tokens": c.tokens, "chars": c.chars,
         "flags": list(c.flags), "markdown": c.markdown, "text": c.text}
        for c in chunk_markdown(source, url, params, count, exact_tokens)
    ]


def removed_record(chunk_id: str, url: str) -> dict[str, Any]:
    """What a run writes for a chunk an index must delete."""
    return {"chunk_id": chunk_id, "change": REMOVED, "url": url}


@dataclass(frozen=True)
class PageDiff:
    new: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]


def diff_ids(old: Sequence[str] | None, current: Sequence[str]) -> PageDiff:
    """A page's chunk IDs now against the ones kept for it (None: the page is new to the state)."""
    kept = set(old or ())
    now = set(current)
    return PageDiff(
        new=tuple(i for i in current if i not in kept),
        unchanged=tuple(i for i in current if i in kept),
        removed=tuple(i for i in (old or ()) if i not in now),
    )


def site_of(url: str) -> str:
    """``scheme://host[:port]``: removal of missing pages is decided per site, as the crawl decides it."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"
