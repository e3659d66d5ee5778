"""The run manifest (``OUT.manifest.json``): built here, and only here, for a local crawl, a distributed
crawl's merged output and the finishing pass's reconciliation.

The manifest says who wrote the output (run id, version, schema), when, how the run ended (``finish_reason``,
``finished``), whether every URL is accounted for (``reconciled``, ``counts``, ``reasons``, ``unsettled``,
``settled_twice``) and which files it wrote (``output``, ``parts``: path, bytes, lines, sha256). Pure
Python: no Scrapy import.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from boilerstrip import __version__
from boilerstrip.atomicfile import atomic_write_json, atomic_write_lines, written_urls
from boilerstrip.items import SCHEMA_VERSION
from boilerstrip.state.layout import CrawlLayout, crawl_layout

from .reader import read_ledger, read_manifest, tombstone_urls

__all__ = ["describe_part", "tally", "build_manifest", "write_ledger", "reconcile_output", "utc_now"]

logger = logging.getLogger(__name__)


def utc_now() -> str:
    """A manifest's time stamp: UTC, to the second."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def describe_part(path: Path) -> dict[str, Any]:
    """A file of the run as the manifest lists it: path, bytes, whole lines, sha256."""
    digest = hashlib.sha256()
    size = lines = 0
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
            lines += chunk.count(b"\n")
    return {"path": str(path), "bytes": size, "lines": lines, "sha256": digest.hexdigest()}


def tally(entries: Iterable[Mapping[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    """(counts, reasons) of ledger entries: ``urls`` and one count per outcome (``pending`` included);
    ``outcome:reason`` -> URLs for the filtered and failed ones, sorted by name."""
    counts = {"urls": 0, "item": 0, "filtered": 0, "failed": 0, "pending": 0}
    reasons: dict[str, int] = {}
    for entry in entries:
        outcome = entry.get("outcome") or "pending"
        counts["urls"] += 1
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome in ("filtered", "failed"):
            name = f"{outcome}:{entry.get('reason', '')}"
            reasons[name] = reasons.get(name, 0) + 1
    return counts, dict(sorted(reasons.items()))


def write_ledger(path: Path, entries: Iterable[Mapping[str, Any]]) -> int:
    """Write the ledger file whole, one entry a line (atomically)."""
    return atomic_write_lines(path, (json.dumps(entry, ensure_ascii=False) for entry in entries))


def build_manifest(layout: CrawlLayout, *, run_id: str, started_at: str, finish_reason: str, resumed: bool,
                   reconciled: bool, fail_on_mismatch: bool, summary: Mapping[str, Any],
                   settings_digest: str | None = None, **extra: Any) -> dict[str, Any]:
    """The manifest of a run that wrote ``layout``'s files as they are on disk now. ``summary``: ``counts``,
    ``reasons``, ``unsettled``, ``settled_twice``; ``extra``: sections of one kind of run (``distributed``)."""
    output = layout.final if layout.final.exists() else layout.part
    part = describe_part(output) if output.exists() else None
    manifest: dict[str, Any] = {
        "run_id": run_id,
        "version": __version__,
        "schema_version": SCHEMA_VERSION,
        "started_at": started_at,
        "finished_at": utc_now(),
        "finish_reason": finish_reason,
        # whether the run finished, finishing pass included (FinishingExtension sets it false, with the
        # failed step, when the pass fails)
        "finished": finish_reason == "finished",
        "resumed": resumed,
        "reconciled": bool(reconciled),
        "fail_on_mismatch": fail_on_mismatch,
        "output": {
            "records": str(layout.final),
            "complete": layout.final.exists() and not layout.part.exists(),
            "record_lines": part["lines"] if part else 0,
            "ledger": str(layout.ledger),
            "deadletter": str(layout.deadletter) if layout.deadletter.exists() else None,
        },
        "parts": [part] if part else [],
        **summary,
        **extra,
    }
    if settings_digest is not None:
        manifest["settings_digest"] = settings_digest
    return manifest


def reconcile_output(out: str | Path, dropped: dict[str, str] | None = None) -> bool:
    """Bring the ledger and manifest of ``out`` in line with the records file as it is now on disk.

    A pass after the crawl (the finishing pass) may drop records: each ledger ``item`` whose URL is no
    longer in the file becomes ``filtered:<reason>`` (``dropped`` maps URL -> reason; else the reason is
    ``dropped_after_crawl``). A record in the file without a ledger ``item`` entry is a mismatch. Rewrites
    ``OUT.ledger.jsonl`` and ``OUT.manifest.json`` atomically; returns whether the run still reconciles.
    """
    layout = crawl_layout(out)
    manifest = read_manifest(out)
    if manifest is None or not layout.ledger.exists():
        return False
    entries = read_ledger(layout.ledger, strict=True)
    written = written_urls(layout.final) - tombstone_urls(layout.final)
    dropped = dropped or {}
    changed = 0
    for entry in entries:
        if entry["outcome"] == "item" and entry["url"] not in written:
            entry["outcome"], entry["reason"] = "filtered", dropped.get(entry["url"], "dropped_after_crawl")
            changed += 1
    items = {e["url"] for e in entries if e["outcome"] == "item"}
    extra = sorted(written - items)
    counts, reasons = tally(entries)
    counts = {**(manifest.get("counts") or {}), **counts}
    ok = bool(manifest.get("reconciled")) and not extra and counts["pending"] == 0
    part = describe_part(layout.final)
    manifest.update(
        counts=counts,
        reasons=reasons,
        reconciled=ok,
        dropped_after_crawl=changed,
        records_without_ledger_entry=extra[:20],
    )
    manifest.setdefault("output", {})["record_lines"] = part["lines"]
    manifest["parts"] = [part]
    write_ledger(layout.ledger, entries)
    atomic_write_json(layout.manifest, manifest)
    if not ok:
        logger.error("ledger: the output file and the ledger disagree: %d records without a ledger entry %s",
                     len(extra), extra[:20])
    return ok
