"""Recurring crawls: what to ask the server, and what changed. Pure Python: no Scrapy import.

A recurring crawl keeps, per URL, its validators (ETag, Last-Modified), the hash of its main text after
cross-page removal, and a copy of its last record with its outgoing links (``boilerstrip.state``). The
next crawl with the same state folder:

- asks conditionally (:func:`conditional_headers`): a 304 means unchanged, and the stored copy is
  re-emitted, links included, without downloading the page; a sitemap ``<lastmod>`` older than the page's
  last visit skips the request altogether (:func:`lastmod_unchanged`). Stored validators count only when
  they were made with the same extraction and template settings (:func:`settings_digest`);
- marks every record ``new``, ``changed`` or ``unchanged`` by its final main-text hash
  (:func:`change_of`), so template churn (a footer date, a rotating sidebar) never makes a page changed;
- writes pages of the previous crawl that are gone as tombstones (:func:`vanished_verdicts`), unless the
  crawl was cut short or lost an implausible share of the site: then they are ``unseen``, with the reason.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from boilerstrip.items import (  # the record's `change`, and the hash of its text that decides it
    CHANGED, CHANGES, NEW, REMOVED, TOMBSTONES, UNCHANGED, UNSEEN, text_hash)

__all__ = [
    "RecrawlParams", "CHANGES", "NEW", "CHANGED", "UNCHANGED", "REMOVED", "UNSEEN", "TOMBSTONES", "REUSED_FLAG",
    "settings_digest", "text_hash", "change_of", "conditional_headers", "reuse_refusal", "lastmod_unchanged",
    "stub_html", "Vanished", "vanished_verdicts", "tombstone", "utc_now", "GONE_STATUSES", "CUT_REASONS",
    "digest_of_settings",
]

#: the flag of a record re-emitted from the state: ``reused:not_modified`` (a 304) or ``reused:sitemap_lastmod``
REUSED_FLAG = "reused"
#: ledger reasons of a fetch that says the page is gone
GONE_STATUSES = ("http_404", "http_410")
#: filtered reasons that mean the crawl did not see the whole site (a budget or a limit cut it): a page of
#: the previous crawl missing from such a crawl may simply not have been reached
CUT_REASONS = ("max_pages", "max_depth", "host_budget", "pattern_budget", "outlink_cap")


@dataclass(frozen=True)
class RecrawlParams:
    # Send If-None-Match / If-Modified-Since from the stored validators; a 304 re-emits the stored record.
    conditional: bool = True
    # Skip the request of a page whose sitemap <lastmod> is older than its last visit (a CMS whose sitemap
    # lies about lastmod hides edits: turn this off for it).
    trust_lastmod: bool = True
    # Write only new, changed and removed records (unchanged pages are filtered:unchanged in the ledger).
    changes_only: bool = False
    # Above this share of the previous crawl's pages of a site gone at once, none is marked removed: they
    # are "unseen". A real site rarely loses half its pages between two crawls; a share that high is a
    # broken start page, a login wall, a robots.txt change or a moved site (0.5 = half, the share at which
    # "the site changed" and "the crawl broke" stop being distinguishable by count alone).
    max_vanished_share: float = 0.5
    # The share check applies from this many previous pages of a site on: on a 4-page site, 3 pages
    # deleted is an ordinary edit, not a broken crawl.
    min_pages_for_share_check: int = 20

    def __post_init__(self) -> None:
        if not 0.0 < self.max_vanished_share <= 1.0:
            raise ValueError("max_vanished_share must be in (0, 1]")
        if self.min_pages_for_share_check < 0:
            raise ValueError("min_pages_for_share_check must be >= 0")


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def settings_digest(*params: Any, extra: Mapping[str, Any] | None = None) -> str:
    """A short digest of the settings a stored text hash was made with (frozen params dataclasses and
    plain values): stored validators and copies made under other settings are not trusted."""
    parts = [dataclasses.asdict(p) if dataclasses.is_dataclass(p) else p for p in params]
    source = json.dumps({"params": parts, "extra": dict(extra or {})}, sort_keys=True, default=str)
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def change_of(previous: Any, new_hash: str) -> str:
    """``new`` (never seen, or seen only as filtered/failed/removed), ``changed`` or ``unchanged``."""
    if previous is None or not previous.text_hash or not str(previous.last_outcome or "").startswith("item"):
        return NEW
    return UNCHANGED if previous.text_hash == new_hash else CHANGED


def reuse_refusal(previous: Any, has_copy: bool, digest: str) -> str | None:
    """Why the stored state of a URL cannot stand in for a fetch (None: it can)."""
    if previous is None:
        return "unknown_url"
    if previous.last_outcome != "item":
        return "not_a_page_last_time"
    if previous.settings_digest != digest:
        return "settings_changed"
    if not has_copy:
        return "no_stored_copy"
    return None


def conditional_headers(previous: Any) -> dict[str, str]:
    headers: dict[str, str] = {}
    if previous.etag:
        headers["If-None-Match"] = previous.etag
    if previous.last_modified:
        headers["If-Modified-Since"] = previous.last_modified
    return headers


def _parse_time(value: str, end_of_day: bool = False) -> datetime | None:
    value = (value or "").strip()
    if not value:
        return None
    try:
        if len(value) == 10:  # W3C date only: the change happened some time that day
            day = datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=timezone.utc)
            return day + timedelta(days=1) - timedelta(seconds=1) if end_of_day else day
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        try:
            parsed = parsedate_to_datetime(value)  # an HTTP date, as some sitemaps write
        except (TypeError, ValueError):
            return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed


def lastmod_unchanged(lastmod: str | None, last_seen: str | None) -> bool:
    """True when a sitemap ``<lastmod>`` says the page changed strictly before we last saw it. A date
    without a time counts as the end of that day; an unreadable value never skips a fetch."""
    when = _parse_time(lastmod or "", end_of_day=True)
    seen = _parse_time(last_seen or "")
    return when is not None and seen is not None and when < seen


def stub_html(links: Mapping[str, Any]) -> str:
    """A minimal page holding a stored page's outgoing links (and canonical), for the spider to follow
    as it followed the page itself: the same hrefs, resolved against the same base."""
    base = html.escape(str(links.get("base") or ""), quote=True)
    head = f'<base href="{base}">' if base else ""
    canonical = links.get("canonical")
    if canonical:
        head += f'<link rel="canonical" href="{html.escape(str(canonical), quote=True)}">'
    anchors = "".join(f'<a href="{html.escape(str(h), quote=True)}"></a>' for h in links.get("hrefs") or ())
    return f"<!DOCTYPE html><html><head>{head}</head><body>{anchors}</body></html>"


@dataclass(frozen=True)
class Vanished:
    url: str
    change: str  # removed | unseen
    reason: str
    last_seen: str | None


def vanished_verdicts(previous_pages: int, candidates: Iterable[tuple[str, str, str | None]],
                      cut_reason: str | None, params: RecrawlParams) -> list[Vanished]:
    """Which pages of the previous crawl of a site are removed and which are only unseen.

    ``candidates``: (url, why gone: ``http_404``/``http_410``/``unreachable``, last seen) of the previous
    crawl's pages of one site that this crawl did not write. A crawl cut short (``cut_reason``: say
    ``max_pages``) marks none removed; nor does one where the share gone is implausibly high."""
    found = sorted(candidates)
    if cut_reason:
        return [Vanished(u, UNSEEN, f"crawl_cut:{cut_reason}" + ("" if why == cut_reason else f":{why}"), seen)
                for u, why, seen in found]
    share = len(found) / previous_pages if previous_pages else 0.0
    if previous_pages >= params.min_pages_for_share_check and share > params.max_vanished_share:
        return [Vanished(u, UNSEEN, f"vanished_share_too_high:{why}", seen) for u, why, seen in found]
    return [Vanished(u, REMOVED, why, seen) for u, why, seen in found]


def tombstone(vanished: Vanished) -> dict[str, Any]:
    return {"url": vanished.url, "change": vanished.change, "reason": vanished.reason, "last_seen": vanished.last_seen}


def digest_of_settings(settings: Any) -> str:
    """The settings digest of a run's settings (a Scrapy ``Settings`` or a mapping): the effective
    extraction and template params, the markdown switch, and the record schema version."""
    from boilerstrip.boilerplate.params import BoilerplateParams
    from boilerstrip.config import params_from_settings
    from boilerstrip.extraction.params import ExtractionParams
    from boilerstrip.items import SCHEMA_VERSION

    markdown = settings.get("BOILERSTRIP_EXTRACTION_MARKDOWN", True)
    return settings_digest(params_from_settings(settings, "extraction", ExtractionParams),
                           params_from_settings(settings, "boilerplate", BoilerplateParams),
                           extra={"markdown": str(markdown).lower(), "schema_version": SCHEMA_VERSION})
