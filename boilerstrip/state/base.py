"""The state interfaces: template counts, per-URL history and page copies, and the backend that holds them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from boilerstrip.fastjson import lossless_json

try:  # Python 3.14's own; before it, the backport Scrapy itself requires (pinned in requirements.txt)
    from compression import zstd
except ImportError:
    from backports import zstd

__all__ = ["STATE_SCHEMA_VERSION", "TemplateCounts", "UrlHistory", "UrlState", "PageCopies", "PageCopy", "packed_json",
           "unpacked_json", "State", "SiteCounts"]

#: the layout of what a backend stores; a store written with another version is not read (it is rebuilt).
#: 2: block hash version 3 (``boilerplate.blocks.HASH_VERSION``: template counts of another hash version
#: count other normal forms)
STATE_SCHEMA_VERSION = 2

#: (pages, {block hash: pages holding it}) of one scope (a site, or one cluster of a site)
SiteCounts = tuple[int, dict[str, int]]


@runtime_checkable
class TemplateCounts(Protocol):
    """Per-site template counts, shared by everything that cleans pages of the site.

    ``put_page`` records the latest block hashes of a URL and updates the counts: a URL put again replaces
    its earlier version (its old hashes are subtracted first), so re-crawling never double-counts and the
    counts depend only on the set of (URL, latest hashes), whatever the order. ``site_counts`` and
    ``cluster_counts`` leave out the blocks on fewer than ``min_pages`` pages (a site's own text is most of
    its distinct blocks, each on one page: the finishing pass loads only what can decide something).
    """

    def put_page(self, site: str, url: str, cluster: str, hashes: Iterable[str]) -> None: ...
    def get_page(self, site: str, url: str) -> tuple[str, tuple[str, ...]] | None: ...
    def remove_page(self, site: str, url: str) -> bool: ...
    def site_counts(self, site: str, min_pages: int = 1) -> SiteCounts: ...
    def cluster_counts(self, site: str, min_pages: int = 1) -> dict[str, SiteCounts]: ...
    def urls(self, site: str) -> Iterator[str]: ...


@dataclass(frozen=True)
class UrlState:
    """What is remembered of one URL between crawls (all times UTC ISO 8601, ``2026-12-01T05:00:00Z``)."""

    url: str
    site: str
    etag: str | None = None
    last_modified: str | None = None  # the Last-Modified header as served
    text_hash: str | None = None  # sha256 of the main text after cross-page removal
    first_seen: str | None = None
    last_seen: str | None = None
    last_changed: str | None = None
    last_status: int | None = None  # HTTP status of the last fetch (304 included)
    last_outcome: str | None = None  # item | filtered:<reason> | failed:<reason> | removed:<reason>
    settings_digest: str | None = None  # the extraction/template settings the text_hash was made with


@runtime_checkable
class UrlHistory(Protocol):
    def get(self, url: str) -> UrlState | None: ...
    def put(self, state: UrlState) -> None: ...
    def delete(self, url: str) -> bool: ...
    def iter_site(self, site: str) -> Iterator[UrlState]: ...
    def sites(self) -> list[str]: ...


@dataclass(frozen=True)
class PageCopy:
    """What a recurring crawl needs to re-emit a page the server says is unchanged (a 304) without
    downloading it: the page's last written record, and its outgoing links as the spider read them
    (``{"base": the base URL, "hrefs": raw href values, "canonical": raw canonical href or None}``)."""

    url: str
    record: dict[str, Any]
    links: dict[str, Any]


#: the first bytes of a Zstandard frame: a stored copy that starts otherwise is JSON (an earlier boilerstrip's)
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def packed_json(value: Any) -> bytes:
    """``value`` as a backend stores a page copy: its JSON (``lossless_json``: a lone surrogate survives)
    compressed by Zstandard at its default level. A copy is a page's record with its trail (~50 KB of JSON
    a page on the large-page site of the throughput benchmark): that site's 1,147 copies take 6.0 MB
    instead of 57.8, compressed in 0.09 s (zlib's fastest level: 8.5 MB in 0.24 s; 2026-12-07)."""
    return zstd.compress(lossless_json(value).encode("utf-8"))


def unpacked_json(raw: bytes | str) -> Any:
    """What :func:`packed_json` stored, or the JSON text an earlier boilerstrip stored (str or bytes)."""
    if isinstance(raw, (bytes, bytearray, memoryview)) and bytes(raw[:4]) == _ZSTD_MAGIC:
        raw = zstd.decompress(raw)
    return json.loads(raw)


@runtime_checkable
class PageCopies(Protocol):
    def get(self, url: str) -> PageCopy | None: ...
    def put(self, copy: PageCopy) -> None: ...
    def delete(self, url: str) -> bool: ...


@runtime_checkable
class State(Protocol):
    """A backend: both stores, committed together. ``commit`` makes what was put durable; ``close``
    commits and releases. Both are safe to call more than once."""

    templates: TemplateCounts
    history: UrlHistory
    pages: PageCopies

    def commit(self) -> None: ...
    def close(self) -> None: ...
