"""Recurring crawls, spider side: stored records in place of reused pages, and what each page showed.

- A page answered from the state (``meta["boilerstrip_reused"]``, see
  :mod:`boilerstrip.downloadermiddlewares.conditional`) yields the spider's item for a stand-in page: its
  fields are replaced by the stored record (same text, blocks and block hashes, so the template counts are
  not disturbed), with this run's depth and time and the flag ``reused:<how>``.
- For every other page item, the page's validators (ETag, Last-Modified) and outgoing links (the raw
  hrefs, the base URL, the canonical href) are kept per URL in a spill file for the finishing pass's
  change step, which stores them with the final record (``boilerstrip.finishing.change.ChangeStep``).

The finishing extension asks for these facts through :meth:`facts_for`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterable
from typing import Any

from scrapy.exceptions import NotConfigured
from scrapy.http import Response, TextResponse

from boilerstrip.meta import COPY_META, REUSED_META
from boilerstrip.config import component_enabled

from boilerstrip.finishing.base import Spill, finishing_inputs
from boilerstrip.items import PageItem
from boilerstrip.recrawl import REUSED_FLAG
from boilerstrip.reading.links import page_links as read_page_links

__all__ = ["RecrawlMiddleware", "page_links"]

_ITEM_FIELDS = frozenset(f.name for f in dataclasses.fields(PageItem))
#: fields of a reused record that come from this run, not from the stored copy
_THIS_RUN = ("url", "depth", "fetched_at")


def page_links(response: TextResponse) -> dict[str, Any]:
    """The links of a page as the spider reads them: raw hrefs, base URL, canonical href."""
    links = read_page_links(response)
    if links.hrefs is None:  # a hostile page: no links kept, the next crawl fetches it whole
        return {"base": links.base, "hrefs": [], "canonical": None, "complete": False}
    return {"base": links.base, "hrefs": list(links.hrefs), "canonical": links.canonical}


class RecrawlMiddleware:
    def __init__(self, stats: Any = None) -> None:
        self.stats = stats
        self._facts: Spill | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> "RecrawlMiddleware":
        if not component_enabled(crawler.settings, "recrawl"):
            raise NotConfigured("BOILERSTRIP_RECRAWL_ENABLED is false")
        mw = cls(stats=crawler.stats)
        crawler.signals.connect(mw.finishing_input, signal=finishing_inputs)
        return mw

    # -- facts for the finishing pass ------------------------------------------------------------------
    def finishing_input(self) -> dict[str, Any]:
        """What the finishing pass takes from this middleware (:data:`boilerstrip.finishing.finishing_inputs`)."""
        return {"recrawl": self}

    def facts_for(self, url: str) -> dict[str, Any] | None:
        if self._facts is None or url not in self._facts:
            return None
        return self._facts.get(url)

    def close(self) -> None:
        if self._facts is not None:
            self._facts.close()
            self._facts = None

    def _keep(self, url: str, facts: dict[str, Any]) -> None:
        if self._facts is None:
            self._facts = Spill()
        self._facts.put(url, facts, replace=lambda old, new: True)

    # -- the hooks (sync and async spider output) ------------------------------------------------------
    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterable[Any]:
        for entry in result:
            yield self._entry(response, entry)

    async def process_spider_output_async(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for entry in result:
            yield self._entry(response, entry)

    def _entry(self, response: Response, entry: Any) -> Any:
        if not isinstance(entry, PageItem):
            return entry
        how = response.meta.get(REUSED_META)
        copy = response.meta.get(COPY_META)
        if how and copy is not None:
            return self._reused(response, entry, how, copy)
        if isinstance(response, TextResponse):
            self._keep(entry.url, {
                "status": response.status,
                "etag": _header(response, b"ETag"),
                "last_modified": _header(response, b"Last-Modified"),
                "links": page_links(response),
            })
        return entry

    def _reused(self, response: Response, entry: PageItem, how: str, copy: Any) -> PageItem:
        values = {k: v for k, v in copy.record.items() if k in _ITEM_FIELDS}
        values.update({k: getattr(entry, k) for k in _THIS_RUN})
        values["html"] = None  # nothing to extract: the stored record is the extraction
        flag = f"{REUSED_FLAG}:{how}"
        values["flags"] = [f for f in values.get("flags") or [] if not f.startswith(f"{REUSED_FLAG}:")] + [flag]
        self._keep(entry.url, {
            "status": 304 if how == "not_modified" else None,
            "reused": how,
            "etag": _header(response, b"ETag"),
            "last_modified": _header(response, b"Last-Modified"),
            "links": copy.links,
        })
        if self.stats is not None:
            self.stats.inc_value(f"boilerstrip/recrawl/reused/{how}")
        return PageItem(**values)


def _header(response: Response, name: bytes) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None
