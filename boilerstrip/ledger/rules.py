"""The ledger's rules: when a URL is admitted, which key a request, an item or a drop settles, and how a
settlement is entered. Written once; used by the local crawl (:class:`Ledger`, under
:class:`boilerstrip.extensions.ledger.LedgerExtension`) and by a distributed worker
(:class:`boilerstrip.distributed.scheduler.WorkerLedger`, which enters settlements in Redis).

- A URL is *admitted* when its first request is scheduled; its key (the URL of that first request) goes in
  ``meta[LEDGER_KEY]`` and is inherited by every redirect hop, retry and browser re-issue (Scrapy copies
  meta), so a hop never counts as a second URL. Infrastructure requests (robots.txt, sitemaps) are not pages.
- A request the dupefilter drops was never admitted. A link filtered before it was scheduled is entered
  once, ``admitted: false``.
- Outcomes: an item -> ``item``; a dropped item -> ``filtered:<reason>`` (``failed:<reason>`` for an
  exception whose ``outcome`` is ``failed``); a pipeline error -> ``failed:pipeline_error:<Exception>``.

Pure Python: no Scrapy import (the exceptions are read by their attributes).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from boilerstrip.meta import KIND_META, LEDGER_KEY, LEDGER_SKIP

from .manifest import tally

__all__ = ["LedgerParams", "Record", "Ledger", "OUTCOMES", "is_page", "admit", "settlement_key", "dropped_outcome",
           "error_outcome", "is_repeat"]

logger = logging.getLogger(__name__)

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


def is_page(meta: Any) -> bool:
    """Is the request with this meta a page to account for (not robots.txt, a sitemap, a wake-up)?"""
    return not meta.get(LEDGER_SKIP) and meta.get(KIND_META, "page") == "page"


def admit(meta: Any, url: str) -> str | None:
    """Give a page request its ledger key at its first scheduling: the key, or None (not a page, or a hop,
    retry or re-issue of an admitted URL, which keeps its key)."""
    if not is_page(meta) or meta.get(LEDGER_KEY):
        return None
    meta[LEDGER_KEY] = url
    return url


def settlement_key(response: Any, item: Any) -> str:
    """The ledger key an item (or its drop) settles: the key its request carried, else the item's URL."""
    meta = getattr(response, "meta", None) if response is not None else None
    try:
        key = meta.get(LEDGER_KEY) if meta is not None else None
    except AttributeError:  # Response.meta without a request
        key = None
    if key:
        return key
    # an item is a dataclass (boilerstrip.items), a dict or a scrapy.Item: read as itemadapter would, without
    # importing it (itemadapter imports Scrapy when it is installed, and this module is pure)
    try:
        url = item.get("url") if callable(getattr(item, "get", None)) else getattr(item, "url", None)
    except Exception:  # noqa: BLE001 - not an item at all: the response's URL says which page it was
        url = None
    return str(url or getattr(response, "url", "") or "<unknown>")


def dropped_outcome(exception: Any) -> tuple[str, str, str]:
    """(outcome, reason, detail) of an item a pipeline dropped (``boilerstrip.outcomes.FilteredItem`` and
    ``FailedItem`` say their outcome and reason; any other drop is ``filtered:dropped``)."""
    reason = getattr(exception, "reason", None)
    outcome = getattr(exception, "outcome", "filtered")
    return (outcome if outcome in ("filtered", "failed") else "filtered",
            reason if isinstance(reason, str) and reason else "dropped", str(exception or ""))


def error_outcome(failure: Any) -> tuple[str, str, str, Any]:
    """(outcome, reason, detail, exception) of an item a pipeline raised on."""
    exc = getattr(failure, "value", failure)
    return "failed", f"pipeline_error:{type(exc).__name__}", str(exc), exc


def is_repeat(outcome: str, reason: str) -> bool:
    """A dupefilter/redirect repeat of a URL: says nothing new about a URL already accounted for."""
    return outcome == "filtered" and reason.startswith("duplicate")


@dataclass(slots=True)  # one per URL the crawl decided about: kept small
class Record:
    url: str
    outcome: str | None = None  # item | filtered | failed; None while pending
    reason: str = ""
    detail: str = ""
    admitted: bool = True  # False: filtered before it reached the scheduler
    previous: bool = False  # settled by an earlier run this one resumes
    creator: int = 0  # the number of the request that admitted it (to undo a dupefilter drop)

    def as_line(self) -> dict[str, Any]:
        line = {"url": self.url, "outcome": self.outcome or "pending", "reason": self.reason}
        if self.detail:
            line["detail"] = self.detail[:300]
        return line


