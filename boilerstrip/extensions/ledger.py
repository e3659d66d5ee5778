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
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from boilerstrip.atomicfile import append_line, atomic_write_json, note_write_error, write_error_advice
from boilerstrip.config import component_enabled, params_from_settings
from boilerstrip.feeds import WRITE_ERROR, export_failed, resume_requested
from boilerstrip.ledger import (
    Journal,
    Ledger,
    LedgerParams,
    admit,
    build_manifest,
    dropped_outcome,
    error_outcome,
    settlement_key,
    utc_now,
)
from boilerstrip.meta import LEDGER_KEY
from boilerstrip.outcomes import is_warc_replay, url_settled
from boilerstrip.state import CrawlLayout, crawl_layout, feed_output

__all__ = ["LedgerExtension"]

logger = logging.getLogger(__name__)
#: meta: the number this extension gave the request when it was last scheduled (a retry or redirect hop copies
#: meta, and its own scheduling renumbers it)
_SCHEDULED_META = "_boilerstrip_scheduled"


class LedgerExtension:
    def __init__(self, params: LedgerParams, paths: CrawlLayout | None = None, resume: bool = False, stats: Any = None, settings_digest: str = "") -> None:
        self.params = params
        self.paths = paths
        self.resume = resume
        self.stats = stats
        self.settings_digest = settings_digest
        self.journal = Journal(paths) if paths is not None else None
        self.ledger = Ledger(journal=self._journal, count=self._inc)
        self.run_id = uuid.uuid4().hex[:12]
        self.started_at = utc_now()
        #: the crawl (stopped when the journal cannot be written); None outside one
        self.crawler: Any = None
        #: the journal refused a line (a full disk): the crawl is stopping, later lines stay in memory only
        self._journal_failed = False
        self.reconciled: bool | None = None
        self.summary: dict[str, Any] = {}
        #: requests scheduled so far: each scheduling's number, left on the request's meta, names it to the
        #: ledger (``Ledger.admitted``'s ``creator``) when the dupefilter drops it
        self._scheduled = 0
        #: an item's URL (``settlement_key`` of the item alone: what the feed's ``export_failed`` can name) ->
        #: its ledger key, once ``item_scraped`` reached this extension; and the write failures the feed
        #: reported before it did
        self._item_keys: dict[str, str] = {}
        self._export_failures: dict[str, str] = {}
        self._feed_closed = False
        self._spider_closed = False
        self._finish_reason = ""

    @property
    def records(self) -> dict[str, Any]:
        return self.ledger.records

    @property
    def doubles(self) -> list[dict[str, str]]:
        return self.ledger.doubles

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
            crawl_layout(feed) if feed is not None else None,
            resume=resume,
            stats=crawler.stats,
            settings_digest=hashlib.sha256(digest_source.encode()).hexdigest()[:16],
        )
        ext.crawler = crawler
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
        if self.journal is None:
            return
        if self.resume:
            self.ledger.resume(self.journal.settled_before())
            logger.info("ledger: resuming with %d URLs settled by the earlier run", len(self.records))
        else:
            self.journal.start()

    # -- admission -------------------------------------------------------------------------------------------
    def request_scheduled(self, request: Any) -> None:
        self._scheduled += 1
        request.meta[_SCHEDULED_META] = self._scheduled
        key = admit(request.meta, request.url)
        if key is not None:
            self.ledger.admitted(key, self._scheduled)

    def request_dropped(self, request: Any) -> None:
        self.ledger.dropped(request.meta.get(LEDGER_KEY), request.meta.get(_SCHEDULED_META, -1))  # -1: names no request

    # -- outcomes --------------------------------------------------------------------------------------------
    def item_scraped(self, item: Any, response: Any = None) -> None:
        key = settlement_key(response, item)
        named = settlement_key(None, item)
        self._item_keys[named] = key
        failure = self._export_failures.pop(named, None)
        if failure:
            self.ledger.settle(key, "failed", failure)
        else:
            self.ledger.settle(key, "item", "")

    def item_dropped(self, item: Any, response: Any = None, exception: Any = None) -> None:
        self.ledger.settle(settlement_key(response, item), *dropped_outcome(exception))

    def item_error(self, item: Any, response: Any = None, failure: Any = None) -> None:
        outcome, reason, detail, exc = error_outcome(failure)
        key = settlement_key(response, item)
        self.ledger.settle(key, outcome, reason, detail)
        if self.paths is not None:
            tb = "".join(traceback.format_exception(exc)).strip().splitlines() if isinstance(exc, BaseException) else []
            append_line(self.paths.deadletter, {"url": key, "stage": "pipeline", "reason": reason, "error": str(exc)[:500], "traceback": tb[-6:]})
        self._inc("deadlettered")

    def url_settled(self, url: str, outcome: str, reason: str, detail: str = "", request: Any = None) -> None:
        key = request.meta.get(LEDGER_KEY) if request is not None else None
        if key:
            self.ledger.settle(key, outcome, reason, detail)
        else:
            self.ledger.settle_link(url, outcome, reason, detail)

    def export_failed(self, item: Any, reason: str) -> None:
        named = settlement_key(None, item)
        key = self._item_keys.get(named)
        if key is None:
            self._export_failures[named] = reason  # item_scraped has not reached us yet
            return
        self.ledger.unwrite(key, reason)

    def _journal(self, record: Any) -> None:
        if self.journal is None or self._journal_failed:
            return
        try:
            self.journal.append(record.as_line())
        except OSError as exc:
            # a full disk: one line, and the crawl stops as it does when the feed cannot write (a traceback for
            # every later URL before); the ledger keeps its lines in memory and writes them whole at the end
            self._journal_failed = True
            self._inc("write_errors")
            logger.error("ledger: cannot write %s (%s): stopping the crawl; %s", self.journal.layout.ledger_journal,
                         exc, write_error_advice(exc))
            note_write_error(self.stats, exc)
            engine = getattr(self.crawler, "engine", None)
            if engine is not None:
                from scrapy.utils.defer import deferred_from_coro

                deferred_from_coro(engine.close_spider_async(reason=WRITE_ERROR))

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"boilerstrip/ledger/{key}", count)

    # -- reconcile -------------------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        return self.ledger.counts()

    def reconcile(self) -> bool:
        counts, reasons = self.ledger.tally()
        pending = self.ledger.pending()
        ok = self.ledger.balanced()
        listed = self.params.max_listed
        self.summary = {
            "counts": counts,
            "reasons": reasons,
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
            replay = is_warc_replay(self.crawler)  # (no --resume)
            logger.warning(
                "ledger: the crawl stopped early (%s): %d URLs = %d items + %d filtered + %d failed, %d not settled "
                "yet %s; %s",
                self._finish_reason, counts["urls"], counts["item"], counts["filtered"], counts["failed"],
                len(pending), pending[:listed],
                "the same command again reads them" if replay else "the same command with --resume finishes them",
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

    def spider_closed(self, reason: str = "") -> None:
        self._finish_reason = reason
        self._spider_closed = True
        self.reconcile()
        if self.paths is not None:
            assert self.journal is not None
            try:
                self.journal.close(self.ledger.lines())
            except OSError as exc:  # a full disk: the journal stays, --resume reads it
                self._write_failed(self.paths.ledger, exc)
                return
            self._write_manifest()

    def feed_exporter_closed(self) -> None:
        self._feed_closed = True
        if self._spider_closed and self.paths is not None:
            self._write_manifest()

    def _write_manifest(self) -> None:
        try:
            self.write_manifest()
        except OSError as exc:
            self._write_failed(self.paths.manifest, exc)

    def _write_failed(self, path: Any, exc: OSError) -> None:
        """The ledger or the manifest could not be written (a full disk): one line, and the stat
        ``boilerstrip/ledger/write_failed`` that makes the run fail (``boilerstrip.run.run_spider``)."""
        logger.error("ledger: cannot write %s (%s); the journal %s stays for --resume", path, exc,
                     self.paths.ledger_journal if self.paths is not None else "")
        if self.stats is not None:
            self.stats.set_value("boilerstrip/ledger/write_failed", f"{path}: {exc}")

    def write_manifest(self) -> None:
        assert self.paths is not None
        from boilerstrip.extensions.progress import down_hosts  # the politeness middleware's gauges

        down = down_hosts(self.stats.get_stats()) if self.stats is not None else {}
        manifest = build_manifest(self.paths, run_id=self.run_id, started_at=self.started_at,
                                  finish_reason=self._finish_reason, resumed=self.resume, reconciled=bool(self.reconciled),
                                  fail_on_mismatch=self.params.fail_on_mismatch, summary=self.summary,
                                  settings_digest=self.settings_digest, **({"hosts_down": down} if down else {}))
        atomic_write_json(self.paths.manifest, manifest)
