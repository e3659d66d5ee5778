"""Chunk a crawl's JSONL into a chunks JSONL, reporting each chunk new/unchanged/removed against a store.

What ``boilerstrip chunk`` and ``boilerstrip crawl --chunks`` run. Every line of the input must be one of a
crawl's records (a page, or a tombstone ``{"url", "change": "removed"|"unseen"}``); any other line stops
the run with :class:`NotCrawlRecord` before the output is replaced or the store committed: a skipped page
would otherwise read as a removed one and its chunks would be deleted from the user's index.

Removal. A page's chunks are removed when its tombstone says ``removed``, and when a page the store knows
is missing from the input, for the sites the input holds, unless the input is *partial* (a
``--changes-only`` crawl, which leaves unchanged pages out) or the page is ``unseen`` (the crawl was cut
short). As the crawl itself does, a run that would remove more than ``max_vanished_share`` of a site's
known pages at once (of a site with at least ``min_pages_for_share_check``) removes none of them: that is a
broken crawl more often than a site that lost half its pages.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from boilerstrip.atomicfile import atomic_open

from .cut import ChunkParams
from .records import (CHUNK_FIELDS, NEW, PAGE, REMOVED, TOMBSTONE, UNCHANGED, NotCrawlRecord, chunk_records,
                      diff_ids, record_kind, removed_record, site_of)
from .store import ChunkStore
from .tokens import TokenCounter, word_counter

__all__ = ["RunParams", "chunk_file", "input_is_partial"]


@dataclass(frozen=True)
class RunParams:
    chunks: ChunkParams = field(default_factory=ChunkParams)
    # write only what an index must add or delete (new and removed chunks)
    changes_only: bool = False
    # the input holds only some pages of its sites: a page missing from it keeps its chunks
    partial: bool = False
    # the crawl's own guard (max_vanished_share and min_pages_for_share_check of RecrawlParams, same
    # values and reasons: docs/recurring.md): more than half of a site's known pages missing at once is a
    # broken crawl, not an edit, on a site of 20 pages or more
    max_vanished_share: float = 0.5
    min_pages_for_share_check: int = 20


def recipe_of(params: ChunkParams, counter: TokenCounter) -> str:
    """What the chunk IDs depend on besides the pages: the sizes and the token counter."""
    data = json.dumps({"chunks": asdict(params), "tokenizer": counter.name}, sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def input_is_partial(path: str | Path) -> bool:
    """True when the crawl that wrote ``path`` left unchanged pages out (``--changes-only``): its manifest
    counts ``filtered:unchanged``."""
    from boilerstrip.state import crawl_layout

    manifest = crawl_layout(path).manifest
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    reasons = data.get("reasons") if isinstance(data, dict) else None
    return isinstance(reasons, dict) and bool(reasons.get("filtered:unchanged"))


def _dump(record: dict[str, Any]) -> str:
    return json.dumps({k: record[k] for k in CHUNK_FIELDS if k in record}, ensure_ascii=False) + "\n"


def chunk_file(in_path: str | Path, out_path: str | Path, params: RunParams | None = None,
               counter: TokenCounter | None = None, store: ChunkStore | None = None,
               progress: Any = None) -> dict[str, Any]:
    """Chunk ``in_path`` into ``out_path`` (written atomically); with a ``store``, report and remember
    changes (committed only when the whole run succeeded); ``progress`` (a
    :class:`~boilerstrip.finishing.steps.PassProgress`) counts the records read. Returns a summary; raises
    :class:`NotCrawlRecord` (with the line number) for a line that is not a crawl's record, ``OSError`` /
    ``UnicodeError`` when a file cannot be read or written."""
    params = params or RunParams()
    counter = counter or word_counter(params.chunks.words_to_tokens)
    default_counter = counter.name == word_counter(params.chunks.words_to_tokens).name
    count = None if default_counter else counter.count
    changes: Counter = Counter()
    summary: dict[str, Any] = {"pages": 0, "tombstones": 0, "unseen": 0, "chunks": 0, "written": 0,
                               "markdown_bytes": 0, "flags": Counter(), "out": str(out_path)}
    recipe = recipe_of(params.chunks, counter)
    if store is not None:
        summary["recipe_changed"] = store.recipe() not in (None, recipe)
    seen: set[str] = set()
    sites: set[str] = set()
    with open(in_path, encoding="utf-8") as source, atomic_open(out_path, "w") as out:
        for number, line in enumerate(source, 1):
            if progress is not None:
                progress.done = number
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                raise NotCrawlRecord(f"line {number}: not JSON") from None
            try:
                kind = record_kind(record)
            except NotCrawlRecord as exc:
                raise NotCrawlRecord(f"line {number}: {exc}") from None
            url = record["url"]
            if url in seen:
                raise NotCrawlRecord(f"line {number}: {url} a second time (one crawl writes a URL once)")
            seen.add(url)
            sites.add(site_of(url))
            if kind != PAGE:
                summary["tombstones" if kind == TOMBSTONE else "unseen"] += 1
                if kind == TOMBSTONE and store is not None:
                    for chunk_id in store.get(url) or ():
                        out.write(_dump(removed_record(chunk_id, url)))
                        changes[REMOVED] += 1
                        summary["written"] += 1
                    store.delete(url)
                continue
            summary["pages"] += 1
            summary["markdown_bytes"] += len((record.get("markdown") or record.get("text") or "").encode("utf-8", "surrogatepass"))
            chunks = chunk_records(record, params.chunks, count, exact_tokens=not default_counter)
            summary["chunks"] += len(chunks)
            for chunk in chunks:
                summary["flags"].update(chunk["flags"])
            if store is None:
                for chunk in chunks:
                    out.write(_dump(chunk))
                summary["written"] += len(chunks)
                continue
            ids = tuple(c["chunk_id"] for c in chunks)
            diff = diff_ids(store.get(url), ids)
            fresh = set(diff.new)
            for chunk in chunks:
                chunk["change"] = NEW if chunk["chunk_id"] in fresh else UNCHANGED
                changes[chunk["change"]] += 1
                if chunk["change"] == NEW or not params.changes_only:
                    out.write(_dump(chunk))
                    summary["written"] += 1
            for chunk_id in diff.removed:
                out.write(_dump(removed_record(chunk_id, url)))
                changes[REMOVED] += 1
                summary["written"] += 1
            store.put(url, ids)
        if store is not None and not params.partial:
            summary["kept_missing"] = _remove_missing(store, seen, sites, params, out, changes, summary)
    if store is not None:
        store.set_recipe(recipe)
        store.commit()
        summary["changes"] = {k: changes.get(k, 0) for k in (NEW, UNCHANGED, REMOVED)}
    summary["flags"] = dict(summary["flags"])
    return summary


def _remove_missing(store: ChunkStore, seen: set[str], sites: set[str], params: RunParams, out: Any,
                    changes: Counter, summary: dict[str, Any]) -> dict[str, int]:
    """Remove the chunks of the store's pages of ``sites`` that the input did not hold; returns
    {site: pages kept} for the sites where the vanished-share guard kept them."""
    known: dict[str, int] = defaultdict(int)
    missing: dict[str, list[str]] = defaultdict(list)
    for url in store.urls():
        site = site_of(url)
        if site not in sites:
            continue
        known[site] += 1
        if url not in seen:
            missing[site].append(url)
    kept: dict[str, int] = {}
    for site, urls in sorted(missing.items()):
        if (known[site] >= params.min_pages_for_share_check
                and len(urls) > params.max_vanished_share * known[site]):
            kept[site] = len(urls)
            continue
        for url in urls:
            for chunk_id in store.get(url) or ():
                out.write(_dump(removed_record(chunk_id, url)))
                changes[REMOVED] += 1
                summary["written"] += 1
            store.delete(url)
    return kept
