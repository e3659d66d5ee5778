"""Cross-page template removal during the crawl: a thin adapter around ``boilerstrip.boilerplate``.

Runs after extraction (which fills ``item.blocks``). Every page is counted at once in the run's state
(``boilerstrip.state``: the per-site template counts outlive the run and are what workers share) and in
the pipeline's own model, and is cleaned with what the model knows so far. That clean is *provisional*:
the first pages of a site are cleaned with a cold model. The finishing pass, which the
``FinishingExtension`` runs when the spider closes, cleans every page again with the final model of the
whole crawl, so the written output does not depend on crawl order. Nothing here waits on, or reads, the
engine's state.
"""

from __future__ import annotations

import logging
from typing import Any

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured

from boilerstrip.boilerplate import (
    BoilerplateParams,
    TemplateModel,
    blocks_of_record,
    choose_source,
    cluster_of_url,
    extraction_failed,
    merge_flags,
    region_blocks_of_record,
    site_of_url,
)
from boilerstrip.boilerplate.finish import model_hashes, source_fields
from boilerstrip.boilerplate.source import slots_of_record
from boilerstrip.boilerplate.page import page_block_hashes, page_blocks, region_blocks
from boilerstrip.config import component_enabled, params_from_settings
from boilerstrip.finishing.steps import load_state_counts
from boilerstrip.state import MemoryState, State, StateParams, feed_output, open_state

__all__ = ["PageBlocksPipeline", "CrossPageBoilerplatePipeline"]

logger = logging.getLogger(__name__)
STATS = "boilerstrip/boilerplate"
#: commit the state after this many pages: a crash loses at most that much of the counts
_COMMIT_EVERY_PAGES = 100


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
            blocks = page_blocks(html, slots=True)
            adapter["page_block_hashes"] = page_block_hashes(html, digits=self.params.normalise_digits, blocks=blocks)
            if self.params.source == "page":
                adapter["page_blocks"] = [{"kind": kind, "text": text, "slot": slot} for kind, text, slot in blocks]
            elif self.params.source == "auto":
                # the page's candidate region, kept on the record: the finishing pass chooses again
                adapter["page_blocks"] = region_blocks(html)
        elif self.stats is not None:
            self.stats.inc_value(f"{STATS}/page_blocks/no_html")
        return item


class CrossPageBoilerplatePipeline:
    def __init__(self, params: BoilerplateParams, state: State | None = None, stats: Any = None,
                 state_params: StateParams | None = None, output: Any = None) -> None:
        self.params = params
        self.stats = stats
        self._state_arg = state
        self.state_params = state_params or StateParams(dir="")
        self.output = output
        self.state: State | None = None
        self.model = TemplateModel()
        self._site_pages: dict[str, int] = {}  # pages of each site this pipeline counted
        self._unsaved = 0

    @classmethod
    def from_crawler(cls, crawler: Any) -> "CrossPageBoilerplatePipeline":
        if not component_enabled(crawler.settings, "boilerplate"):
            raise NotConfigured("BOILERSTRIP_BOILERPLATE_ENABLED is false")
        params = params_from_settings(crawler.settings, "boilerplate", BoilerplateParams)
        state_params = params_from_settings(crawler.settings, "state", StateParams)
        return cls(params, stats=crawler.stats, state_params=state_params, output=feed_output(crawler.settings))

    # -- lifecycle -----------------------------------------------------------------------------------
    def open_spider(self) -> None:
        self.state = self._state_arg if self._state_arg is not None else open_state(self.state_params, self.output)

    def close_spider(self) -> None:
        self._inc("model/distinct_blocks", self.model.distinct_blocks())
        if self.state is not None:
            if self._state_arg is None:
                self.state.close()
            else:
                self.state.commit()
            self.state = None

    # -- items -----------------------------------------------------------------------------------------
    def process_item(self, item: Any) -> Any:
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
        self._learn(site, cluster, url, self._hashes_of(adapter, blocks))
        self._inc("pages")
        title = adapter.get("title")
        choice = choose_source(blocks, region_blocks_of_record(adapter), extraction_failed(adapter), site, cluster,
                               self.model, self.params, title=title if isinstance(title, str) else None,
                               slots=slots_of_record(adapter, self.params))
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

    def _hashes_of(self, item: Any, blocks: Any = None) -> set[str]:
        """What a page teaches the model (see ``boilerplate.finish.model_hashes``)."""
        adapter = item if isinstance(item, ItemAdapter) else ItemAdapter(item)
        return model_hashes(adapter, blocks_of_record(adapter) if blocks is None else blocks, self.params)

    def _learn(self, site: str, cluster: str, url: str, hashes: set[str]) -> None:
        if self.state is None:  # used without open_spider (a test, a batch job)
            self.state = self._state_arg if self._state_arg is not None else MemoryState()
        templates = self.state.templates
        seen = self._site_pages.get(site, 0)
        if seen % self.params.state_refresh_pages == 0:
            # the first page of a site (a later crawl starts warm), then every state_refresh_pages pages:
            # the state may be shared, and other workers' pages count too
            self.model.forget_site(site)
            loaded = load_state_counts(self.model, self.state, site, ())
            self._inc("stored_pages_loaded" if seen == 0 else "state_reloads", loaded if seen == 0 else 1)
        self._site_pages[site] = seen + 1
        previous = templates.get_page(site, url)
        if previous is not None:  # this URL was seen before: its new version replaces the old one
            self.model.remove_page(site, previous[0], previous[1])
        kept = tuple(sorted(h for h in hashes if h))
        self.model.add_page(site, cluster, kept)
        templates.put_page(site, url, cluster, kept)
        self._unsaved += 1
        if self._unsaved >= _COMMIT_EVERY_PAGES:
            self.state.commit()
            self._unsaved = 0

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None and count:
            self.stats.inc_value(f"{STATS}/{key}", count)
