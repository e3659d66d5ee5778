"""Cross-page template removal during the crawl: a thin adapter around ``boilerstrip.boilerplate``.

Runs after extraction (which fills ``item.blocks``). Every page teaches the site's model at once; a page
that arrives before the model of its site is reliable (``warmup_pages``) is held back (awaited) and
released *cleaned* once the site is warm, or when the crawl has nothing else in flight (a small site
never reaches the warm-up count: without that rule it would deadlock, since Scrapy never goes idle while
items are pending), or after ``max_hold_s``. The model keeps learning after the warm-up. The crawl's
cleaning is provisional by nature (it depends on what was seen so far); the finishing pass
(``boilerstrip dedup``, run by ``boilerstrip crawl`` at the end) re-cleans everything with the final model.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import sleep

from boilerstrip.boilerplate import (
    BoilerplateParams,
    MemoryTemplateStore,
    TemplateModel,
    TemplateStore,
    blocks_of_record,
    choose_source,
    extraction_failed,
    region_blocks_of_record,
    cluster_of_url,
    load_site,
    merge_flags,
    open_store,
    resolve_state_dir,
    site_of_url,
)
from boilerstrip.boilerplate.finish import model_hashes, source_fields
from boilerstrip.boilerplate.page import page_block_hashes, page_blocks, region_blocks
from boilerstrip.config import component_enabled, params_from_settings

__all__ = ["PageBlocksPipeline", "CrossPageBoilerplatePipeline", "engine_stalled"]

logger = logging.getLogger(__name__)
STATS = "boilerstrip/boilerplate"
#: commit the state store after this many pages: a crash loses at most that much of the model
_COMMIT_EVERY_PAGES = 100
#: consecutive polls that must find the crawl stalled before held items go
_STALLED_POLLS = 2


def engine_stalled(crawler: Any, held: int) -> bool:
    """True when no more pages can arrive unless held items go: nothing downloading, nothing waiting to
    be scraped, every item in the pipelines is one we hold, and the scheduler is empty or the engine is
    backing out (held responses count against the scraper's memory budget)."""
    try:
        engine = crawler.engine
    except (AttributeError, RuntimeError):  # Scrapy 2.19 raises until the crawl has started
        engine = None
    if engine is None or not getattr(engine, "running", False):
        return True
    slot = getattr(engine.scraper, "slot", None)
    if slot is None:
        return True
    if engine.downloader.active or slot.queue or slot.itemproc_size > held or len(slot.active) > held:
        return False
    if getattr(engine, "_start", None) is not None:  # start requests not all handled yet
        return False
    engine_slot = getattr(engine, "_slot", None)
    # requests from download start until their items are processed: each must be blocked on a held item
    inprogress = getattr(engine_slot, "inprogress", None)
    if inprogress is not None and len(inprogress) > held:
        return False
    scheduler = getattr(engine_slot, "scheduler", None)
    if scheduler is not None and scheduler.has_pending_requests():
        return bool(engine.needs_backout())
    return True


class PageBlocksPipeline:
    """Before extraction clears ``item.html``: record the hashes of all the page's blocks (chrome
    included) in ``item.page_block_hashes``, so the model counts a footer the extractor usually drops."""

    def __init__(self, params: BoilerplateParams, stats: Any = None) -> None:
        self.params = params
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> "PageBlocksPipeline":
        if not component_enabled(crawler.settings, "boilerplate"):
            raise NotConfigured("BOILERSTRIP_BOILERPLATE_ENABLED is false")
        return cls(params_from_settings(crawler.settings, "boilerplate", BoilerplateParams), stats=crawler.stats)

    def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        html = adapter.get("html")
        if isinstance(html, str) and html:
            blocks = page_blocks(html)
            adapter["page_block_hashes"] = page_block_hashes(html, digits=self.params.normalise_digits, blocks=blocks)
            if self.params.source == "page":
                adapter["page_blocks"] = [{"kind": kind, "text": text} for kind, text in blocks]
            elif self.params.source == "auto":
                # the page's candidate region, kept on the record: the finishing pass chooses again
                adapter["page_blocks"] = region_blocks(html)
        elif self.stats is not None:
            self.stats.inc_value(f"{STATS}/page_blocks/no_html")
        return item


class CrossPageBoilerplatePipeline:
    def __init__(
        self,
        params: BoilerplateParams,
        store: TemplateStore | None = None,
        stats: Any = None,
        stalled: Any = None,
        state_dir: Path | None = None,
    ) -> None:
        self.params = params
        #: where the SQLite store lives (None: in memory), resolved from ``params.state_dir``
        self.state_dir = state_dir
        self.stats = stats
        self._store_arg = store
        self.store: TemplateStore | None = None
        self.model = TemplateModel()
        self._loaded_sites: set[str] = set()
        self._unsaved = 0
        #: items currently held, all sites; read by the stall probe
        self.held = 0
        #: () -> bool, "the crawl cannot progress unless held items go"; None: never (tests, batch use)
        self._stalled = stalled

    @classmethod
    def from_crawler(cls, crawler: Any) -> "CrossPageBoilerplatePipeline":
        if not component_enabled(crawler.settings, "boilerplate"):
            raise NotConfigured("BOILERSTRIP_BOILERPLATE_ENABLED is false")
        params = params_from_settings(crawler.settings, "boilerplate", BoilerplateParams)
        feeds = crawler.settings.getdict("FEEDS") or {}
        state_dir = resolve_state_dir(params.state_dir, next(iter(feeds), None))
        pipeline = cls(params, stats=crawler.stats, state_dir=state_dir)
        pipeline._stalled = lambda: engine_stalled(crawler, pipeline.held)
        return pipeline

    # -- lifecycle -----------------------------------------------------------------------------------
    def open_spider(self) -> None:
        self.store = self._store_arg if self._store_arg is not None else open_store(self.state_dir)

    def close_spider(self) -> None:
        self._inc("model/distinct_blocks", self.model.distinct_blocks())
        if self.store is not None:
            self.store.close()
            self.store = None

    # -- items -----------------------------------------------------------------------------------------
    async def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        url = adapter.get("url") or ""
        site, cluster = site_of_url(url), cluster_of_url(url)
        page = adapter.get("page_blocks")
        if self.params.source == "page" and page:
            # the cross-page model decides alone: every block of the page, minus template
            adapter["blocks"] = page
            adapter["method"] = "crosspage"
            self._inc("source/page")
        if page is not None and self.params.source == "page":
            adapter["page_blocks"] = None
        blocks = blocks_of_record(adapter)
        self._learn(site, cluster, url, model_hashes(adapter, blocks, self.params))
        self._inc("pages")
        if self.model.pages(site) < self.params.warmup_pages:
            reason = await self._hold(site)
            self._inc(f"released/{reason}")
            logger.debug("boilerplate: released %s (%s, site has %d pages)", url, reason, self.model.pages(site))
        title = adapter.get("title")
        choice = choose_source(blocks, region_blocks_of_record(adapter), extraction_failed(adapter), site, cluster,
                               self.model, self.params, title=title if isinstance(title, str) else None)
        result = choice.result
        adapter.update(source_fields(adapter, choice))
        adapter["template_cluster"] = cluster
        adapter["flags"] = merge_flags(adapter.get("flags"), [*result.flags, *([choice.flag] if choice.flag else [])])
        if self.params.source == "auto":
            self._inc(f"source/{choice.source}/{choice.reason}")
            if choice.headline:
                self._inc("source/headline")
            logger.debug("boilerplate: %s from %s (%s)", url, choice.source, choice.reason)
        self._inc("removed_blocks", result.removed_blocks)
        self._inc("removed_chars", result.removed_chars)
        for flag in result.flags:
            self._inc(f"flagged/{flag}")
        return item

    def _learn(self, site: str, cluster: str, url: str, hashes: set[str]) -> None:
        store = self.store if self.store is not None else MemoryTemplateStore()
        self.store = store
        if site not in self._loaded_sites:  # a later crawl of the same site starts warm
            self._loaded_sites.add(site)
            self._inc("stored_pages_loaded", load_site(self.model, store, site))
        previous = store.get_page(site, url)
        if previous is not None:  # this URL was seen before: its new version replaces the old one
            self.model.remove_page(site, previous[0], previous[1])
        kept = tuple(h for h in hashes if h)
        self.model.add_page(site, cluster, kept)
        store.put_page(site, url, cluster, kept)
        self._unsaved += 1
        if self._unsaved >= _COMMIT_EVERY_PAGES:
            store.commit()
            self._unsaved = 0

    async def _hold(self, site: str) -> str:
        self.held += 1
        self._inc("held")
        started = time.monotonic()
        stalled_polls = 0
        try:
            while True:
                if self.model.pages(site) >= self.params.warmup_pages:
                    return "warm"
                # idle twice in a row, one poll apart: a callback that yields its page before its links
                # has had time to schedule them
                stalled_polls = stalled_polls + 1 if self._stalled is None or self._stalled() else 0
                if stalled_polls >= _STALLED_POLLS:
                    return "idle"
                if time.monotonic() - started >= self.params.max_hold_s:
                    return "timeout"
                await sleep(self.params.hold_poll_s)
        finally:
            self.held -= 1

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None and count:
            self.stats.inc_value(f"{STATS}/{key}", count)
