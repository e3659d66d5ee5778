"""One worker job a page for the pipelines that read its HTML: its blocks (``PageBlocksPipeline``), its
extraction (``ExtractionPipeline``) and the hashes it teaches the template model
(``CrossPageBoilerplatePipeline`` when it only learns).

Each pipeline says at ``open_spider`` which part it wants (:meth:`PageReader.want`); the first one to meet a
page starts a single job that computes every part (:func:`read_page`), the others take their part from it.
The HTML crosses to the worker once and no block comes back to be hashed: three round trips a page were a
large part of the reactor thread's work. A part is used only for the input it was computed from (the same
HTML and URL; for the hashes, the same fields the item holds when the cross-page pipeline meets it), so a
pipeline placed in between that changes the page gets its own job, as before.

:func:`read_page` is pure (a worker process imports this module, not Scrapy); :class:`PageReader` is the
crawl-side memo, one per worker pool (``WorkerPool.companion``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import weakref
from dataclasses import dataclass
from typing import Any

from boilerstrip.boilerplate import BoilerplateParams, blocks_of_record
from boilerstrip.boilerplate.finish import model_hashes
from boilerstrip.boilerplate.page import PageFeatures, page_features
from boilerstrip.extraction import ExtractionParams, ExtractionResult, extract

__all__ = ["PagePlan", "PageReading", "PageReader", "read_page", "extracted_blocks", "hashed_fields"]


@dataclass(frozen=True)
class PagePlan:
    """The parts of a page's job, each the parameters of the pipeline that wants it (None: not wanted)."""

    #: PageBlocksPipeline: (``BoilerplateParams.source``, ``BoilerplateParams.normalise_digits``)
    features: tuple[str, bool] | None = None
    #: ExtractionPipeline
    extraction: ExtractionParams | None = None
    #: CrossPageBoilerplatePipeline, when it learns in the pool (needs the two parts above)
    hashes: BoilerplateParams | None = None


@dataclass(frozen=True)
class PageReading:
    features: PageFeatures | None = None
    extraction: ExtractionResult | None = None
    hashes: set[str] | None = None


def extracted_blocks(result: ExtractionResult) -> list[dict[str, Any]]:
    """The ``blocks`` field ``ExtractionPipeline`` writes for ``result``."""
    return [b.as_dict() for b in result.blocks]


def hashed_fields(features: PageFeatures | None, result: ExtractionResult, source: str) -> dict[str, Any]:
    """The fields ``CrossPageBoilerplatePipeline`` hashes for a page read into ``features`` and ``result``:
    what the item holds after the two pipelines before it (and, with ``source="page"``, after its own
    ``_prepare``: the page's blocks stand for the extracted ones)."""
    blocks: Any = extracted_blocks(result)
    page = features.blocks if features is not None else None
    hashes = features.hashes if features is not None else []
    if source == "page":
        if page:
            blocks = page
        if page is not None:
            page = None
    return {"blocks": blocks, "page_blocks": page, "page_block_hashes": hashes}


def read_page(html: str, url: str | None, plan: PagePlan) -> PageReading:
    """Every part of ``plan`` for one page (one job of the worker pool)."""
    features = None
    if plan.features is not None and html:
        features = page_features(html, source=plan.features[0], digits=plan.features[1])
    result = extract(html, url, plan.extraction) if plan.extraction is not None else None
    hashes = None
    if plan.hashes is not None and result is not None and result.reason != "over_budget":
        fields = hashed_fields(features, result, plan.hashes.source)
        hashes = model_hashes(fields, blocks_of_record(fields), plan.hashes)
    return PageReading(features, result, hashes)


class PageReader:
    """The crawl side: the plan the pipelines asked for, and each page's job while its item lives."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool  # a WorkerPool (``run`` raises its WorkerDied when the page's worker died)
        self.plan = PagePlan()
        #: id(item) -> (the item, weakly; the HTML and URL the job read; its future), dropped with the item
        #: (items are dataclasses: unhashable, so not the keys of a WeakKeyDictionary)
        self._jobs: dict[int, tuple[Any, str, str | None, asyncio.Future]] = {}
        #: id(html) -> (the HTML, its URL, the plan, the reading, a token): readings done before the page's
        #: item existed (the render decision's job, :meth:`prepared`), kept while their response lives
        self._prepared: dict[int, tuple[str, str | None, PagePlan, PageReading, object]] = {}

    def want(self, **parts: Any) -> None:
        """Add parts to the plan (``open_spider``, before the first page)."""
        self.plan = dataclasses.replace(self.plan, **parts)

    def prepared(self, response: Any, html: str, url: str | None, plan: PagePlan, reading: PageReading) -> None:
        """A reading of ``html`` (``response``'s text) done by the render decision's job with ``plan``: the
        page's item, made of the same text, takes it instead of starting a job. Kept while ``response``
        lives (a page dropped before the pipelines leaves nothing behind)."""
        token = object()
        key = id(html)
        self._prepared[key] = (html, url, plan, reading, token)
        weakref.finalize(response, self._forget_prepared, key, token)

    def _forget_prepared(self, key: int, token: object) -> None:
        entry = self._prepared.get(key)
        if entry is not None and entry[4] is token:
            del self._prepared[key]

    def _take_prepared(self, html: str, url: str | None) -> PageReading | None:
        entry = self._prepared.get(id(html))
        if entry is None or entry[0] is not html or entry[1] != url or entry[2] != self.plan:
            return None
        del self._prepared[id(html)]
        return entry[3]

    async def reading(self, item: Any, html: str, url: str | None) -> PageReading | None:
        """The page's reading, from its one job (started here if no pipeline has yet, unless the render
        decision's job read the same text already); None when ``item`` cannot key a job (a plain dict: each
        pipeline then runs its own part)."""
        entry = self._entry(item)
        if entry is None or entry[1] is not html or entry[2] != url:
            try:
                ref = weakref.ref(item)
            except TypeError:
                return None
            ready = self._take_prepared(html, url)
            if ready is not None:
                future: asyncio.Future = asyncio.get_running_loop().create_future()
                future.set_result(ready)
            else:
                future = asyncio.ensure_future(self.pool.run(read_page, html, url, self.plan))
            if entry is None:
                weakref.finalize(item, self._jobs.pop, id(item), None)
            entry = (ref, html, url, future)
            self._jobs[id(item)] = entry
        return await entry[3]

    def done(self, item: Any) -> PageReading | None:
        """The reading of ``item``'s page when its job has finished well, else None (no job is started)."""
        entry = self._entry(item)
        if entry is None:
            return None
        future = entry[3]
        if not future.done() or future.cancelled() or future.exception() is not None:
            return None
        return future.result()

    def _entry(self, item: Any) -> tuple[Any, str, str | None, asyncio.Future] | None:
        entry = self._jobs.get(id(item))
        return entry if entry is not None and entry[0]() is item else None
