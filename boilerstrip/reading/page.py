"""Reading a page for the pipelines, in one job of the worker pool: its blocks (``PageBlocksPipeline``), its
extraction (``ExtractionPipeline``) and the hashes it teaches the template model
(``CrossPageBoilerplatePipeline``).

:func:`read_page` computes every part of a :class:`PagePlan` from the page's HTML and returns a frozen
:class:`PageReading`: plain data that travels on ``response.meta`` (``READING_META``, set by the render
decision's job, which reads a static page in the same job) and on the item (``PageItem.reading``, set by
the spider from that meta, else by ``PageReadingPipeline``, the one pipeline that reads pages). Each part
names the parameters it was computed with (``PageReading.plan``) and the reading names the text it was read
from (``PageReading.source``, :func:`text_stamp`): a pipeline uses a part only when both are its own
(:func:`reading_for`), so a page changed on the way (a pipeline of the user's in between) is read again,
whatever the order of the pipelines. :func:`page_plan` is the plan a crawl's settings ask for: the render
decision's job and ``PageReadingPipeline`` work it out from the same settings, so neither asks the other.

Everything here is pure: a worker process imports this module, not Scrapy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from boilerstrip.boilerplate import BoilerplateParams, blocks_of_record
from boilerstrip.boilerplate.finish import model_hashes
from boilerstrip.boilerplate.page import PageFeatures, PageFeaturesReading
from boilerstrip.config import component_enabled, params_from_settings
from boilerstrip.extraction import ExtractionParams, ExtractionResult, extract

__all__ = ["PagePlan", "PageReading", "read_page", "extracted_blocks", "hashed_fields", "page_plan", "reading_for",
           "stamped", "text_stamp"]


@dataclass(frozen=True)
class PagePlan:
    """The parts of a page's job, each the parameters of the pipeline that wants it (None: not wanted)."""

    #: PageBlocksPipeline: (``BoilerplateParams.source``, ``BoilerplateParams.normalise_digits``)
    features: tuple[str, bool] | None = None
    #: ExtractionPipeline
    extraction: ExtractionParams | None = None
    #: CrossPageBoilerplatePipeline (needs the two parts above)
    hashes: BoilerplateParams | None = None

    def __bool__(self) -> bool:
        return self != _NOTHING


_NOTHING = PagePlan()


@dataclass(frozen=True)
class PageReading:
    """One page read: each part of ``plan`` (None where not asked for, or not computable: no features for an
    empty page, no hashes for a page over the extraction's budget)."""

    features: PageFeatures | None = None
    extraction: ExtractionResult | None = None
    hashes: set[str] | None = None
    #: the parts asked for, with their parameters, and what was read (:func:`text_stamp` of the HTML and
    #: URL): both set in the crawl's process (:func:`stamped`: the parameters do not travel back from a worker)
    plan: PagePlan = _NOTHING
    source: tuple[str | None, int, int] | None = None


def text_stamp(html: str, url: str | None) -> tuple[str | None, int, int]:
    """What names a page's text for the crawl's process: its URL, length and ``hash`` (Python keeps a
    string's hash with the string, so the stamp of a page's text is worked out once). Only compared within
    one process: the hash of a string differs between processes."""
    return url, len(html), hash(html)


def stamped(reading: PageReading, html: str, url: str | None, plan: PagePlan) -> PageReading:
    """``reading`` (``read_page``'s, in a worker) named as the reading of ``html`` at ``url`` with ``plan``."""
    return PageReading(reading.features, reading.extraction, reading.hashes, plan, text_stamp(html, url))


def reading_for(reading: Any, html: Any, url: str | None) -> PageReading | None:
    """``reading`` when it is a :class:`PageReading` of the text ``html`` at ``url``, else None."""
    if not isinstance(reading, PageReading) or not isinstance(html, str) or reading.source is None:
        return None
    return reading if reading.source == text_stamp(html, url) else None


def page_plan(settings: Any) -> PagePlan:
    """The parts of each page a crawl with ``settings`` reads (a Scrapy ``Settings``): the page's blocks when
    cross-page removal is on, its extraction when extraction is on, and the model's hashes when both are."""
    boilerplate = params_from_settings(settings, "boilerplate", BoilerplateParams) \
        if component_enabled(settings, "boilerplate") else None
    extraction = params_from_settings(settings, "extraction", ExtractionParams) \
        if component_enabled(settings, "extraction") else None
    return PagePlan(
        features=(boilerplate.source, boilerplate.normalise_digits) if boilerplate is not None else None,
        extraction=extraction,
        hashes=boilerplate if boilerplate is not None and extraction is not None else None,
    )


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
    """Every part of ``plan`` for one page (one job of the worker pool); :func:`stamped` names it."""
    reading = PageFeaturesReading(html, source=plan.features[0], digits=plan.features[1]) \
        if plan.features is not None and html else None
    result = None
    if plan.extraction is not None:  # its cut of the page's region, when the same, is the features' too
        result = extract(html, url, plan.extraction, segmented=reading.take_region if reading is not None else None)
    features = reading.features() if reading is not None else None
    hashes = None
    if plan.hashes is not None and result is not None and result.reason != "over_budget":
        fields = hashed_fields(features, result, plan.hashes.source)
        hashes = model_hashes(fields, blocks_of_record(fields), plan.hashes)
    return PageReading(features, result, hashes)
