"""The one reader of a crawl's ledger file (``OUT.ledger.jsonl``) and manifest (``OUT.manifest.json``).

A ledger line is ``{"url", "outcome", "reason"[, "detail"]}``: ``outcome`` is item, filtered, failed or
pending. Pure Python: no Scrapy import.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from boilerstrip.atomicfile import iter_whole_lines, read_whole_lines
from boilerstrip.recrawl import TOMBSTONES
from boilerstrip.state.layout import crawl_layout

__all__ = ["read_ledger", "ledger_outcomes", "read_manifest", "run_status", "finished_run", "tombstone_urls",
           "dropped_from_report"]


def read_ledger(path: Path, truncate: bool = False, strict: bool = False) -> list[dict[str, Any]]:
    """The entries of a ledger file (or its journal), in order; [] when it does not exist. A line that is
    not an entry is skipped, or with ``strict`` raises ValueError (a ledger about to be rewritten must not
    lose a line). ``truncate``: cut a torn last line off the file (a journal a killed run left)."""
    entries: list[dict[str, Any]] = []
    for number, line in enumerate(read_whole_lines(path, truncate=truncate), 1):
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if isinstance(entry, dict) and isinstance(entry.get("url"), str):
            entries.append(entry)
        elif strict:
            raise ValueError(f"{path}: line {number} is not a ledger entry")
    return entries


def ledger_outcomes(path: Path) -> dict[str, str] | None:
    """URL -> ``outcome:reason`` of every URL the crawl settled (None without a ledger)."""
    if not path.is_file():
        return None
    return {entry["url"]: f"{entry.get('outcome')}:{entry.get('reason') or ''}" for entry in read_ledger(path)}


def read_manifest(out: str | Path) -> dict[str, Any] | None:
    """The manifest of the run that wrote ``out`` (None: none, or not a JSON object)."""
    try:
        data = json.loads(crawl_layout(out).manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def run_status(out: str | Path) -> int:
    """0 when the run writing ``out`` finished reconciled, 3 on a ledger mismatch, 4 without a manifest."""
    data = read_manifest(out)
    if data is None:
        return 4
    if data.get("reconciled") or not data.get("fail_on_mismatch", True):
        return 0
    return 3


def finished_run(out: str | Path) -> dict[str, Any] | None:
    """The manifest of the run that wrote ``out`` when that run finished, finishing pass included, and its
    output is as the manifest lists it (no part file left, the same bytes): nothing is left to resume.
    None otherwise (never run, stopped early, its finishing pass failed, or the output changed since)."""
    paths = crawl_layout(out)
    data = read_manifest(out)
    if data is None or data.get("finish_reason") != "finished" or data.get("finished") is False:
        return None
    if paths.part.exists() or not paths.final.is_file():
        return None
    listed = [part for part in data.get("parts") or () if isinstance(part, dict) and part.get("path") == str(paths.final)]
    if not listed or listed[0].get("bytes") != paths.final.stat().st_size:
        return None
    return data


#: what a tombstone line holds, however its JSON is spaced (every record of a recurring crawl has a
#: ``change``; only a tombstone's is "removed" or "unseen")
_TOMBSTONE_RE = re.compile(rb'"change"\s*:\s*"(?:removed|unseen)"')


def tombstone_urls(path: Path) -> set[str]:
    """URLs of a recurring crawl's tombstones (``change`` removed/unseen): pages of an earlier crawl,
    not records of this one, so the ledger does not account for them."""
    urls: set[str] = set()
    for line in iter_whole_lines(path):
        if _TOMBSTONE_RE.search(line) is None:  # most lines: a page, not parsed (tens of kilobytes each)
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("change") in TOMBSTONES and isinstance(record.get("url"), str):
            urls.add(record["url"])
    return urls


def dropped_from_report(report: str | Path) -> dict[str, str]:
    """URL -> reason of the records a finishing pass dropped, from its report (``sites.*.duplicates``)."""
    try:
        data = json.loads(Path(report).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    dropped: dict[str, str] = {}
    for site in (data.get("sites") or {}).values():
        for entry in site.get("duplicates") or ():
            if isinstance(entry, dict) and isinstance(entry.get("url"), str):
                dropped[entry["url"]] = str(entry.get("reason") or "duplicate")
    return dropped
