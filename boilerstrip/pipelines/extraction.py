"""ExtractionPipeline: the main-content ladder on every crawled page; a thin adapter around
``boilerstrip.extraction.extract``.

One pipeline runs the whole ladder (semantic, then density, then body-text XPath) rather than one pipeline
per rung: the rungs share one parse of the page, and the ladder must record why each earlier rung was
refused. Which rungs run is a setting (``BOILERSTRIP_EXTRACTION_METHOD``; ``semantic_enabled``... of the
hook); every threshold is a field of ``ExtractionParams``, reached through ``BOILERSTRIP_EXTRACTION_PARAMS``
(and ``BOILERSTRIP_EXTRACTION_PRESET``).

It reads the item's transient ``html``, fills ``text``, ``markdown`` (when ``BOILERSTRIP_EXTRACTION_MARKDOWN``),
the page metadata, ``method``, ``attempts``, ``blocks`` and ``flags``, and clears ``html``. Stats:
``boilerstrip/extraction/method/<method|none>``, ``boilerstrip/extraction/refused/<rung>/<reason>`` and
``boilerstrip/extraction/empty/<reason>``.

Extraction runs off the reactor thread, in the crawl's worker pool (``boilerstrip.workers``:
``BOILERSTRIP_EXTRACTION_WORKERS`` worker processes by default, so the machine's other cores read pages
while the reactor downloads, and one huge page does not stall every other host's downloads): the page's
reading on the item (``item.reading``, by ``PageReadingPipeline``) holds it, worked out with these
parameters from this very HTML; an item without one (a plain dict, a page changed on the way) is extracted
in the pool here. A page whose worker process died each time it was tried is
``failed:extraction_worker_died``.

Its cost per page is bounded: a page over ``max_nodes`` elements is dropped as ``failed:extraction_budget``
(every later stage is Python per block too), and after ``max_cpu_s`` no further rung starts (the best result
so far, else the plain-text rung, flagged ``extraction_budget:cpu``). ``extract_item`` is the same work,
synchronously.
"""

from __future__ import annotations

import logging
from typing import Any

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured

from boilerstrip.config import ConfigError, component_enabled, params_from_settings
from boilerstrip.workers.pool import WorkerPool, run_page_job
from boilerstrip.extraction import ExtractionParams, ExtractionResult, extract
from boilerstrip.outcomes import FailedItem
from boilerstrip.reading.page import extracted_blocks, reading_for

__all__ = ["ExtractionPipeline"]

logger = logging.getLogger(__name__)
STATS = "boilerstrip/extraction"
_METADATA_FIELDS = ("title", "description", "canonical_url", "lang", "author", "published", "modified")


class ExtractionPipeline:
    def __init__(
        self, params: ExtractionParams = ExtractionParams(), markdown: bool = True, stats: Any = None,
        crawler: Any = None, pool: WorkerPool | None = None,
    ) -> None:
        """``pool``: where pages without a reading are extracted (else the crawl's own, at ``open_spider``)."""
        self.params = params
        self.markdown = markdown
        self.stats = stats
        self.crawler = crawler
        self.pool = pool

    @classmethod
    def from_crawler(cls, crawler: Any) -> "ExtractionPipeline":
        settings = crawler.settings
        if not component_enabled(settings, "extraction"):
            raise NotConfigured("BOILERSTRIP_EXTRACTION_ENABLED is false")
        params = params_from_settings(settings, "extraction", ExtractionParams)
        try:
            markdown = settings.getbool("BOILERSTRIP_EXTRACTION_MARKDOWN", True)
        except ValueError:
            value = settings.get("BOILERSTRIP_EXTRACTION_MARKDOWN")
            raise ConfigError(f"BOILERSTRIP_EXTRACTION_MARKDOWN: expected a boolean, got {value!r}") from None
        return cls(params=params, markdown=markdown, stats=crawler.stats, crawler=crawler)

    def open_spider(self) -> None:
        if self.pool is None and self.crawler is not None:
            self.pool = WorkerPool.of(self.crawler)

    async def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        html = adapter.get("html")
        if html is None:
            return item  # nothing fetched to read (or already extracted)
        url = adapter.get("final_url") or adapter.get("url")
        reading = reading_for(adapter.get("reading"), html, url)  # the page's one reading (PageReadingPipeline)
        result = reading.extraction if reading is not None and reading.plan.extraction == self.params else None
        if result is None:
            result = await run_page_job(self.pool, extract, html, url, self.params)
        self._apply(adapter, url, result)
        return item

    def extract_item(self, item: Any) -> Any:
        """``process_item`` on the calling thread (tests, batch use)."""
        adapter = ItemAdapter(item)
        html = adapter.get("html")
        if html is None:
            return item
        url = adapter.get("final_url") or adapter.get("url")
        self._apply(adapter, url, extract(html, url=url, params=self.params))
        return item

    def _apply(self, adapter: ItemAdapter, url: Any, result: ExtractionResult) -> None:
        if result.reason == "over_budget":
            self._count(result)
            raise FailedItem("extraction_budget", f"more than {self.params.max_nodes} elements (max_nodes in BOILERSTRIP_EXTRACTION_PARAMS)")
        self.fill(adapter, result)
        self._count(result)
        logger.debug(
            "extracted %s: method=%s chars=%d attempts=%s",
            url,
            result.method,
            len(result.text),
            ",".join(f"{a.method}:{a.reason}" for a in result.attempts),
        )

    def fill(self, adapter: ItemAdapter, result: ExtractionResult) -> None:
        """Copy a result onto an item (any item type with the PageItem field names)."""
        fields = set(adapter.field_names()) if not isinstance(adapter.item, dict) else None

        def put(name: str, value: Any) -> None:
            if fields is None or name in fields:
                adapter[name] = value

        put("text", result.text)
        put("markdown", result.markdown if self.markdown else None)
        for name in _METADATA_FIELDS:
            value = getattr(result, name)
            if value is not None and not adapter.get(name):
                put(name, value)
        put("method", result.method)
        put("attempts", [a.__dict__.copy() for a in result.attempts])
        put("confidence", result.confidence)
        put("blocks", extracted_blocks(result))
        flags = list(adapter.get("flags") or [])
        flags.extend(flag for flag in result.flags if flag not in flags)
        if result.reason and f"extraction_empty:{result.reason}" not in flags:
            flags.append(f"extraction_empty:{result.reason}")
        put("flags", flags)
        put("html", None)

    def _count(self, result: ExtractionResult) -> None:
        if self.stats is None:
            return
        self.stats.inc_value(f"{STATS}/method/{result.method or 'none'}")
        for attempt in result.attempts:
            if not attempt.accepted:
                self.stats.inc_value(f"{STATS}/refused/{attempt.method}/{attempt.reason}")
        if result.reason:
            self.stats.inc_value(f"{STATS}/empty/{result.reason}")
        for flag in result.flags:
            if flag.startswith("extraction_budget:"):
                self.stats.inc_value(f"{STATS}/over_budget/{flag.split(':', 1)[1]}")

