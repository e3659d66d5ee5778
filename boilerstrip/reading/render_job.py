"""The render decision on a page's served HTML, as a job of the crawl's worker pool.

Apart from ``render.py`` so that a worker process, which imports the module of each function it is sent,
does not import Scrapy and scrapy-playwright to judge a page: pure, like what it calls.
"""

from __future__ import annotations

from boilerstrip.extraction import main_text_chars
from boilerstrip.reading.page import PagePlan, PageReading, read_page
from boilerstrip.rendering import RenderParams, RenderVerdict, needs_rendering
from boilerstrip.reading.links import PageLinks, read_links
from boilerstrip.urls import UrlParams

__all__ = ["judge_static", "judge_and_read"]

_NOTHING_TO_READ = PagePlan()  # no pipeline reads pages in the pool: the job judges and reads the links


def judge_static(html: str, url: str, params: RenderParams) -> RenderVerdict:
    """The verdict on a page's served HTML, the extractor measuring its main text (module-level and pure:
    the crawl's worker pool runs it)."""
    return needs_rendering(html, url=url, main_text_chars=lambda doc: main_text_chars(doc, url), params=params)


def judge_and_read(html: str, url: str, params: RenderParams, plan: PagePlan, encoding: str | None = None,
                   url_params: UrlParams | None = None) -> tuple[RenderVerdict, PageReading | None, PageLinks | None]:
    """The verdict, and for a page that keeps its served HTML what the crawl reads of it, in the same job:
    the HTML crosses to a worker once a page, and the crawl's process does not parse it. That is its links,
    canonical URL, ``<meta>`` tags and the links' normal forms under ``url_params`` (``read_links``: for the
    spider, the trap filter, the recrawl and opt-out middlewares), and the pipelines' reading (``read_page``,
    for the parts in ``plan``). Both None for a page to be rendered (its rendered HTML is read instead); the
    reading None when ``plan`` asks for nothing or reading failed (the pipelines' own job then meets the
    error and records it)."""
    verdict = judge_static(html, url, params)
    if verdict.needs:
        return verdict, None, None
    links = read_links(html, url, encoding, url_params)
    if plan == _NOTHING_TO_READ:
        return verdict, None, links
    try:
        return verdict, read_page(html, url, plan), links
    except Exception:  # noqa: BLE001 - the pipelines read the page again and record why it failed
        return verdict, None, links