class Ledger:
    """One run's URL outcomes in memory, by the rules above. ``journal(record)`` is called with every
    record that settled (the journal file of a local crawl); ``count(name, n)`` with what the stats count."""

    def __init__(self, journal: Any = None, count: Any = None) -> None:
        self.records: dict[str, Record] = {}
        self.doubles: list[dict[str, str]] = []
        self._journal = journal or (lambda record: None)
        self._count = count or (lambda name, n=1: None)

    def resume(self, settled: dict[str, tuple[str, str]]) -> None:
        """Start from what an earlier run settled (URL -> (outcome, reason))."""
        for url, (outcome, reason) in settled.items():
            self.records[url] = Record(url, outcome, reason, previous=True)
        self._count("resumed_records", len(self.records))

    # -- admission -------------------------------------------------------------------------------------------
    def admitted(self, key: str, creator: int) -> None:
        """The request ``creator`` (a number the caller gives each request it schedules) was scheduled first
        for ``key``."""
        record = self.records.get(key)
        if record is None:
            self.records[key] = Record(key, creator=creator)
        elif not record.admitted and not record.previous:
            # filtered as a link earlier (say over a page's outlink cap), now admitted from another page
            self.records[key] = Record(key, creator=creator)
        elif record.previous and record.outcome != "item":
            record.creator = creator  # the earlier run filtered/failed it; this run tries again

    def dropped(self, key: str | None, creator: int) -> None:
        """The dupefilter dropped the request ``creator`` of ``key``."""
        record = self.records.get(key) if key else None
        if record is None or record.previous:
            return  # unknown, or settled by the run this one resumes (a JOBDIR dupefilter remembers it)
        if record.creator == creator and (record.outcome is None or record.reason.startswith("duplicate")):
            del self.records[key]  # a duplicate the dupefilter caught: never admitted
        # A redirect hop to a URL fetched already leaves its key pending: the spider reports it
        # (filtered:duplicate); if nobody does, the reconcile names it.

    # -- outcomes --------------------------------------------------------------------------------------------
    def settle_link(self, url: str, outcome: str, reason: str, detail: str = "") -> None:
        """A URL reported without a ledger key: filtered before it was ever scheduled (a trap, an invalid
        start URL), counted once per URL."""
        record = self.records.get(url)
        if record is None:
            self.records[url] = Record(url, outcome, reason, detail, admitted=False)
            self._journal(self.records[url])
        elif record.outcome is None and not record.admitted:
            record.outcome, record.reason, record.detail = outcome, reason, detail
        else:
            self._count("settled_known")  # the URL is accounted for already (a repeat link to it)

    def settle(self, key: str, outcome: str, reason: str, detail: str = "") -> None:
        record = self.records.get(key)
        if record is None:
            if is_repeat(outcome, reason):
                self._count("settled_known")  # a repeat the dupefilter dropped: never admitted
                return
            record = self.records[key] = Record(key, admitted=True)
            self._count("settled_unadmitted")
        if record.outcome is None or not record.admitted:
            record.outcome, record.reason, record.detail, record.admitted = outcome, reason, detail, True
        elif record.previous:
            if is_repeat(outcome, reason):
                # The earlier run settled it and a resumed JOBDIR dupefilter drops it again: that says
                # nothing new, the earlier outcome (robots_disallowed, duplicate_canonical...) stands.
                self._count("settled_known")
                return
            record.previous = False
            if record.outcome == "item" and outcome == "item":
                self._count("resumed_already_written")
                return
            if record.outcome == "item":
                return  # written by the earlier run; a failure now does not unwrite it
            record.outcome, record.reason, record.detail = outcome, reason, detail
        elif is_repeat(outcome, reason):
            self._count("settled_known")  # a dupefilter/redirect repeat of a URL already accounted for
            return
        else:
            self.doubles.append({"url": key, "first": f"{record.outcome}:{record.reason}".rstrip(":"),
                                 "again": f"{outcome}:{reason}".rstrip(":")})
            logger.error("ledger: %s settled twice (%s:%s, then %s:%s)", key, record.outcome, record.reason, outcome, reason)
            return
        self._journal(record)

    def unwrite(self, key: str, reason: str) -> None:
        """An item settled as written could not be written after all (the feed dead-lettered it)."""
        record = self.records.get(key)
        if record is not None and record.outcome == "item":
            record.outcome, record.reason = "failed", reason
            self._journal(record)

    # -- the end ---------------------------------------------------------------------------------------------
    def pending(self) -> list[str]:
        return [r.url for r in self.records.values() if r.outcome is None]

    def lines(self) -> list[dict[str, Any]]:
        """The ledger file's lines, by URL."""
        return [r.as_line() for r in sorted(self.records.values(), key=lambda r: r.url)]

    def tally(self) -> tuple[dict[str, int], dict[str, int]]:
        """(counts, reasons) as the manifest has them: :func:`boilerstrip.ledger.manifest.tally` of the
        lines, plus ``admitted``, ``filtered_before_admission`` and ``settled_twice``."""
        counts, reasons = tally(r.as_line() for r in self.records.values())
        counts["admitted"] = sum(1 for r in self.records.values() if r.admitted)
        counts["filtered_before_admission"] = counts["urls"] - counts["admitted"]
        counts["settled_twice"] = len(self.doubles)
        return counts, reasons

    def counts(self) -> dict[str, int]:
        return self.tally()[0]

    def balanced(self) -> bool:
        """Every URL settled exactly once."""
        return not self.pending() and not self.doubles
