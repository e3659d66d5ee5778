"""Exact and near-duplicate pages during the crawl: a thin adapter around ``DuplicateIndex``.

Runs after cross-page cleaning (it compares cleaned text). During a crawl "first kept wins" is the only
possible rule, so by default (``mode = "mark"``) a duplicate keeps flowing with ``duplicate_of`` set and
the finishing pass (``boilerstrip dedup``) decides with the order-independent keep rule (the shortest URL,
then the smallest): exact copies are dropped, near duplicates kept and marked unless ``drop_near``.
``mode = "drop"`` drops at once with ``FilteredItem`` (reason ``exact_duplicate``, or ``near_duplicate``
with ``drop_near``; detail = the URL kept): output then depends on crawl order.

When the crawl does not clean pages as it goes (a finishing pass follows, see
``pipelines.boilerplate.clean_during_crawl``), ``mark`` has nothing to do here: pages pass through, and
the finishing pass marks duplicates over the final text.
"""

from __future__ import annotations

import logging
from typing import Any

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured

from boilerstrip.boilerplate import DuplicateIndex, DuplicateParams
from boilerstrip.boilerplate.duplicates import EXACT_DUPLICATE
from boilerstrip.config import component_enabled, params_from_settings
from boilerstrip.outcomes import FilteredItem
from boilerstrip.pipelines.boilerplate import clean_during_crawl

__all__ = ["DuplicatePagesPipeline"]

logger = logging.getLogger(__name__)
STATS = "boilerstrip/duplicates"


class DuplicatePagesPipeline:
    def __init__(self, params: DuplicateParams, stats: Any = None, active: bool = True) -> None:
        self.params = params
        self.stats = stats
        self.active = active  # False: the finishing pass marks duplicates (pages pass through)
        self.index: DuplicateIndex | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> "DuplicatePagesPipeline":
        if not component_enabled(crawler.settings, "duplicates"):
            raise NotConfigured("BOILERSTRIP_DUPLICATES_ENABLED is false")
        params = params_from_settings(crawler.settings, "duplicates", DuplicateParams)
        active = not (params.mode == "mark" and component_enabled(crawler.settings, "boilerplate")
                      and not clean_during_crawl(crawler.settings))
        return cls(params, stats=crawler.stats, active=active)

    def open_spider(self) -> None:
        if self.active:
            self.index = DuplicateIndex(self.params)

    def close_spider(self) -> None:
        self.index = None

    def process_item(self, item: Any) -> Any:
        if not self.active:
            return item
        if self.index is None:
            self.open_spider()
        assert self.index is not None
        adapter = ItemAdapter(item)
        url = adapter.get("url") or ""
        dup = self.index.check_and_add(url, adapter.get("text") or "")
        if dup is None:
            return item
        self._inc(f"{dup.reason}")
        logger.debug("duplicates: %s is a %s of %s (%.3f)", url, dup.reason, dup.of, dup.similarity)
        if self.params.mode == "drop" and (dup.reason == EXACT_DUPLICATE or self.params.drop_near):
            self._inc(f"dropped/{dup.reason}")
            raise FilteredItem(dup.reason, detail=dup.of)
        adapter["duplicate_of"] = dup.of
        adapter["duplicate_similarity"] = dup.similarity
        flags = list(adapter.get("flags") or [])
        adapter["flags"] = flags + ([dup.reason] if dup.reason not in flags else [])
        return item

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"{STATS}/{key}", count)
