"""Does a page need a browser? The pure core of boilerstrip's rendering (no Scrapy, Twisted, Playwright).

- :func:`needs_rendering` judges a page's static HTML and returns a :class:`RenderVerdict` with a reason;
- :class:`HostRenderLearner` sends later pages of a mostly-JS host straight to the browser;
- :func:`subrequest_block_reason` keeps the browser's own sub-requests inside the crawl's scope;
- :class:`RenderParams`, :class:`HostLearnParams`, :class:`BrowserParams` hold every threshold.
"""

from boilerstrip.rendering.decide import (
    RENDER_REASONS,
    STATIC_REASONS,
    PageSignals,
    RenderVerdict,
    needs_rendering,
    page_signals,
)
from boilerstrip.rendering.flags import render_flags
from boilerstrip.rendering.learn import HostRenderLearner
from boilerstrip.rendering.params import RENDER_MODES, BrowserParams, HostLearnParams, RenderParams, default_browser_path
from boilerstrip.rendering.scope import origin_key, subrequest_block_reason

__all__ = [
    "needs_rendering",
    "page_signals",
    "RenderVerdict",
    "PageSignals",
    "RENDER_REASONS",
    "STATIC_REASONS",
    "HostRenderLearner",
    "render_flags",
    "subrequest_block_reason",
    "origin_key",
    "RenderParams",
    "HostLearnParams",
    "BrowserParams",
    "RENDER_MODES",
    "default_browser_path",
]
