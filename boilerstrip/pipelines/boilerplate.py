"""Cross-page template removal during the crawl: a thin adapter around ``boilerstrip.boilerplate``.

Runs after extraction (which fills ``item.blocks``). Every page is counted at once in the run's state
(``boilerstrip.state``: the per-site template counts outlive the run and are what workers share) and in
the pipeline's own model. When a finishing pass will rewrite the output (``FinishingExtension``: a local
JSONL feed), that is all it does: the pass cleans every page once, with the final model of the whole
crawl, so the written output does not depend on crawl order. Otherwise (no JSONL feed, finishing off, or
duplicates dropped during the crawl) it also cleans each page with what the model knows so far -- a
*provisional* clean, the first pages of a site cleaned with a cold model.
``clean_during_crawl`` of ``BOILERSTRIP_BOILERPLATE_PARAMS`` (auto, always, never) overrides that choice. Nothing here
waits on, or reads, the engine's state.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
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
from boilerstrip.boilerplate.page import PageFeatures, page_features
from boilerstrip.config import component_enabled, params_from_settings
from boilerstrip.workers.pool import WorkerDied, WorkerPool, run_page_job
from boilerstrip.finishing import finishing_follows, finishing_inputs
from boilerstrip.finishing.steps import load_state_counts
from boilerstrip.reading.page import PageReading, hashed_fields, reading_for
from boilerstrip.state import MemoryState, State, StateParams, feed_output, open_state

__all__ = ["PageBlocksPipeline", "CrossPageBoilerplatePipeline", "CrossPageRunParams"]

logger = logging.getLogger(__name__)
STATS = "boilerstrip/boilerplate"
#: commit the state after this many pages: a crash loses at most that much of the counts
_COMMIT_EVERY_PAGES = 100
_CLEAN_CHOICES = ("auto", "always", "never")


@dataclass(frozen=True)
class CrossPageRunParams:
    #: clean each page during the crawl with the model so far: "auto" = only when no finishing pass will
    #: (the pass cleans every page again, so during the crawl it would be work thrown away: 30 % of the CPU
    #: of a sqlite3-doc crawl), "always", "never" (count only)
    clean_during_crawl: str = "auto"

    def __post_init__(self) -> None:
        if self.clean_during_crawl not in _CLEAN_CHOICES:
            raise ValueError(f"clean_during_crawl must be one of {_CLEAN_CHOICES}, got {self.clean_during_crawl!r}")


def clean_during_crawl(settings: Any) -> bool:
    """Does the crawl clean pages provisionally (see the module doc)? Also what ``DuplicatePagesPipeline``
    asks: it compares cleaned text, so it has nothing to do during a crawl that does not clean."""
    choice = params_from_settings(settings, "boilerplate", CrossPageRunParams).clean_during_crawl
    if choice != "auto":
        return choice == "always"
    dropping = (component_enabled(settings, "duplicates")
                and str(settings.get("BOILERSTRIP_DUPLICATES_MODE") or "mark") == "drop")
    return dropping or not finishing_follows(settings)


class PageBlocksPipeline:
    """Before extraction clears ``item.html``: record the hashes of all the page's blocks (chrome
    included) in ``item.page_block_hashes``, so the model counts a footer the extractor usually drops; and
    the blocks the record carries for the finishing pass (``page_features``). They come with the page's
    reading on the item (``item.reading``, read in the crawl's worker pool by ``PageReadingPipeline``);
    an item without one is read in the pool here."""

    def __init__(self, params: BoilerplateParams, stats: Any = None, crawler: Any = None, pool: Any = None) -> None:
        self.params = params
        self.stats = stats
        self.crawler = crawler
        self._pool = pool  # where pages without a reading are read (else the crawl's pool, at open_spider)

    @classmethod
    def from_crawler(cls, crawler: Any) -> "PageBlocksPipeline":
        if not component_enabled(crawler.settings, "boilerplate"):
            raise NotConfigured("BOILERSTRIP_BOILERPLATE_ENABLED is false")
        return cls(params_from_settings(crawler.settings, "boilerplate", BoilerplateParams), stats=crawler.stats,
                   crawler=crawler)

    def open_spider(self) -> None:
        if self._pool is None and self.crawler is not None:
            self._pool = WorkerPool.of(self.crawler)

    async def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        html = adapter.get("html")
        if not isinstance(html, str) or not html:
            return self.features_item(item)
        wanted = (self.params.source, self.params.normalise_digits)
        reading = reading_for(adapter.get("reading"), html, adapter.get("final_url") or adapter.get("url"))
        features = reading.features if reading is not None and reading.plan.features == wanted else None
        if features is None and self._pool is not None:
            features = await run_page_job(self._pool, _features, html, *wanted)
        return self.features_item(item, features)

    def features_item(self, item: Any, features: PageFeatures | None = None) -> Any:
        """``process_item`` on the calling thread (tests, batch use), or with ``features`` read elsewhere."""
        adapter = ItemAdapter(item)
        html = adapter.get("html")
        if isinstance(html, str) and html:
            if features is None:
                features = _features(html, self.params.source, self.params.normalise_digits)
            adapter["page_block_hashes"] = features.hashes
            if features.blocks is not None:
                adapter["page_blocks"] = features.blocks
        elif self.stats is not None:
            self.stats.inc_value(f"{STATS}/page_blocks/no_html")
        return item


#: the record fields ``model_hashes`` reads
_HASHED_FIELDS = ("blocks", "page_blocks", "page_block_hashes")


def record_model_hashes(fields: dict[str, Any], params: BoilerplateParams) -> set[str]:
    """``model_hashes`` of a record given as its hashed fields (what a worker pool job carries)."""
    return model_hashes(fields, blocks_of_record(fields), params)


def _features(html: str, source: str, digits: bool) -> PageFeatures:
    """``page_features`` with positional arguments (what a worker pool sends)."""
    return page_features(html, source=source, digits=digits)


class CrossPageBoilerplatePipeline:
    def __init__(self, params: BoilerplateParams, state: State | None = None, stats: Any = None,
                 state_params: StateParams | None = None, output: Any = None, clean: bool = True,
                 pool: Any = None) -> None:
        self.params = params
        self.stats = stats
        self.clean = clean
        self.crawler: Any = None
        #: where a page without a reading is hashed when the pipeline only learns (else the crawl's pool)
        self._pool = pool if not clean else None
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
        pipeline = cls(params, stats=crawler.stats, state_params=state_params, output=feed_output(crawler.settings),
                       clean=clean_during_crawl(crawler.settings))
        pipeline.crawler = crawler
        crawler.signals.connect(pipeline.finishing_input, signal=finishing_inputs)
        return pipeline

    def finishing_input(self) -> dict[str, Any]:
        """What the finishing pass takes from this pipeline (:data:`boilerstrip.finishing.finishing_inputs`)."""
        return {"learned": self.learns_into_shared_state()}

    # -- lifecycle -----------------------------------------------------------------------------------
    def open_spider(self) -> None:
        self.state = self._state_arg if self._state_arg is not None else open_state(self.state_params, self.output)
        if self._pool is None and self.crawler is not None and not self.clean:
            self._pool = WorkerPool.of(self.crawler)

    def close_spider(self) -> None:
        self._inc("model/distinct_blocks", self.model.distinct_blocks())
        if self.state is not None:
            try:
                if self._state_arg is None:
                    self.state.close()
                else:
                    self.state.commit()
            except (sqlite3.Error, OSError) as exc:
                # a full disk: one line, not a traceback that also kept the other pipelines from closing; the
                # finishing pass counts what the state lacks from the records
                logger.error("cross-page: cannot save this crawl's template counts in the state (%s); the "
                             "finishing pass counts them from the records", exc)
                self._inc("state_save_failed")
            self.state = None

    def learns_into_shared_state(self) -> bool:
        """Does every page this pipeline sees go into a state that outlives the run (a state folder or a
        server), where the finishing pass finds it? Not with ``BOILERSTRIP_STATE_DIR = ""`` or a state given
        to the constructor."""
        return self._state_arg is None and bool(self.state_params.dir)

    # -- items -----------------------------------------------------------------------------------------
    def process_item(self, item: Any) -> Any:
        if self._pool is not None:
            # only learning (a finishing pass cleans): the page's hashes are worked out in the crawl's worker
            # pool -- a coroutine, which Scrapy awaits like a returned item
            return self._learned_in_pool(item)
        adapter = ItemAdapter(item)
        url, site, cluster = self._prepare(adapter)
        hashes = self._hashes_read(adapter)
        self._learn(site, cluster, url, hashes if hashes is not None else self._hashes_of(adapter))
        if not self.clean:
            return item  # the finishing pass cleans it, once, with the final model
        blocks = blocks_of_record(adapter)
        title = adapter.get("title")
        choice = choose_source(blocks, region_blocks_of_record(adapter, self.params), extraction_failed(adapter), site, cluster,
                               self.model, self.params, title=title if isinstance(title, str) else None,
                               slots=slots_of_record(adapter, self.params))
        result = choice.result
        adapter.update(source_fields(adapter, choice))
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

    async def _learned_in_pool(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        url, site, cluster = self._prepare(adapter)
        hashes = self._hashes_read(adapter)
        if hashes is None:
            fields = {key: adapter.get(key) for key in _HASHED_FIELDS}
            try:
                hashes = await self._pool.run(record_model_hashes, fields, self.params)
            except WorkerDied:
                hashes = self._hashes_of(adapter)
        self._learn(site, cluster, url, hashes)
        return item

    def _hashes_read(self, adapter: ItemAdapter) -> set[str] | None:
        """The hashes in the page's reading (``item.reading``), when they were worked out with these parameters
        from the fields the item holds now; else None. The reading is of the HTML, which extraction has
        cleared by now: it is checked by what it gave the item."""
        reading = adapter.get("reading")
        if not isinstance(reading, PageReading) or reading.hashes is None or reading.extraction is None:
            return None
        if reading.plan.hashes != self.params:
            return None
        fields = {key: adapter.get(key) for key in _HASHED_FIELDS}
        if hashed_fields(reading.features, reading.extraction, self.params.source) != fields:
            return None  # the page changed on the way (another pipeline): hashed again
        return reading.hashes

    def _prepare(self, adapter: ItemAdapter) -> tuple[str, str, str]:
        """The page's URL, site and cluster; with ``source="page"`` its page blocks become its blocks."""
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
        self._inc("pages")
        adapter["template_cluster"] = cluster
        return url, site, cluster

    def _hashes_of(self, item: Any, blocks: Any = None) -> set[str]:
        """What a page teaches the model (see ``boilerplate.finish.model_hashes``)."""
        adapter = item if isinstance(item, ItemAdapter) else ItemAdapter(item)
        return model_hashes(adapter, blocks_of_record(adapter) if blocks is None else blocks, self.params)

    def _learn(self, site: str, cluster: str, url: str, hashes: set[str]) -> None:
        if self.state is None:  # used without open_spider (a test, a batch job)
            self.state = self._state_arg if self._state_arg is not None else MemoryState()
        templates = self.state.templates
        if not self.clean:  # nothing reads the model during the crawl: the counts go to the state alone
            self._put(templates, site, url, cluster, hashes)
            return
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
        self.model.add_page(site, cluster, hashes)
        self._put(templates, site, url, cluster, hashes)

    def _put(self, templates: Any, site: str, url: str, cluster: str, hashes: set[str]) -> None:
        templates.put_page(site, url, cluster, tuple(sorted(h for h in hashes if h)))
        self._unsaved += 1
        if self._unsaved >= _COMMIT_EVERY_PAGES:
            self.state.commit()
            self._unsaved = 0

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None and count:
            self.stats.inc_value(f"{STATS}/{key}", count)
