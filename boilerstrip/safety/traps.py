"""Crawler-trap rules: decide, per outgoing link, whether it is a trap and why.

Pure: a :class:`TrapState` per crawl holds the counters; :meth:`TrapState.check` returns None (follow)
or a short reason (``max_depth``, ``host_budget``, ``repeated_segments``, ``pattern_budget``,
``url_too_long``). Session ids are not a trap rule: URL normalisation strips them
(:func:`boilerstrip.urls.normalize_url`, ``strip_session_ids`` of ``BOILERSTRIP_URLS_PARAMS``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

__all__ = [
    "TrapParams",
    "TrapState",
    "non_http_scheme",
    "FETCHABLE_OTHER_SCHEMES",
    "url_pattern",
    "is_date_like",
]

#: schemes some URL handler could fetch (Scrapy's file/data/ftp/s3, curl's, a browser's): a link with one of
#: these is recorded as filtered:scheme_not_allowed; mailto:, tel:, javascript: are not fetches at all.
FETCHABLE_OTHER_SCHEMES = frozenset(
    {"file", "ftp", "ftps", "sftp", "tftp", "s3", "gs", "data", "gopher", "smb", "nfs", "ldap", "ldaps", "dict",
     "jar", "ws", "wss", "blob", "netdoc", "view-source", "filesystem", "chrome", "resource"}
)  # fmt: skip
_SCHEME = re.compile(r"^\s*([a-zA-Z][a-zA-Z0-9+.-]*):")

_DIGITS = re.compile(r"\d+")
_YEAR_MONTH = re.compile(r"(?<!\d)(?:19|20)\d\d(?:[-/_.]?)(?:0?[1-9]|1[0-2])(?!\d)")
_DATE_KEYS = frozenset(
    {"year", "month", "day", "date", "week", "cal", "calendar", "from", "to", "start", "end", "y", "m", "d", "ym"}
)


@dataclass(frozen=True)
class TrapParams:
    # Links deeper than this many hops from a start URL are filtered (reason ``max_depth``). 0 = no limit.
    # A backstop, not the crawl's shape (that is BOILERSTRIP_CRAWL_MAX_DEPTH): 100 lets a long "next page"
    # chain of a real archive through and still ends a link chain that a trap grows forever.
    max_depth: int = 100
    # Requests admitted per host:port (reason ``host_budget``). 0 = no limit. A polite default of 10 000
    # pages (about 3 h at the polite 1 req/s) keeps one runaway site from eating a crawl.
    max_pages_per_host: int = 10_000
    # A path segment may occur at most this many times (``/a/b/a/b/a/b`` has ``a`` 3x; reason
    # ``repeated_segments``). Relative-link loops repeat a segment on every hop; real paths rarely twice.
    max_segment_repeats: int = 2
    # Links followed per page (the rest: reason ``outlink_cap``). Link farms and faceted navigation
    # reach tens of thousands; a real page's content links fit in 1 000.
    max_outlinks_per_page: int = 1_000
    # Date-like URLs (calendars, archives) sharing one shape (digits normalised) are followed at most this
    # many times (reason ``pattern_budget``): 120 = ten years of monthly pages, then the calendar ends.
    max_urls_per_pattern: int = 120
    # URLs longer than this many characters are filtered (reason ``url_too_long``); 2083 is the classic
    # browser limit and Scrapy's URLLENGTH_LIMIT, whose own middleware drops them without a reason. The one
    # URL-length rule of the crawl (URL normalisation does not cut URLs).
    max_url_chars: int = 2083

    def __post_init__(self) -> None:
        for name in ("max_depth", "max_pages_per_host", "max_outlinks_per_page", "max_urls_per_pattern", "max_url_chars"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.max_segment_repeats < 1:
            raise ValueError("max_segment_repeats must be >= 1")


def non_http_scheme(href: str) -> str | None:
    """The scheme of ``href`` when it is one a handler could fetch but boilerstrip never does (file, ftp...)."""
    match = _SCHEME.match(href)
    if match is None:
        return None
    scheme = match.group(1).lower()
    return scheme if scheme in FETCHABLE_OTHER_SCHEMES else None


def url_pattern(url: str) -> str:
    """The URL's shape: host, path and sorted query keys with every digit run replaced by ``#``."""
    parts = urlsplit(url)
    keys = sorted({k for k, _ in parse_qsl(parts.query, keep_blank_values=True)})
    values = "&".join(f"{k}=#" for k in keys)
    return f"{parts.netloc.lower()}{_DIGITS.sub('#', parts.path)}?{_DIGITS.sub('#', values)}"


def is_date_like(url: str) -> bool:
    """True when the URL names a date: ``/2026/11``, ``2026-11-30``, ``?month=11&year=2026``..."""
    parts = urlsplit(url)
    if _YEAR_MONTH.search(parts.path) or _YEAR_MONTH.search(parts.query):
        return True
    keys = {k.lower() for k, v in parse_qsl(parts.query, keep_blank_values=True) if any(c.isdigit() for c in v)}
    return bool(keys & _DATE_KEYS)


def _segment_overflow(path: str, limit: int) -> bool:
    segments = [seg for seg in path.split("/") if seg and seg not in (".", "..")]
    if not segments:
        return False
    return max(Counter(segments).values()) > limit


@dataclass
class TrapState:
    """Counters for one crawl. ``check`` decides one link; ``admit`` counts it once followed."""

    params: TrapParams
    per_host: Counter = field(default_factory=Counter)
    per_pattern: Counter = field(default_factory=Counter)
    seen: set = field(default_factory=set)

    def check_and_admit(self, url: str, depth: int) -> str | None:
        """:meth:`check`, then :meth:`admit` when it passes: what the crawl asks of each link (a shared
        state does both in one step, see ``boilerstrip.distributed.traps``)."""
        reason = self.check(url, depth)
        if reason is None:
            self.admit(url)
        return reason

    def static_reason(self, url: str, depth: int) -> str | None:
        """The rules that need no counter: URL length, depth, a malformed URL, repeated path segments."""
        p = self.params
        if p.max_url_chars and len(url) > p.max_url_chars:
            return "url_too_long"
        if p.max_depth and depth > p.max_depth:
            return "max_depth"
        try:
            parts = urlsplit(url)
            parts.netloc.lower()
        except ValueError:
            return "bad_url"
        if _segment_overflow(parts.path, p.max_segment_repeats):
            return "repeated_segments"
        return None

    def check(self, url: str, depth: int) -> str | None:
        """None to follow ``url`` found ``depth`` hops from a start URL, else the reason to filter it."""
        p = self.params
        reason = self.static_reason(url, depth)
        if reason is not None:
            return reason
        host = urlsplit(url).netloc.lower()
        if url in self.seen:
            return None  # already counted; the dupefilter drops the repeat
        if p.max_pages_per_host and self.per_host[host] >= p.max_pages_per_host:
            return "host_budget"
        if p.max_urls_per_pattern and is_date_like(url) and self.per_pattern[url_pattern(url)] >= p.max_urls_per_pattern:
            return "pattern_budget"
        return None

    def admit(self, url: str) -> None:
        """Count ``url`` against its host's and (when date-like) its pattern's budget, once per URL."""
        if url in self.seen:
            return
        self.seen.add(url)
        self.per_host[urlsplit(url).netloc.lower()] += 1
        if is_date_like(url):
            self.per_pattern[url_pattern(url)] += 1
