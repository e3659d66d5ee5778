"""The render decision on a page's served HTML, as a job of the crawl's worker pool.

Apart from ``render.py`` so that a worker process, which imports the module of each function it is sent,
does not import Scrapy and scrapy-playwright to judge a page: pure, like what it calls.
"""

from __future__ import annotations

from boilerstrip.extraction import main_text_chars
from boilerstrip.rendering import RenderParams, RenderVerdict, needs_rendering

__all__ = ["judge_static"]


def judge_static(html: str, url: str, params: RenderParams) -> RenderVerdict:
    """The verdict on a page's served HTML, the extractor measuring its main text (module-level and pure:
    the crawl's worker pool runs it)."""
    return needs_rendering(html, url=url, main_text_chars=lambda doc: main_text_chars(doc, url), params=params)
