"""Account for every admitted URL: one record, filtered:<reason> or failed:<reason>, and reconcile.

A URL is *admitted* when its first request reaches the scheduler (``request_scheduled``); the key (the URL of
that first request) is stored in ``meta["boilerstrip_ledger_key"]`` and inherited by every redirect hop,
retry and browser re-issue (Scrapy copies meta), so a hop never counts as a second URL. A request the
dupefilter drops (``request_dropped``) was never admitted. Links filtered *before* scheduling (traps) are
entered as filtered too, once per URL.

Outcomes: ``item_scraped`` -> item; ``item_dropped`` -> filtered:<FilteredItem.reason or "dropped"> (failed:<reason>
for a FailedItem);
``item_error`` -> failed:pipeline_error:<Exception> and a dead-letter line; :data:`url_settled` -> as
reported. At ``spider_closed`` admitted must equal items + filtered + failed with no URL settled twice;
otherwise an ERROR, stat ``boilerstrip/ledger/mismatch`` = 1 and ``"reconciled": false`` in the manifest
(the crawl command exits non-zero). ``OUT.ledger.jsonl`` gets one line per URL; ``OUT.manifest.json`` the
counts. While the crawl runs, outcomes are journalled to ``OUT.ledger.jsonl.part`` so a resumed run
(``BOILERSTRIP_FEEDS_RESUME``) starts from them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import traceback
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from boilerstrip import __version__
from boilerstrip.config import component_enabled, params_from_settings
from boilerstrip.feeds import (
    OutputPaths,
    append_line,
    atomic_write_json,
    atomic_write_lines,
    export_failed,
    output_paths,
    iter_whole_lines,
    read_whole_lines,
    resume_requested,
    written_urls,
)
from boilerstrip.items import SCHEMA_VERSION
from boilerstrip.outcomes import FailedItem, FilteredItem, url_settled
from boilerstrip.recrawl import TOMBSTONES
from boilerstrip.state import feed_output

__all__ = ["LedgerParams", "LedgerExtension", "LEDGER_KEY", "LEDGER_SKIP", "Record", "reconcile_output", "dropped_from_report", "run_status", "tombstone_urls"]

logger = logging.getLogger(__name__)

#: meta: the ledger key of the admitted URL a request belongs to (set at first scheduling, inherited)
LEDGER_KEY = "boilerstrip_ledger_key"
#: meta: True for infrastructure requests (robots.txt, sitemaps) that are not pages to account for
LEDGER_SKIP = "boilerstrip_ledger_skip"
#: meta set by SiteSpider: "page", or "sitemap"/"robots" for infrastructure requests
KIND_META = "boilerstrip_kind"

OUTCOMES = ("item", "filtered", "failed")


@dataclass(frozen=True)
class LedgerParams:
    # A mismatch (a URL never settled, or settled twice) fails the run: the promise is "nothing lost", and
    # a log line nobody reads does not keep it. Off only to debug a spider.
    fail_on_mismatch: bool = True
    # How many unsettled/double URLs the error message and the manifest list (the ledger file has all).
    max_listed: int = 20

    def __post_init__(self) -> None:
        if self.max_listed < 0:
            raise ValueError("max_listed must be >= 0")


@dataclass(slots=True)  # one per URL the crawl decided about: kept small
class Record:
    url: str
    outcome: str | None = None  # item | filtered | failed; None while pending
    reason: str = ""
    detail: str = ""
    admitted: bool = True  # False: filtered before it reached the scheduler
    previous: bool = False  # settled by an earlier run this one resumes
    creator: int = 0  # id() of the request that admitted it (to undo a dupefilter drop)

    def as_line(self) -> dict[str, Any]:
        line = {"url": self.url, "outcome": self.outcome or "pending", "reason": self.reason}
        if self.detail:
            line["detail"] = self.detail[:300]
        return line


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class LedgerExtension:
    def __init__(self, params: LedgerParams, paths: OutputPaths | None = None, resume: bool = False, stats: Any = None, settings_digest: str = "") -> None:
        self.params = params
        self.paths = paths
        self.resume = resume
        self.stats = stats
        self.settings_digest = settings_digest
        self.records: dict[str, Record] = {}
        self.doubles: list[dict[str, str]] = []
        self.run_id = uuid.uuid4().hex[:12]
        self.started_at = _now()
        self.reconciled: bool | None = None
        self.summary: dict[str, Any] = {}
        self._item_keys: dict[int, str] = {}
        self._export_failures: dict[int, str] = {}
        self._feed_closed = False
        self._spider_closed = False
        self._finish_reason = ""

    @classmethod
    def from_crawler(cls, crawler: Any) -> LedgerExtension:
        settings = crawler.settings
        if not component_enabled(settings, "ledger"):
            raise NotConfigured("BOILERSTRIP_LEDGER_ENABLED is off")
        params = params_from_settings(settings, "ledger", LedgerParams)
        feed = feed_output(settings)
        resume = resume_requested(settings)
        digest_source = json.dumps(
            {k: str(v) for k, v in sorted(settings.copy_to_dict().items()) if k.startswith(("BOILERSTRIP_", "DOWNLOAD_", "DEPTH", "REDIRECT", "ROBOTSTXT", "CONCURRENT", "AUTOTHROTTLE"))},
            sort_keys=True,
        )
        ext = cls(
            params,
            output_paths(feed) if feed is not None else None,
            resume=resume,
            stats=crawler.stats,
            settings_digest=hashlib.sha256(digest_source.encode()).hexdigest()[:16],
        )
        connect = crawler.signals.connect
        connect(ext.spider_opened, signal=signals.spider_opened)
        connect(ext.request_scheduled, signal=signals.request_scheduled)
        connect(ext.request_dropped, signal=signals.request_dropped)
        connect(ext.item_scraped, signal=signals.item_scraped)
        connect(ext.item_dropped, signal=signals.item_dropped)
        connect(ext.item_error, signal=signals.item_error)
        connect(ext.url_settled, signal=url_settled)
        connect(ext.export_failed, signal=export_failed)
        connect(ext.spider_closed, signal=signals.spider_closed)
        connect(ext.feed_exporter_closed, signal=signals.feed_exporter_closed)
        return ext

    # -- run start -------------------------------------------------------------------------------------------
    def spider_opened(self) -> None:
        if self.paths is None:
            return
        self.paths.final.parent.mkdir(parents=True, exist_ok=True)
        if self.resume:
            self._load_previous()
        else:
            # an earlier run's files; this run's dead letters may be written before the feed opens
            for path in (self.paths.ledger_journal, self.paths.ledger, self.paths.deadletter):
                if path.exists():
                    path.unlink()

    def _load_previous(self) -> None:
        assert self.paths is not None
        for path in (self.paths.ledger, self.paths.ledger_journal):
            for line in read_whole_lines(path, truncate=path == self.paths.ledger_journal):
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("outcome") in ("filtered", "failed"):
                    self.records[entry["url"]] = Record(entry["url"], entry["outcome"], entry.get("reason", ""), previous=True)
        output = self.paths.part if self.paths.part.exists() else self.paths.final
        for url in written_urls(output):
            self.records[url] = Record(url, "item", "", previous=True)
        self._inc("resumed_records", len(self.records))
        logger.info("ledger: resuming with %d URLs settled by the earlier run", len(self.records))

    # -- admission -------------------------------------------------------------------------------------------
    def request_scheduled(self, request: Any) -> None:
        meta = request.meta
        if meta.get(LEDGER_SKIP) or meta.get(KIND_META, "page") != "page" or meta.get(LEDGER_KEY):
            return  # infrastructure, or a hop/retry/re-issue of an admitted URL
        key = request.url
        meta[LEDGER_KEY] = key
        record = self.records.get(key)
        if record is None:
            self.records[key] = Record(key, creator=id(request))
        elif not record.admitted and not record.previous:
            # filtered as a link earlier (say over a page's outlink cap), now admitted from another page
            self.records[key] = Record(key, creator=id(request))
        elif record.previous and record.outcome != "item":
            record.creator = id(request)  # the earlier run filtered/failed it; this run tries again

    def request_dropped(self, request: Any) -> None:
        key = request.meta.get(LEDGER_KEY)
        record = self.records.get(key) if key else None
        if record is None:
            return
        if record.previous:
            return  # settled by the run this one resumes (a JOBDIR dupefilter remembers its requests)
        if record.creator == id(request) and (record.outcome is None or record.reason.startswith("duplicate")):
            del self.records[key]  # a duplicate the dupefilter caught: never admitted
            return
        # A redirect hop to a URL fetched already leaves its key pending: the spider reports it
        # (filtered:duplicate); if nobody does, the reconcile names it.

    # -- outcomes --------------------------------------------------------------------------------------------
    def item_scraped(self, item: Any, response: Any = None) -> None:
        key = self._key(response, item)
        self._item_keys[id(item)] = key
        failure = self._export_failures.pop(id(item), None)
        if failure:
            self._settle(key, "failed", failure)
        else:
            self._settle(key, "item", "")

    def item_dropped(self, item: Any, response: Any = None, exception: Any = None) -> None:
        reason = exception.reason if isinstance(exception, FilteredItem) else "dropped"
        outcome = "failed" if isinstance(exception, FailedItem) else "filtered"
        self._settle(self._key(response, item), outcome, reason, str(exception or ""))

    def item_error(self, item: Any, response: Any = None, failure: Any = None) -> None:
        exc = getattr(failure, "value", failure)
        reason = f"pipeline_error:{type(exc).__name__}"
        key = self._key(response, item)
        self._settle(key, "failed", reason, str(exc))
        if self.paths is not None:
            tb = "".join(traceback.format_exception(exc)).strip().splitlines() if isinstance(exc, BaseException) else []
            append_line(self.paths.deadletter, {"url": key, "stage": "pipeline", "reason": reason, "error": str(exc)[:500], "traceback": tb[-6:]})
        self._inc("deadlettered")

    def url_settled(self, url: str, outcome: str, reason: str, detail: str = "", request: Any = None) -> None:
        key = request.meta.get(LEDGER_KEY) if request is not None else None
        if key:
            self._settle(key, outcome, reason, detail)
            return
        record = self.records.get(url)
        if record is None:
            # reported before it was ever scheduled (a trap, an invalid start URL): counted once per URL
            self.records[url] = Record(url, outcome, reason, detail, admitted=False)
            self._journal(self.records[url])
        elif record.outcome is None and not record.admitted:
            record.outcome, record.reason, record.detail = outcome, reason, detail
        else:
            self._inc("settled_known")  # the URL is accounted for already (a repeat link to it)

    def export_failed(self, item: Any, reason: str) -> None:
        key = self._item_keys.get(id(item))
        if key is None:
            self._export_failures[id(item)] = reason  # item_scraped has not reached us yet
            return
        record = self.records.get(key)
        if record is not None and record.outcome == "item":
            record.outcome, record.reason = "failed", reason
            self._journal(record)

    def _key(self, response: Any, item: Any) -> str:
        meta = getattr(response, "meta", None) if response is not None else None
        try:
            key = meta.get(LEDGER_KEY) if meta is not None else None
        except AttributeError:  # Response.meta without a request
            key = None
        if key:
            return key
        try:
            from itemadapter import ItemAdapter

            url = ItemAdapter(item).get("url")
        except Exception:  # noqa: BLE001
            url = None
        return str(url or getattr(response, "url", "") or "<unknown>")

    def _settle(self, key: str, outcome: str, reason: str, detail: str = "") -> None:
        record = self.records.get(key)
        if record is None:
            if outcome == "filtered" and reason.startswith("duplicate"):
                self._inc("settled_known")  # a repeat the dupefilter dropped: never admitted
                return
            record = self.records[key] = Record(key, admitted=True)
            self._inc("settled_unadmitted")
        if record.outcome is None or not record.admitted:
            record.outcome, record.reason, record.detail, record.admitted = outcome, reason, detail, True
        elif record.previous:
            if outcome == "filtered" and reason.startswith("duplicate"):
                # The earlier run settled it and a resumed JOBDIR dupefilter drops it again: that says
                # nothing new, the earlier outcome (robots_disallowed, duplicate_canonical...) stands.
                self._inc("settled_known")
                return
            record.previous = False
            if record.outcome == "item" and outcome == "item":
                self._inc("resumed_already_written")
                return
            if record.outcome == "item":
                return  # written by the earlier run; a failure now does not unwrite it
            record.outcome, record.reason, record.detail = outcome, reason, detail
        elif outcome == "filtered" and reason.startswith("duplicate"):
            self._inc("settled_known")  # a dupefilter/redirect repeat of a URL already accounted for
            return
        else:
            self.doubles.append({"url": key, "first": f"{record.outcome}:{record.reason}".rstrip(":"), "again": f"{outcome}:{reason}".rstrip(":")})
            logger.error("ledger: %s settled twice (%s:%s, then %s:%s)", key, record.outcome, record.reason, outcome, reason)
            return
        self._journal(record)

    def _journal(self, record: Record) -> None:
        if self.paths is not None:
            append_line(self.paths.ledger_journal, record.as_line())

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"boilerstrip/ledger/{key}", count)

    # -- reconcile -------------------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        counts = {"urls": len(self.records), "item": 0, "filtered": 0, "failed": 0, "pending": 0}
        for record in self.records.values():
            counts[record.outcome or "pending"] += 1
        counts["admitted"] = sum(1 for r in self.records.values() if r.admitted)
        counts["filtered_before_admission"] = counts["urls"] - counts["admitted"]
        counts["settled_twice"] = len(self.doubles)
        return counts

    def reconcile(self) -> bool:
        counts = self.counts()
        pending = [r.url for r in self.records.values() if r.outcome is None]
        ok = counts["urls"] == counts["item"] + counts["filtered"] + counts["failed"] and not pending and not self.doubles
        listed = self.params.max_listed
        self.summary = {
            "counts": counts,
            "reasons": self._reasons(),
            "unsettled": pending[:listed],
            "settled_twice": self.doubles[:listed],
        }
        if self.stats is not None:
            for name, value in counts.items():
                self.stats.set_value(f"boilerstrip/ledger/{name}", value)
            self.stats.set_value("boilerstrip/ledger/mismatch", 0 if ok else 1)
        if not ok and self._finish_reason not in ("", "finished") and not self.doubles:
            # A crawl stopped on purpose (Ctrl-C, CLOSESPIDER_*) leaves URLs in flight: expected, not an
            # accounting error. The manifest still says reconciled: false and the crawl exits 1.
            logger.warning(
                "ledger: the crawl stopped early (%s): %d URLs = %d items + %d filtered + %d failed, %d not settled "
                "yet %s; the same command with --resume finishes them",
                self._finish_reason, counts["urls"], counts["item"], counts["filtered"], counts["failed"],
                len(pending), pending[:listed],
            )  # fmt: skip
        elif not ok:
            logger.error(
                "ledger: MISMATCH -- %d URLs, %d items + %d filtered + %d failed, %d never settled %s, %d settled twice %s",
                counts["urls"], counts["item"], counts["filtered"], counts["failed"], len(pending), pending[:listed],
                len(self.doubles), self.doubles[:listed],
            )  # fmt: skip
        else:
            logger.info(
                "ledger: reconciled -- %d URLs = %d items + %d filtered + %d failed",
                counts["urls"], counts["item"], counts["filtered"], counts["failed"],
            )  # fmt: skip
        self.reconciled = ok
        return ok

    def _reasons(self) -> dict[str, int]:
        reasons: dict[str, int] = {}
        for record in self.records.values():
            if record.outcome in ("filtered", "failed"):
                name = f"{record.outcome}:{record.reason}"
                reasons[name] = reasons.get(name, 0) + 1
        return dict(sorted(reasons.items()))

    def spider_closed(self, reason: str = "") -> None:
        self._finish_reason = reason
        self._spider_closed = True
        self.reconcile()
        if self.paths is not None:
            lines = (json.dumps(r.as_line(), ensure_ascii=False) for r in sorted(self.records.values(), key=lambda r: r.url))
            atomic_write_lines(self.paths.ledger, lines)
            if self.paths.ledger_journal.exists():
                self.paths.ledger_journal.unlink()
            self.write_manifest()

    def feed_exporter_closed(self) -> None:
        self._feed_closed = True
        if self._spider_closed and self.paths is not None:
            self.write_manifest()

    def write_manifest(self) -> None:
        assert self.paths is not None
        paths = self.paths
        output = paths.final if paths.final.exists() else paths.part
        lines = sum(1 for _ in iter_whole_lines(output)) if output.exists() else 0
        manifest = {
            "run_id": self.run_id,
            "version": __version__,
            "schema_version": SCHEMA_VERSION,
            "started_at": self.started_at,
            "finished_at": _now(),
            "finish_reason": self._finish_reason,
            # whether the run finished, finishing pass included (FinishingExtension sets it false, with the
            # failed step, when the pass fails)
            "finished": self._finish_reason == "finished",
            "resumed": self.resume,
            "settings_digest": self.settings_digest,
            "reconciled": bool(self.reconciled),
            "fail_on_mismatch": self.params.fail_on_mismatch,
            "output": {
                "records": str(paths.final),
                "complete": paths.final.exists() and not paths.part.exists(),
                "record_lines": lines,
                "ledger": str(paths.ledger),
                "deadletter": str(paths.deadletter) if paths.deadletter.exists() else None,
            },
            "parts": [describe_part(output)] if output.exists() else [],
            **self.summary,
        }
        atomic_write_json(paths.manifest, manifest)


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


def reconcile_output(out: str | Path, dropped: dict[str, str] | None = None) -> bool:
    """Bring the ledger and manifest of ``out`` in line with the records file as it is now on disk.

    A pass after the crawl (the deterministic dedup) may drop records: each ledger ``item`` whose URL is no
    longer in the file becomes ``filtered:<reason>`` (``dropped`` maps URL -> reason; else the reason is
    ``dropped_after_crawl``). A record in the file without a ledger ``item`` entry is a mismatch. Rewrites
    ``OUT.ledger.jsonl`` and ``OUT.manifest.json`` atomically; returns whether the run still reconciles.
    """
    paths = output_paths(out)
    if not paths.manifest.exists() or not paths.ledger.exists():
        return False
    manifest = json.loads(paths.manifest.read_text(encoding="utf-8"))
    entries = [json.loads(line) for line in read_whole_lines(paths.ledger)]
    written = written_urls(paths.final) - tombstone_urls(paths.final)
    dropped = dropped or {}
    changed = 0
    for entry in entries:
        if entry["outcome"] == "item" and entry["url"] not in written:
            entry["outcome"], entry["reason"] = "filtered", dropped.get(entry["url"], "dropped_after_crawl")
            changed += 1
    items = {e["url"] for e in entries if e["outcome"] == "item"}
    extra = sorted(written - items)
    counts = dict(manifest.get("counts") or {})
    for outcome in ("item", "filtered", "failed", "pending"):
        counts[outcome] = sum(1 for e in entries if e["outcome"] == outcome)
    counts["urls"] = len(entries)
    reasons: dict[str, int] = {}
    for e in entries:
        if e["outcome"] in ("filtered", "failed"):
            reasons[f"{e['outcome']}:{e['reason']}"] = reasons.get(f"{e['outcome']}:{e['reason']}", 0) + 1
    ok = bool(manifest.get("reconciled")) and not extra and counts["pending"] == 0
    manifest.update(
        counts=counts,
        reasons=dict(sorted(reasons.items())),
        reconciled=ok,
        dropped_after_crawl=changed,
        records_without_ledger_entry=extra[:20],
    )
    manifest.setdefault("output", {})["record_lines"] = sum(1 for _ in iter_whole_lines(paths.final))
    manifest["parts"] = [describe_part(paths.final)]
    atomic_write_lines(paths.ledger, (json.dumps(e, ensure_ascii=False) for e in entries))
    atomic_write_json(paths.manifest, manifest)
    if not ok:
        logger.error("ledger: the output file and the ledger disagree: %d records without a ledger entry %s", len(extra), extra[:20])
    return ok


def tombstone_urls(path: Path) -> set[str]:
    """URLs of a recurring crawl's tombstones (``change`` removed/unseen): pages of an earlier crawl,
    not records of this one, so the ledger does not account for them."""
    urls: set[str] = set()
    for line in iter_whole_lines(path):
        if b'"change": "removed"' not in line and b'"change": "unseen"' not in line and b'"change":"' not in line:
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


def run_status(out: str | Path) -> int:
    """0 when the run writing ``out`` finished reconciled, 3 on a ledger mismatch, 4 without a manifest."""
    manifest = output_paths(out).manifest
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 4
    if data.get("reconciled") or not data.get("fail_on_mismatch", True):
        return 0
    return 3


def finished_run(out: str | Path) -> dict[str, Any] | None:
    """The manifest of the run that wrote ``out`` when that run finished, finishing pass included, and its
    output is as the manifest lists it (no part file left, the same bytes): nothing is left to resume.
    None otherwise (never run, stopped early, its finishing pass failed, or the output changed since)."""
    paths = output_paths(out)
    try:
        data = json.loads(paths.manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("finish_reason") != "finished" or data.get("finished") is False:
        return None
    if paths.part.exists() or not paths.final.is_file():
        return None
    listed = [part for part in data.get("parts") or () if isinstance(part, dict) and part.get("path") == str(paths.final)]
    if not listed or listed[0].get("bytes") != paths.final.stat().st_size:
        return None
    return data

