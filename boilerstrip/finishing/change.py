"""ChangeStep: change status on every page, tombstones for pages gone, and the per-URL history updated.

Runs after the final clean and duplicates (so the decision is made on the *final* main text, after
cross-page removal) and before the sort. For every page: ``change`` (new / changed / unchanged, by the
main-text hash against the history), ``first_seen`` and ``last_changed``; the history gets its validators,
hash, times and status, and the state a copy of the record with its links (re-emitted on a 304 next
time). Then the previous crawl's pages of the same sites that this crawl did not write: gone (404/410) or
no longer reachable ones become tombstones ``{"url", "change": "removed", "reason", "last_seen"}``,
unless the crawl was cut short or lost an implausible share of a site (then ``unseen``, with the reason;
see :func:`boilerstrip.recrawl.vanished_verdicts`). Pure Python: no Scrapy import.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from boilerstrip.boilerplate.blocks import site_of_url
from boilerstrip.recrawl import (
    CHANGED,
    CUT_REASONS,
    GONE_STATUSES,
    NEW,
    REMOVED,
    UNCHANGED,
    UNSEEN,
    RecrawlParams,
    change_of,
    text_hash,
    tombstone,
    utc_now,
    vanished_verdicts,
)
from boilerstrip.state import PageCopy, UrlState

from .base import FinishContext, Record, Step, is_page

__all__ = ["ChangeStep", "CHANGE_FIELDS"]

#: the fields this step adds to a record (not kept in the stored copy)
CHANGE_FIELDS = ("change", "first_seen", "last_changed")


class ChangeStep(Step):
    """``facts(url)``: what the crawl saw of a page ({"status", "etag", "last_modified", "links",
    "reused"?}) or None; ``settled``: every URL of the crawl's ledger -> ``outcome:reason`` (None: no
    ledger, so absence proves nothing); ``cut_reason``: why the crawl did not see the whole site."""

    name = "change"

    def __init__(self, params: RecrawlParams | None = None, digest: str = "",
                 facts: Callable[[str], Mapping[str, Any] | None] | None = None,
                 settled: Mapping[str, str] | None = None, cut_reason: str | None = None,
                 now: str | None = None) -> None:
        self.params = params or RecrawlParams()
        self.digest = digest
        self.facts = facts or (lambda url: None)
        self.settled = settled
        self.cut_reason = cut_reason
        self.now = now

    def run(self, records: Iterable[Record], context: FinishContext) -> Iterator[Record]:
        state = context.state
        if state is None:
            yield from records
            return
        now = self.now or utc_now()
        counts: Counter = Counter()
        written: set[str] = set()
        # the crawl's sites: those it wrote pages of, or settled URLs of (a site whose start page failed
        # counts); not the sites of offsite links, which another crawl sharing the state folder may own
        sites: set[str] = {site_of_url(u) for u, how in (self.settled or {}).items() if how != "filtered:offsite"}
        previous_pages: Counter = Counter()  # per site: pages of the previous crawl among this crawl's pages
        for record in records:
            if not is_page(record):
                yield record
                continue
            url = record["url"]
            site = site_of_url(url)
            sites.add(site)
            written.add(url)
            previous = state.history.get(url)
            if previous is not None and previous.last_outcome == "item":
                previous_pages[site] += 1
            change = self._remember(state, record, url, site, previous, now)
            counts[change] += 1
            self.count(context, change)
            if self.params.changes_only and change == UNCHANGED:
                self.drop(record, "unchanged", context)
                continue
            yield record
        for vanished in self._vanished(state, sites, written, previous_pages):
            counts[vanished.change] += 1
            self.count(context, vanished.change)
            if vanished.change == REMOVED:
                self._forget(state, vanished)
            if vanished.change == REMOVED or not self.params.changes_only:
                yield tombstone(vanished)
        context.report["changes"] = {k: counts.get(k, 0) for k in (NEW, CHANGED, UNCHANGED, REMOVED, UNSEEN)}
        if self.cut_reason:
            context.report["changes"]["cut_reason"] = self.cut_reason
        state.commit()

    def _remember(self, state: Any, record: Record, url: str, site: str, previous: UrlState | None, now: str) -> str:
        new_hash = text_hash(record.get("text"))
        change = change_of(previous, new_hash)
        first_seen = previous.first_seen if change != NEW and previous is not None and previous.first_seen else now
        last_changed = now if change != UNCHANGED else ((previous.last_changed if previous else None) or now)
        facts = dict(self.facts(url) or {})
        links = facts.get("links")
        if links is not None and links.get("complete") is False:
            links = None  # links unreadable: no copy may stand in for the page (its children would be lost)
        reused = bool(facts.get("reused"))
        etag, last_modified = facts.get("etag"), facts.get("last_modified")
        if reused and previous is not None:  # a 304 may refresh the validators; else the stored ones stand
            etag, last_modified = etag or previous.etag, last_modified or previous.last_modified
        if links is None:
            etag = last_modified = None  # without the links no copy can stand in: the next crawl fetches it
        state.history.put(UrlState(
            url=url, site=site, etag=etag, last_modified=last_modified, text_hash=new_hash,
            first_seen=first_seen, last_seen=now, last_changed=last_changed,
            last_status=facts.get("status") or record.get("status"), last_outcome="item",
            settings_digest=self.digest,
        ))
        if links is None:
            state.pages.delete(url)
        else:
            stored = {k: v for k, v in record.items() if k not in CHANGE_FIELDS}
            state.pages.put(PageCopy(url, stored, dict(links)))
        record["change"] = change
        record["first_seen"] = first_seen
        record["last_changed"] = last_changed
        return change

    def _vanished(self, state: Any, sites: set[str], written: set[str], previous_pages: Counter) -> list[Any]:
        out = []
        for site in sorted(sites):
            candidates = []
            pages = previous_pages[site]
            for entry in state.history.iter_site(site):
                if entry.url in written or entry.last_outcome != "item":
                    continue
                pages += 1
                if self.settled is None:
                    continue  # no ledger: absence proves nothing
                settled = self.settled.get(entry.url)
                why = settled.partition(":")[2] if settled else "unreachable"
                gone = settled is not None and settled.startswith("failed:") and why in GONE_STATUSES
                not_reached = settled is not None and settled.startswith("filtered:") and why in CUT_REASONS
                if settled is not None and not gone and not not_reached:
                    continue  # reached, and filtered or failed for another reason: not gone
                candidates.append((entry.url, why, entry.last_seen))
            out += vanished_verdicts(pages, candidates, self.cut_reason, self.params)
        return out

    def _forget(self, state: Any, vanished: Any) -> None:
        previous = state.history.get(vanished.url)
        if previous is not None:
            state.history.put(dataclasses.replace(previous, last_outcome=f"removed:{vanished.reason}", etag=None,
                                                  last_modified=None))
        state.pages.delete(vanished.url)
        state.templates.remove_page(site_of_url(vanished.url), vanished.url)
