"""PageReadingPipeline: reads each page once, in the crawl's worker pool, for the pipelines after it.

The one owner of "read the page" (200, before every pipeline that reads ``item.html``): it puts on the
item (``PageItem.reading``) a :class:`boilerstrip.reading.page.PageReading`, plain data, with every part
the crawl's settings ask for (:func:`boilerstrip.reading.page.page_plan`): the page's blocks for
``PageBlocksPipeline``, its extraction for ``ExtractionPipeline``, the template model's hashes for
``CrossPageBoilerplatePipeline``. Each of those takes its part from the item and finds no other component.
A static page usually arrives read already: the render decision's worker job reads it with the same plan
and the spider hands the reading on (``READING_META``); this pipeline reads the others (rendered pages,
pages judged while the workers start, a spider of the user's).

The reading runs in the worker pool (``boilerstrip.workers``), off the reactor thread; with 0 workers on
the reactor thread. A page whose worker process died each time it was tried is
``failed:extraction_worker_died``. An item without a ``reading`` field (a plain dict) is left alone: each
pipeline then reads its own part. No setting of its own: it is on while extraction or cross-page removal
is (``NotConfigured`` when neither is).
"""

from __future__ import annotations

from typing import Any

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured

from boilerstrip.reading.page import PagePlan, page_plan, read_page, reading_for, stamped
from boilerstrip.workers.pool import WorkerPool, run_page_job

__all__ = ["PageReadingPipeline"]

STATS = "boilerstrip/reading"


class PageReadingPipeline:
    def __init__(self, plan: PagePlan, stats: Any = None, crawler: Any = None, pool: WorkerPool | None = None) -> None:
        """``plan``: the parts to read; ``pool``: where (else the crawl's own pool, found at ``open_spider``;
        none: on the calling thread)."""
        self.plan = plan
        self.stats = stats
        self.crawler = crawler
        self.pool = pool

    @classmethod
    def from_crawler(cls, crawler: Any) -> "PageReadingPipeline":
        plan = page_plan(crawler.settings)
        if not plan:
            raise NotConfigured("neither extraction nor cross-page removal reads pages")
        return cls(plan, stats=crawler.stats, crawler=crawler)

    def open_spider(self) -> None:
        if self.pool is None and self.crawler is not None:
            self.pool = WorkerPool.of(self.crawler)

    async def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        if "reading" not in adapter.field_names():
            return item  # a plain dict: no field to carry the reading (each pipeline reads its own part)
        html = adapter.get("html")
        if not isinstance(html, str):
            return item  # nothing fetched to read (a stored copy reused, or a page already extracted)
        url = adapter.get("final_url") or adapter.get("url")
        ready = reading_for(adapter.get("reading"), html, url)
        if ready is not None and (ready.plan is self.plan or ready.plan == self.plan):
            self._inc("read_with_render_decision")
            return item
        adapter["reading"] = stamped(await run_page_job(self.pool, read_page, html, url, self.plan), html, url, self.plan)
        self._inc("read")
        return item


    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"{STATS}/{key}")
